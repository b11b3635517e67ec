package dev.synapsehub.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshaker;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshaker13;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketVersion;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.concurrent.ImmediateEventExecutor;
import dev.synapsehub.client.tls.ClientTls;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * A small blocking WebSocket client speaking wire protocol v2: connect, register, send frames,
 * await a frame by predicate with a timeout, observe the close code. Used by tests, the CLI
 * and the load tool. Never call its blocking methods from a Netty event loop.
 */
public final class HubClient implements AutoCloseable {
    /** The close code and reason the hub sent (or -1 when the TCP connection just dropped). */
    public record CloseStatus(int code, String reason) {
    }

    /** Shared: a mapper is thread-safe once configured, and one per client weighs on a 10,000-client load run. */
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** Netty's logging facade: it writes through SLF4J where the application has it, with no dependency here. */
    private static final io.netty.util.internal.logging.InternalLogger LOG =
            io.netty.util.internal.logging.InternalLoggerFactory.getInstance(HubClient.class);
    private final EventLoopGroup group;
    private final boolean ownsGroup;
    private final Object lock = new Object();
    private final List<ObjectNode> inbox = new ArrayList<>();
    /** The most recent frames kept for {@link #received()}; older ones are forgotten. */
    private static final int HISTORY_LIMIT = 10_000;
    private static final int MAX_FRAME_BYTES = 64 * 1024 * 1024;
    private final ArrayDeque<ObjectNode> everything = new ArrayDeque<>();
    private volatile Consumer<ObjectNode> listener;
    private volatile Consumer<String> textListener;
    private volatile Consumer<ByteBuf> bytesListener;
    private final CompletableFuture<CloseStatus> closed = new CompletableFuture<>();
    private Channel channel;
    private String name;

    private HubClient(EventLoopGroup group, boolean ownsGroup) {
        this.group = group;
        this.ownsGroup = ownsGroup;
    }

    /** Opens a WebSocket to {@code uri} (e.g. {@code ws://127.0.0.1:8876/}); {@code wss://} verifies the CA. */
    public static HubClient connect(URI uri, Duration timeout) throws IOException {
        return connect(uri, timeout, ClientTls.NONE);
    }

    /**
     * Opens a WebSocket to {@code uri}; a {@code wss://} URI is secured as {@code tls} says (a pin,
     * or CA and host-name verification; optionally a client certificate). A pin on a {@code ws://}
     * URI is refused.
     */
    public static HubClient connect(URI uri, Duration timeout, ClientTls tls) throws IOException {
        tls.checkScheme(uri);
        SslContext ssl = ClientTls.secure(uri) ? tls.context(uri) : null;
        HubClient client = new HubClient(NetTransport.choose(true).group(1, "hub-client"), true);
        client.open(uri, timeout, true, ssl);
        return client;
    }

    /**
     * Like {@link #connect(URI, Duration, ClientTls)}; {@code validateUtf8 = false} hands text
     * frames to {@link #onBytes} unchecked (a hub-to-hub link that checks the UTF-8 of every
     * frame itself, faster than the per-byte validator).
     */
    public static HubClient connect(URI uri, Duration timeout, ClientTls tls, boolean validateUtf8) throws IOException {
        return connect(uri, timeout, tls, validateUtf8, null);
    }

    /**
     * Like {@link #connect(URI, Duration, ClientTls, boolean)}, presenting {@code material} (the
     * client certificate and key as already read and checked; null: read {@code tls}'s files).
     */
    public static HubClient connect(URI uri, Duration timeout, ClientTls tls, boolean validateUtf8,
                                    dev.synapsehub.client.tls.ClientKeyMaterial material) throws IOException {
        tls.checkScheme(uri);
        SslContext ssl = ClientTls.secure(uri) ? tls.context(uri, material) : null;
        HubClient client = new HubClient(NetTransport.choose(true).group(1, "hub-client"), true);
        client.open(uri, timeout, validateUtf8, ssl);
        return client;
    }

