package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import dev.synapsehub.client.HubClient;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The link's own accounting of what the hub never answers: an ack whose write fails. */
class HubLinkTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final Endpoint endpoint = new Endpoint();
    private final HubLink link;

    HubLinkTest() throws Exception {
        link = new HubLink(new McpSettings(endpoint.uri(), "proj/me", null, WAIT, McpSettings.DEFAULT_HEARTBEAT, 10,
                null), new Inbox(10, null));
    }

    @AfterEach
    void close() {
        link.close();
        endpoint.close();
    }

    @Test
    void anAckWrittenIsNotCountedAndOneTheDroppedConnectionCannotTakeIs() throws Exception {
        HubClient client = HubClient.connect(endpoint.uri(), WAIT);
        try {
            link.sendAck(client, 6).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            JsonNode ack = Frames.MAPPER.readTree(endpoint.received.poll(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertThat(ack.path("type").asText()).isEqualTo("ack");
            assertThat(ack.path("seq").asLong()).isEqualTo(6);
            assertThat(link.status()).containsEntry("acks_failed", 0L);

            endpoint.dropConnections(); // the hub goes away
            client.closeFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThatThrownBy(() -> link.sendAck(client, 7).get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class);
            assertThat(link.status()).containsEntry("acks_failed", 1L);
        } finally {
            client.close();
        }
    }

    @Test
    void anAckOnAClientAlreadyClosedIsCountedToo() throws Exception {
        HubClient client = HubClient.connect(endpoint.uri(), WAIT);
        client.close(); // its event loop shuts down too: the failure must still be reported
        client.eventLoop().terminationFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThatThrownBy(() -> link.sendAck(client, 7).get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(java.util.concurrent.RejectedExecutionException.class);
        assertThat(link.status()).containsEntry("acks_failed", 1L);
    }

    /** A loopback WebSocket endpoint that keeps the text frames it receives: no hub, only a socket to write to. */
    private static final class Endpoint implements AutoCloseable {
        final BlockingQueue<String> received = new LinkedBlockingQueue<>();
        private final Set<Channel> connections = ConcurrentHashMap.newKeySet();
        private final EventLoopGroup group = new NioEventLoopGroup(1);
        private final Channel server;

        Endpoint() {
            server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            connections.add(ch);
                            ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 16),
                                    new WebSocketServerProtocolHandler("/"),
                                    new SimpleChannelInboundHandler<TextWebSocketFrame>() {
                                        @Override
                                        protected void channelRead0(ChannelHandlerContext ctx, TextWebSocketFrame f) {
                                            received.add(f.text());
                                        }
                                    });
                        }
                    })
                    .bind("127.0.0.1", 0).syncUninterruptibly().channel();
        }

        URI uri() {
            InetSocketAddress address = (InetSocketAddress) server.localAddress();
            return URI.create("ws://127.0.0.1:" + address.getPort() + "/");
        }

        void dropConnections() {
            for (Channel c : connections) {
                c.close().syncUninterruptibly();
            }
        }

        @Override
        public void close() {
            server.close().syncUninterruptibly();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
