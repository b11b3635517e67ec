package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;

import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A loopback WebSocket endpoint that plays a hub from a script: it sends {@code welcome} at
 * connect, answers {@code who_request} and the fence ({@code resume_request}, its {@code since}
 * echoed) as a hub does, and every other frame as the test's script says, each answer after its
 * own delay. It keeps the text frames it receives.
 */
final class FakeHub implements AutoCloseable {
    /** One frame to send, {@code delayMillis} after the frame it answers was read. */
    record Answer(ObjectNode frame, long delayMillis) {
    }

    final BlockingQueue<JsonNode> received = new LinkedBlockingQueue<>();
    final AtomicInteger connections = new AtomicInteger();
    private final Set<Channel> open = ConcurrentHashMap.newKeySet();
    private final EventLoopGroup group = new NioEventLoopGroup(1);
    private final Channel server;
    private volatile String hubId = "hub-a";
    private volatile Function<JsonNode, List<Answer>> script = f -> List.of();
    /** Answers a frame the script does not: who_request and fences, as a hub would. */
    private volatile Function<JsonNode, List<Answer>> reads = FakeHub::hubReads;
    /** A close to send instead of anything else once the registration heartbeat is read, or null. */
    private volatile int refuseWith;
    private volatile String refuseReason;

    FakeHub() {
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        open.add(ch);
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 16),
                                new WebSocketServerProtocolHandler("/"),
                                new SimpleChannelInboundHandler<TextWebSocketFrame>() {
                                    @Override
                                    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
                                            connections.incrementAndGet();
                                            ObjectNode welcome = frame("welcome");
                                            welcome.put("protocol_version", 2);
                                            welcome.put("hub_id", hubId);
                                            ctx.writeAndFlush(new TextWebSocketFrame(welcome.toString()));
                                        }
                                        ctx.fireUserEventTriggered(evt);
                                    }

                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, TextWebSocketFrame f)
                                            throws Exception {
                                        JsonNode in = Frames.MAPPER.readTree(f.text());
                                        received.add(in);
                                        String type = in.path("type").asText();
                                        if ("heartbeat".equals(type) && refuseWith != 0) {
                                            ctx.writeAndFlush(new CloseWebSocketFrame(refuseWith, refuseReason));
                                            return;
                                        }
                                        List<Answer> answers = new ArrayList<>(script.apply(in));
                                        if (answers.isEmpty()) {
                                            answers.addAll(reads.apply(in));
                                        }
                                        for (Answer a : answers) {
                                            String text = a.frame().toString();
                                            if (a.delayMillis() <= 0) {
                                                ctx.writeAndFlush(new TextWebSocketFrame(text));
                                            } else {
                                                ctx.executor().schedule(() -> ctx.writeAndFlush(
                                                        new TextWebSocketFrame(text)), a.delayMillis(),
                                                        TimeUnit.MILLISECONDS);
                                            }
                                        }
                                    }
                                });
                    }
                })
                .bind("127.0.0.1", 0).syncUninterruptibly().channel();
    }

    /** How the hub answers frames other than who_request and fences (those too, when it returns any). */
    FakeHub script(Function<JsonNode, List<Answer>> s) {
        this.script = s;
        return this;
    }

    /** Refuses every registration with a close {@code code} and {@code reason}. */
    FakeHub refuse(int code, String reason) {
        this.refuseReason = reason;
        this.refuseWith = code;
        return this;
    }

    /** The {@code hub_id} the welcome of later connections carries. */
    FakeHub hubId(String id) {
        this.hubId = id;
        return this;
    }

    URI uri() {
        InetSocketAddress address = (InetSocketAddress) server.localAddress();
        return URI.create("ws://127.0.0.1:" + address.getPort() + "/");
    }

    /** The next frame received of {@code type}, skipping others; fails after 10 s. */
    JsonNode next(String type) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            JsonNode f = received.poll(100, TimeUnit.MILLISECONDS);
            if (f != null && type.equals(f.path("type").asText())) {
                return f;
            }
        }
        throw new AssertionError("no " + type + " frame received");
    }

    void dropConnections() {
        for (Channel c : open) {
            c.close().syncUninterruptibly();
        }
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        dropConnections();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    static ObjectNode frame(String type) {
        ObjectNode f = Frames.MAPPER.createObjectNode();
        f.put("sender", "SynapseHub");
        f.put("target", "proj/me");
        f.put("type", type);
        f.put("payload", "");
        f.put("hub_id", "hub-a");
        return f;
    }

    static Answer now(ObjectNode f) {
        return new Answer(f, 0);
    }

    static Answer after(long millis, ObjectNode f) {
        return new Answer(f, millis);
    }

    static ObjectNode error(String code) {
        ObjectNode e = frame("error");
        e.put("payload", "refused: " + code);
        e.put("error_code", code);
        return e;
    }

    private static List<Answer> hubReads(JsonNode in) {
        return switch (in.path("type").asText()) {
            case "who_request" -> List.of(now(frame("who_snapshot")));
            case "resume_request" -> {
                ObjectNode r = frame("resume_snapshot");
                r.put("since", in.path("since").longValue());
                r.putArray("messages");
                yield List.of(now(r));
            }
            default -> List.of();
        };
    }
}