    /** Opens a WebSocket sharing {@code group} (many clients, one loop group; the caller owns it). */
    public static HubClient connect(URI uri, Duration timeout, EventLoopGroup group) throws IOException {
        return connect(uri, timeout, group, true);
    }

    /**
     * Like {@link #connect(URI, Duration, EventLoopGroup)}; {@code validateUtf8 = false} skips
     * checking every received text frame's UTF-8 (the load tool, whose receivers mostly
     * discard frames, would otherwise spend most of its time there).
     */
    public static HubClient connect(URI uri, Duration timeout, EventLoopGroup group, boolean validateUtf8)
            throws IOException {
        return connect(uri, timeout, group, validateUtf8, null);
    }

    /**
     * Like {@link #connect(URI, Duration, EventLoopGroup, boolean)}, the socket bound to
     * {@code source} (null: any): a load tool holding more connections to one hub than one
     * source address has ephemeral ports (about 28,000 on Linux) spreads them over several
     * loopback addresses.
     */
    public static HubClient connect(URI uri, Duration timeout, EventLoopGroup group, boolean validateUtf8,
            InetAddress source) throws IOException {
        HubClient client = new HubClient(group, false);
        client.open(uri, timeout, validateUtf8, ClientTls.secure(uri) ? ClientTls.NONE.context(uri) : null, source);
        return client;
    }

    private void open(URI uri, Duration timeout, boolean validateUtf8, SslContext ssl) throws IOException {
        open(uri, timeout, validateUtf8, ssl, null);
    }

    private void open(URI uri, Duration timeout, boolean validateUtf8, SslContext ssl, InetAddress source)
            throws IOException {
        int port = uri.getPort() >= 0 ? uri.getPort() : ssl != null ? 443 : 80;
        WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri(uri)
                .version(WebSocketVersion.V13)
                .customHeaders(new DefaultHttpHeaders())
                .maxFramePayloadLength(MAX_FRAME_BYTES)
                .handleCloseFrames(false)
                .dropPongFrames(true)
                .handshakeTimeoutMillis(timeout.toMillis())
                .generateOriginHeader(false)
                .withUTF8Validator(validateUtf8)
                .build();
        WebSocketClientProtocolHandler protocol = validateUtf8 ? new WebSocketClientProtocolHandler(config)
                : new WebSocketClientProtocolHandler(leanHandshaker(uri), config);
        CompletableFuture<Void> handshake = new CompletableFuture<>();
        Bootstrap b = new Bootstrap().group(group).channel(NetTransport.of(group).socketChannel())
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (ssl != null) {
                            ch.pipeline().addLast(ssl.newHandler(ch.alloc(), uri.getHost(), port));
                        }
                        // Frames sent while handling a read (a load agent answering its grants)
                        // go out in one write when the read ends, instead of one each.
                        ch.pipeline().addLast(new FlushConsolidationHandler(64, false));
                        ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(1 << 20), protocol,
                                new WebSocketFrameAggregator(MAX_FRAME_BYTES), new Inbound(handshake));
                    }
                });
        try {
            channel = (source == null ? b.connect(uri.getHost(), port)
                    : b.connect(new InetSocketAddress(uri.getHost(), port), new InetSocketAddress(source, 0)))
                    .sync().channel();
            handshake.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            close();
            throw new IOException("cannot open " + uri + ": " + e, e);
        }
    }

    /** A standard handshake whose frame decoder hands text frames straight to {@link #onBytes}. */
    private WebSocketClientHandshaker leanHandshaker(URI uri) {
        return new WebSocketClientHandshaker13(uri, WebSocketVersion.V13, null, false, new DefaultHttpHeaders(),
                MAX_FRAME_BYTES, true, false, -1) {
            @Override
            protected FullHttpRequest newHandshakeRequest() {
                FullHttpRequest request = super.newHandshakeRequest();
                request.headers().remove(HttpHeaderNames.ORIGIN); // as the standard mode: no Origin
                return request;
            }

            @Override
            protected WebSocketFrameDecoder newWebsocketDecoder() {
                return new LeanFrameDecoder(MAX_FRAME_BYTES, () -> bytesListener);
            }
        };
    }

    /**
     * Sends the registration heartbeat and waits for {@code welcome} (returned). A hub that
     * refuses it (a wrong token: {@code auth_denied}, then close 4010) ends the wait at once: the
     * exception names the close code, and the refusal frame stays in {@link #pending}. An open hub
     * sends {@code welcome} at connect, before it reads the heartbeat (contract §3.7): there this
     * returns before the name is bound, and a refusal of the name (4009, 4013, 4016) comes after
     * it; {@link #registerBound} waits for the binding.
     */
    public ObjectNode register(String agentName, String token, Duration timeout) throws TimeoutException {
        ObjectNode hb = frame(agentName, "heartbeat");
        hb.put("payload", "online");
        if (token != null) {
            hb.put("token", token);
        }
        this.name = agentName;
        send(hb);
        return awaitWhileOpen(f -> "welcome".equals(f.path("type").asText()), timeout);
    }

    /**
     * Sends the registration heartbeat with {@code extra}'s members added (e.g. a scoped
     * delivery declaration, which a hub that does not know it ignores) and waits for {@code welcome}.
     */
    public ObjectNode register(String agentName, String token, ObjectNode extra, Duration timeout)
            throws TimeoutException {
        ObjectNode hb = frame(agentName, "heartbeat");
        hb.put("payload", "online");
        hb.setAll(extra);
        if (token != null) {
            hb.put("token", token);
        }
        this.name = agentName;
        send(hb);
        return awaitWhileOpen(f -> "welcome".equals(f.path("type").asText()), timeout); // as register above
    }

    /**
     * Registers as {@link #register(String, String, ObjectNode, Duration)} does ({@code extra}
     * may be null) and returns {@code welcome} only once the hub has bound the name, on an open
     * hub too, where {@code welcome} precedes the binding: a {@code who_request} follows the
     * heartbeat, and the hub answers it only after the heartbeat bound the name. A hub that
     * refuses the registration (token, name, identity pin, lease, takeover limits) ends the wait
     * at once: the exception names the close code, and the refusal frame stays in {@link #pending}.
     * A busy or rate-limited hub binds the name and refuses the {@code who_request} ({@link
     * #refusedForLoad}): it is sent again after a pause, on the same connection, until the timeout.
     */
    public ObjectNode registerBound(String agentName, String token, ObjectNode extra, Duration timeout)
            throws TimeoutException {
        long deadline = System.nanoTime() + timeout.toNanos();
        ObjectNode hb = frame(agentName, "heartbeat");
        hb.put("payload", "online");
        if (extra != null) {
            hb.setAll(extra);
        }
        if (token != null) {
            hb.put("token", token);
        }
        this.name = agentName;
        send(hb);
        // a hub closing on the heartbeat fails this write: the wait below then names the close
        sendAsync(frame(agentName, "who_request"));
        ObjectNode welcome = awaitWhileOpen(f -> "welcome".equals(f.path("type").asText()), timeout);
        long pause = FIRST_WHO_PAUSE_MS;
        while (true) {
            ObjectNode answer = awaitWhileOpen(f -> "who_snapshot".equals(f.path("type").asText())
                    || refusedForLoad(f), Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            if ("who_snapshot".equals(answer.path("type").asText())) {
                return welcome;
            }
            // a busy or rate-limited hub binds the name and refuses only the query: ask again, on this
            // connection (closing it would abandon the replay the hub deferred for it)
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new TimeoutException("the hub kept refusing who_request (" + answer.path("error_code").asText()
                        + ") within " + timeout);
            }
            try {
                closed.get(Math.min(left, pause * 1_000_000L), TimeUnit.NANOSECONDS); // a close ends the pause
            } catch (TimeoutException paused) {
                // the pause is over
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new TimeoutException("interrupted");
            } catch (java.util.concurrent.ExecutionException impossible) {
                // closed is never completed exceptionally
            }
            pause = Math.min(MAX_WHO_PAUSE_MS, pause * 2);
            sendAsync(frame(agentName, "who_request"));
        }
    }

    /** The first pause before a {@code who_request} refused busy or rate limited is sent again, doubling. */
    private static final long FIRST_WHO_PAUSE_MS = 50;
    private static final long MAX_WHO_PAUSE_MS = 1_000;

    /**
     * An {@code error} a busy or rate-limited hub answers a request with: it changed nothing, and
     * the same request may be sent again later on the same connection.
     */
    public static boolean refusedForLoad(JsonNode f) {
        if (!"error".equals(f.path("type").asText())) {
            return false;
        }
        String code = f.path("error_code").asText("");
        return "busy".equals(code) || "rate_limited".equals(code);
    }

    /** A fresh frame from {@code sender} of {@code type} with {@code target: "System"}. */
    public ObjectNode frame(String sender, String type) {
        return requestFrame(sender, type);
    }

    /** A fresh request frame (no connection needed): sender, {@code target: "System"}, type, empty payload, send time. */
    public static ObjectNode requestFrame(String sender, String type) {
        ObjectNode f = MAPPER.createObjectNode();
        f.put("sender", sender);
        f.put("target", "System");
        f.put("type", type);
        f.put("payload", "");
        f.put("timestamp", System.currentTimeMillis() / 1000.0);
        return f;
    }

    /** A fresh frame from the registered name. */
    public ObjectNode frame(String type) {
        return frame(name, type);
    }

    /** Sends a frame as text. */
    public void send(JsonNode frame) {
        sendText(frame.toString());
    }

    /** Sends raw text (may be malformed on purpose). */
    public void sendText(String text) {
        channel.writeAndFlush(new TextWebSocketFrame(text)).syncUninterruptibly();
    }

    /** Sends raw bytes as a text frame, unvalidated (hostile-input tests). */
    public void channelWriteText(byte[] bytes) {
        channel.writeAndFlush(new TextWebSocketFrame(Unpooled.wrappedBuffer(bytes))).syncUninterruptibly();
    }

    /** Sends raw bytes as a binary frame. */
    public void sendBinary(byte[] bytes) {
        channel.writeAndFlush(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(bytes))).syncUninterruptibly();
    }

    /** Waits for, removes and returns the first received frame matching {@code predicate}. */
    public ObjectNode await(Predicate<ObjectNode> predicate, Duration timeout) throws TimeoutException {
        return await(predicate, timeout, false);
    }

    /**
     * Like {@link #await}, but gives up as soon as the connection has closed with no matching
     * frame left: the exception then names the hub's close code and reason.
     */
    public ObjectNode awaitWhileOpen(Predicate<ObjectNode> predicate, Duration timeout) throws TimeoutException {
        return await(predicate, timeout, true);
    }

    private ObjectNode await(Predicate<ObjectNode> predicate, Duration timeout, boolean stopOnClose)
            throws TimeoutException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            while (true) {
                for (Iterator<ObjectNode> it = inbox.iterator(); it.hasNext(); ) {
                    ObjectNode f = it.next();
                    if (predicate.test(f)) {
                        it.remove();
                        return f;
                    }
                }
                if (stopOnClose && closed.isDone()) {
                    CloseStatus status = closed.getNow(null);
                    throw new TimeoutException("connection closed (" + status.code() + " " + status.reason() + ")");
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new TimeoutException("no matching frame within " + timeout + "; inbox: " + inbox);
                }
                try {
                    lock.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new TimeoutException("interrupted");
                }
            }
        }
    }

    /** Waits for a frame of {@code type}. */
    public ObjectNode awaitType(String type, Duration timeout) throws TimeoutException {
        return await(f -> type.equals(f.path("type").asText()), timeout);
    }

    /**
     * Hands every frame received from now on to {@code frameListener}, on this connection's
     * event loop, instead of queueing it for {@link #await}: the load tool's non-blocking mode.
     * The listener must not block; use {@link #sendAsync} from it.
     */
    public void onFrame(Consumer<ObjectNode> frameListener) {
        synchronized (lock) { // channelRead0 reads it under the lock: a frame is queued or handed on, not both
            this.listener = frameListener;
        }
        this.textListener = null;
        this.bytesListener = null;
    }

    /**
     * Like {@link #onFrame}, but the frames received before and not yet consumed by {@link #await}
     * are handed to {@code frameListener} first, in the order received, and dropped from
     * {@link #pending} and {@link #received}: no frame is lost or handed on twice in the swap.
     * The swap runs on this connection's event loop (later frames are read there too, so they
     * follow the queued ones); it may still be under way when this returns.
     */
    public void onFrameAfterQueued(Consumer<ObjectNode> frameListener) {
        this.textListener = null;
        this.bytesListener = null;
        Runnable swap = () -> {
            List<ObjectNode> queued;
            synchronized (lock) {
                queued = new ArrayList<>(inbox);
                inbox.clear();
                everything.clear();
                listener = frameListener;
            }
            queued.forEach(frameListener);
        };
        try {
            channel.eventLoop().execute(swap);
        } catch (java.util.concurrent.RejectedExecutionException loopStopped) {
            swap.run(); // nothing more is read: no later frame to order against
        }
    }

    /**
     * Hands the raw text of every frame received from now on to {@code rawListener}, on this
     * connection's event loop, without parsing it (the load tool's cheapest mode: idle
     * connections and fan-out receivers). Replaces any {@link #onFrame} listener; must not block.
     */
    public void onText(Consumer<String> rawListener) {
        this.textListener = rawListener;
        this.bytesListener = null;
    }

    /**
     * Hands the undecoded content of every text frame received from now on to
     * {@code bytesListener}, on this connection's event loop; the buffer is valid only during
     * the call. The cheapest mode, for receivers that filter frames before decoding any.
     * Replaces any {@link #onText} or {@link #onFrame} listener; must not block.
     */
    public void onBytes(Consumer<ByteBuf> rawBytesListener) {
        this.bytesListener = rawBytesListener;
    }

    /** Completes with the hub's close code and reason (or -1) when the connection ends. */
    public CompletableFuture<CloseStatus> closeFuture() {
        return closed.thenApply(s -> s);
    }

    /**
     * The server's certificate chain as this connection's TLS handshake presented it, leaf first;
     * empty over plain {@code ws://} (or before the handshake).
     */
    public java.util.List<java.security.cert.X509Certificate> serverCertificates() {
        io.netty.handler.ssl.SslHandler ssl = channel.pipeline().get(io.netty.handler.ssl.SslHandler.class);
        if (ssl == null) {
            return java.util.List.of();
        }
        try {
            java.util.List<java.security.cert.X509Certificate> out = new java.util.ArrayList<>();
            for (java.security.cert.Certificate c : ssl.engine().getSession().getPeerCertificates()) {
                if (c instanceof java.security.cert.X509Certificate x) {
                    out.add(x);
                }
            }
            return out;
        } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
            return java.util.List.of();
        }
    }

    /** This connection's event loop (for scheduling from the load tool). */
    public io.netty.channel.EventLoop eventLoop() {
        return channel.eventLoop();
    }

    /** Sends a frame without waiting for the write (safe from the event loop). */
    public void sendAsync(JsonNode frame) {
        channel.writeAndFlush(new TextWebSocketFrame(frame.toString()));
    }

    /**
     * Like {@link #sendAsync}, for a caller that must know when a write fails: completes once the
     * frame is written, or exceptionally with the reason it was not (a connection closed or lost),
     * on the thread that ended the write (usually the event loop: what depends on it must not block).
     */
    public CompletableFuture<Void> sendAsyncWithResult(JsonNode frame) {
        CompletableFuture<Void> written = new CompletableFuture<>();
        // not the channel's own promise: once a closed client's loop has shut down it would never notify
        ChannelPromise promise = new DefaultChannelPromise(channel, ImmediateEventExecutor.INSTANCE);
        promise.addListener(f -> {
            if (f.isSuccess()) {
                written.complete(null);
            } else {
                written.completeExceptionally(f.cause());
            }
        });
        channel.writeAndFlush(new TextWebSocketFrame(frame.toString()), promise);
        return written;
    }

    /** Runs {@code task} on this connection's event loop. */
    public void execute(Runnable task) {
        channel.eventLoop().execute(task);
    }

    /** Frames received and not yet consumed by {@link #await}. */
    public List<ObjectNode> pending() {
        synchronized (lock) {
            return new ArrayList<>(inbox);
        }
    }

    /** The frames received so far (since the last {@link #clearPending}), in order, the most recent 10,000 at most. */
    public List<ObjectNode> received() {
        synchronized (lock) {
            return new ArrayList<>(everything);
        }
    }

    /**
     * Drops frames not yet consumed, and the history {@link #received} returns (a welcome on a
     * busy hub lists every online agent: ten thousand idle load-tool connections kept theirs).
     */
    public void clearPending() {
        synchronized (lock) {
            inbox.clear();
            everything.clear();
        }
    }

    /** Waits for the connection to close; returns the hub's close code and reason. */
    public CloseStatus awaitClose(Duration timeout) throws TimeoutException {
        try {
            return closed.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** True while the connection is open. */
    public boolean isOpen() {
        return channel != null && channel.isActive();
    }

    /** Stops reading from the socket (to simulate a client that stops reading). */
    public void pauseReading() {
        // On the channel's loop: from another thread the epoll transport keeps reading while a
        // read is pending, and a peer that should stay deaf would still answer the next ping.
        channel.eventLoop().submit(() -> channel.config().setAutoRead(false)).syncUninterruptibly();
    }

    /** The registered name. */
    public String name() {
        return name;
    }

    @Override
    public void close() {
        if (channel != null && channel.isActive()) {
            channel.writeAndFlush(new CloseWebSocketFrame(1000, "")).awaitUninterruptibly(1, TimeUnit.SECONDS);
            channel.close().awaitUninterruptibly(1, TimeUnit.SECONDS);
        }
        if (ownsGroup) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    private final class Inbound extends SimpleChannelInboundHandler<WebSocketFrame> {
        private final CompletableFuture<Void> handshake;
        /** On the event loop only. */
        private boolean failureLogged;

        Inbound(CompletableFuture<Void> handshake) {
            this.handshake = handshake;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                handshake.complete(null);
            } else if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_TIMEOUT) {
                handshake.completeExceptionally(new TimeoutException("handshake timeout"));
            } else if (evt instanceof SslHandshakeCompletionEvent tls && !tls.isSuccess()) {
                handshake.completeExceptionally(TlsRefusal.named(tls.cause())); // a pin or CA refusal, named at once
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) throws Exception {
            if (frame instanceof TextWebSocketFrame text) {
                Consumer<ByteBuf> bytes = bytesListener;
                if (bytes != null) {
                    bytes.accept(text.content());
                    return;
                }
                Consumer<String> raw = textListener;
                if (raw != null) {
                    raw.accept(text.text());
                    return;
                }
                JsonNode node = MAPPER.readTree(text.text());
                if (node instanceof ObjectNode object) {
                    Consumer<ObjectNode> l;
                    synchronized (lock) { // with the swap of the listener: queued, or handed on, never lost between
                        l = listener;
                        if (l == null) {
                            inbox.add(object);
                            everything.add(object);
                            if (everything.size() > HISTORY_LIMIT) {
                                everything.removeFirst();
                            }
                            lock.notifyAll();
                        }
                    }
                    if (l != null) {
                        l.accept(object); // outside the lock: the listener may take locks of its own
                    }
                }
            } else if (frame instanceof CloseWebSocketFrame close) {
                closed.complete(new CloseStatus(close.statusCode(), close.reasonText()));
                ctx.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            closed.complete(new CloseStatus(-1, "connection dropped"));
            handshake.completeExceptionally(new IOException("closed before handshake"));
            synchronized (lock) {
                lock.notifyAll();
            }
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (!failureLogged) { // once: a broken connection may raise the same failure for every read after
                failureLogged = true;
                LOG.warn("connection to {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
            }
            handshake.completeExceptionally(TlsRefusal.named(cause));
            ctx.close();
        }
    }
}
