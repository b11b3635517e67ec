package dev.synapsehub.net;

import dev.synapsehub.client.NetTransport;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.net.auth.ConnectTokenAuth;
import dev.synapsehub.net.auth.MessageAuthenticator;
import dev.synapsehub.net.cockpit.Cockpit;
import dev.synapsehub.net.cockpit.CockpitSources;
import dev.synapsehub.net.handler.AcceptFailureWatch;
import dev.synapsehub.net.handler.CloseCodeGuard;
import dev.synapsehub.net.handler.HostGuard;
import dev.synapsehub.net.handler.HttpRequestHandler;
import dev.synapsehub.net.handler.WebSocketFrameHandler;
import dev.synapsehub.net.protocol.DarkSeatMonitor;
import dev.synapsehub.net.protocol.HistoricalReads;
import dev.synapsehub.net.protocol.HubMetrics;
import dev.synapsehub.net.auth.AuthThrottle;
import dev.synapsehub.net.protocol.HubMetricsText;
import dev.synapsehub.net.protocol.InboundPipeline;
import dev.synapsehub.net.protocol.MetricsSources;
import dev.synapsehub.net.protocol.Outbox;
import dev.synapsehub.net.protocol.OutboxThread;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import dev.synapsehub.net.handler.PendingSockets;
import dev.synapsehub.net.handler.TlsHandshakeWatch;
import dev.synapsehub.net.handler.UpgradeWatch;
import dev.synapsehub.net.tls.ServerCertificate;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.tls.ServerTls;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Netty hub: one port, WebSocket upgrade on any path, HTTP {@code /health} and
 * {@code /metrics}. The composition root hands it a started {@link CoordinationActor}.
 */
public final class HubServer implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HubServer.class);
    private final HubConfig config;
    private final CoordinationActor actor;
    private final Clock clock;
    private NetTransport transport;
    private boolean closed;
    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private OutboxThread outboxThread;
    private Channel serverChannel;
    private Outbox outbox;
    private HubServices services;
    private HistoricalReads history;
    /** The server certificate in force, re-read on change (null without TLS). */
    private ServerCertificate serverCertificate;
    private Cockpit cockpit;
    private volatile InboundPipeline pipeline;
    private DarkSeatMonitor darkSeats;
    /** Every accepted connection, so that close() can say goodbye to each (null before start). */
    private ChannelGroup openSockets;

    private final Journal journal;
    private final HubExtensions extensions;
    private dev.synapsehub.net.relay.RelayLog relayLog;

    /** A hub without a durable journal: no seqs, no mailbox replay, immediate receipts only. */
    public HubServer(HubConfig config, CoordinationActor actor, Clock clock) {
        this(config, actor, clock, null);
    }

    /**
     * A hub whose actor appends to {@code journal} (null: none). The edge reads its history
     * (mailbox replay, ack resolution) through {@link HistoricalReads}: the journal's own reader
     * on a thread of its own, or the actor when the journal has none.
     */
    public HubServer(HubConfig config, CoordinationActor actor, Clock clock, Journal journal) {
        this(config, actor, clock, journal, HubExtensions.none());
    }

    /** A hub with {@code extensions} plugged in (bound at start, closed with the server). */
    public HubServer(HubConfig config, CoordinationActor actor, Clock clock, Journal journal, HubExtensions extensions) {
        this.config = config;
        this.actor = actor;
        this.clock = clock;
        this.journal = journal;
        this.extensions = extensions;
    }

    /**
     * Mirrors what the hub fans out into {@code log} ({@code --relay-log}); call before
     * {@link #start()}. The server closes it.
     */
    public HubServer relayLog(dev.synapsehub.net.relay.RelayLog log) {
        this.relayLog = log;
        return this;
    }

    /**
     * Loads and initializes what {@link #start()} will need (the metrics' histograms, the JSON
     * codec, the socket transport's native library, the HTTP and WebSocket handlers) without
     * binding, starting a thread or reading any state: a composition root calls it on a thread of
     * its own while the state is still being restored, so that the bind, which must wait for the
     * restored state, does not also pay the class loading. Safe from any thread, any number of
     * times; a failure here changes nothing ({@link #start()} meets it again and reports it).
     */
    public static void warmUp(HubConfig config) {
        WireJson json = new WireJson(config.maxJsonDepth());
        new HubFrames(json, config.hubId());
        new HubMetrics();
        NetTransport.choose(config.nativeTransport());
        new ServerBootstrap();
        new HttpServerCodec();
        new HttpObjectAggregator(64 * 1024);
        new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
                .websocketPath("/")
                .decoderConfig(WebSocketDecoderConfig.newBuilder().maxFramePayloadLength(config.maxFrameBytes()).build())
                .build());
        new WebSocketFrameAggregator(config.maxFrameBytes());
        new IdleStateHandler(1, 0, 0, TimeUnit.MILLISECONDS);
    }

    /**
     * Binds and starts serving; returns the bound port (useful with port 0). A step that fails
     * closes what the steps before it started (the certificate watcher, extensions, loops), so a
     * refused start leaves no thread behind.
     */
    public int start() throws InterruptedException {
        try {
            return startAll();
        } catch (Throwable failed) { // Netty's sync() rethrows a bind failure undeclared (BindException)
            try {
                close();
            } catch (RuntimeException alsoFailed) {
                failed.addSuppressed(alsoFailed);
            }
            throw failed;
        }
    }

    private int startAll() throws InterruptedException {
        HubMetrics metrics = new HubMetrics();
        // refuse before any thread starts; afterwards re-read on change, for new connections
        serverCertificate = config.tls() == null ? null : ServerCertificate.watching(config.tls(),
                metrics.tlsCertificateReloads, metrics.tlsCertificateReloadFailures);
        ServerCertificate ssl = serverCertificate;
        WireJson json = new WireJson(config.maxJsonDepth());
        HubFrames frames = new HubFrames(json, config.hubId());
        SessionRegistry registry = new SessionRegistry(config.maxClients(), config.maxConnectionsPerHost(),
                config.maxUnauthClients(), config.secured(), config.leaseOfflineTtlSeconds(),
                new SessionRegistry.TakeoverPolicy(seconds(config.takeoverCooldown()),
                        config.takeoverQuarantineThreshold(), seconds(config.takeoverQuarantineWindow()),
                        seconds(config.takeoverQuarantine())));
        actor.observe(metrics);
        try {
            history = HistoricalReads.open(actor, journal);
        } catch (JournalException e) {
            throw new IllegalStateException("cannot open a reader of the journal: " + e.getMessage(), e);
        }
        // bounded: admission answers busy above outboxBusyTasks, long before this refuses
        outboxThread = new OutboxThread(new DefaultThreadFactory("synapse-outbox", true), config.outboxQueueCapacity(),
                metrics);
        Outbox outbox = new Outbox(outboxThread, frames, config.outboundHighWaterBytes(), config.broadcastLinger(), metrics,
                config.outboxBusyTasks(), config.defaultDelivery(), clock);
        // scoped delivery's view of live claims starts from what a restarted hub holds, read here at
        // start (before anyone can change them; a lazy read left the first scoped declarer loud
        // meanwhile, see ScopedDelivery.seed) and unsorted: the outbox keeps them as they are and
        // sorts and indexes them only once the view is needed (the first scoped connection), so a
        // hub with none never spends that on them. The first /health's count waits behind this read
        actor.read(state -> state.claims().liveAt(clock.nowSeconds()))
                .whenComplete((claims, failed) -> {
                    if (failed == null) {
                        outbox.scoped().seed(claims);
                    } else {
                        metrics.faults.incrementAndGet();
                        LOG.warn("scoped delivery starts without the "
                                + "live claims the hub holds (touching claims are seen once they change): {}",
                                failed.toString());
                    }
                });
        if (relayLog != null) {
            relayLog.countFaultsIn(metrics.faults);
            outbox.mirrorTo(relayLog::record);
        }
        ConnectTokenAuth tokens = new ConnectTokenAuth(config.token());
        // the edge clock (monotonic; a test's manual one), so a back-off passes with it
        AuthThrottle authThrottle = new AuthThrottle(config.authThrottle(), () -> (long) (clock.nowSeconds() * 1e9),
                metrics.authFailuresThrottled);
        MessageAuthenticator messageAuth = new MessageAuthenticator(config.messageAuthKeys(),
                config.requireMessageAuth(), config.messageAuthWindowSeconds(), config.messageAuthFutureSkewSeconds(),
                config.messageAuthReplayCapacity());
        double startedAt = clock.nowSeconds();
        String configEpoch = configEpoch(config);
        boolean journaled = journal != null;
        this.outbox = outbox; // from here on, close() delivers what it still holds
        pipeline = new InboundPipeline(new InboundPipeline.Services(config, actor, clock, json, frames, registry, outbox,
                metrics, tokens, authThrottle, messageAuth, configEpoch, journaled, history,
                extensions));
        services = new HubServices(actor, clock, frames, outbox, registry, metrics, config.hubId());
        extensions.bind(services, pipeline.claimService());
        darkSeats = new DarkSeatMonitor(actor, outbox, registry, frames, metrics, clock,
                config.waiterLivenessWindowSeconds());
        darkSeats.start();
        HubMetricsText metricsText = new HubMetricsText(new MetricsSources(actor, metrics, registry, outbox, json,
                frames.hubId(), config.hubVersion(), config.maxFanoutBacklogBytes(),
                config.maxFanoutDelay().toNanos(), config.maxFanoutWrites(), configEpoch,
                startedAt, journal, extensions::appendMetrics, extensions::degradedReasons,
                extensions::failedReasons));
        if (config.ui()) {
            cockpit = Cockpit.start(new CockpitSources(actor, registry, clock, metrics, tokens, authThrottle, extensions,
                    config.hubId(), config.hubVersion(), config.secured(), startedAt, journaled));
            actor.observe(cockpit.observing(metrics));
            cockpit.seedFeed(); // after the observer: no batch falls between the seq read and the feed
        }
        WebSocketFrameHandler.Shared connections = new WebSocketFrameHandler.Shared(registry, outbox, metrics, pipeline,
                new AtomicLong(), config.defaultDelivery().scoped(), config.authTimeout(), config.slowReaderGrace());
        transport = NetTransport.choose(config.nativeTransport());
        ChannelGroup accepted = new DefaultChannelGroup(
                "synapse-connections", GlobalEventExecutor.INSTANCE);
        // sockets not yet upgraded meet the session caps too (contract §3.2 counts from the connect)
        PendingSockets pendingSockets = PendingSockets.forSessions(config.maxClients(), config.maxConnectionsPerHost());
        openSockets = accepted;
        boss = transport.group(1, "synapse-accept");
        // One loop per core: handlers never block, and under broadcast fan-out every extra
        // runnable loop only adds context switches between the loops sharing a core.
        int ioLoops = config.ioLoops() > 0 ? config.ioLoops() : Runtime.getRuntime().availableProcessors();
        workers = transport.group(ioLoops, "synapse-io");
        int highWater = config.outboundHighWaterBytes();
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(boss, workers)
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .handler(new AcceptFailureWatch(metrics.acceptFailures))
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(highWater / 2, highWater))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        HostGuard guard = new HostGuard(config.host(), boundPort(), config.advertisedHost(),
                                config.allowOrigins());
                        long ping = config.pingInterval().toMillis();
                        accepted.add(ch); // removed by the group itself when the channel closes
                        ChannelPipeline p = ch.pipeline();
                        if (ssl != null) {
                            p.addLast(ssl.context().newHandler(ch.alloc()));
                            p.addLast(new TlsHandshakeWatch(metrics));
                        }
                        p.addLast(new HttpServerCodec());
                        p.addLast(new HttpObjectAggregator(64 * 1024));
                        p.addLast(new UpgradeWatch(pendingSockets, metrics, config.authTimeout()));
                        p.addLast(new HttpRequestHandler(actor, clock, config.metricsEnabled(), config.metricsAuth(),
                                authThrottle, guard, metricsText, metrics, cockpit));
                        p.addLast(CloseCodeGuard.INSTANCE);
                        p.addLast(new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
                                .websocketPath("/")
                                .checkStartsWith(true)
                                .handleCloseFrames(true)
                                .dropPongFrames(false) // pongs must reach the idle handler
                                .handshakeTimeoutMillis(config.authTimeout().toMillis())
                                .decoderConfig(WebSocketDecoderConfig.newBuilder()
                                        .maxFramePayloadLength(config.maxFrameBytes())
                                        .allowExtensions(false)
                                        .withUTF8Validator(false)
                                        .closeOnProtocolViolation(true)
                                        .build())
                                .build()));
                        p.addLast(new WebSocketFrameAggregator(config.maxFrameBytes()));
                        // reader idle for one interval => ping; idle for another => no pong, drop
                        p.addLast(new IdleStateHandler(ping, 0, 0, TimeUnit.MILLISECONDS));
                        p.addLast(new WebSocketFrameHandler(connections));
                    }
                });
        serverChannel = bootstrap.bind(config.host(), config.port()).sync().channel();
        return boundPort();
    }

    /** The listening socket's channel (tests put a failed accept through its pipeline). */
    Channel listeningChannel() {
        return serverChannel;
    }

    /** The bound port. */
    public int boundPort() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    /** The socket transport in use (after {@link #start()}). */
    public NetTransport transport() {
        return transport;
    }

    /** The extensions it was built with (possibly none). */
    public HubExtensions extensions() {
        return extensions;
    }

    /** The configuration it serves with. */
    public HubConfig config() {
        return config;
    }

    /** The services extensions are bound with (after {@link #start()}; null before). */
    public HubServices services() {
        return services;
    }

    /** The historical reads of the journal (after {@link #start()}), for tests that hold them up. */
    HistoricalReads history() {
        return history;
    }

    /**
     * Waits until every I/O loop and then the outbox thread have run what they had been given
     * (a socket's close and the presence it hands on, say), for tests that must not act before.
     */
    void awaitLoopsPassed(java.time.Duration wait) throws Exception {
        for (io.netty.util.concurrent.EventExecutor loop : workers) {
            loop.submit(() -> { }).get(wait.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        }
        outbox.executor().submit(() -> { }).get(wait.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** The verbs' entry points for a replicated hub (after {@link #start()}; null before). */
    public InboundPipeline pipeline() {
        return pipeline;
    }

    /** The dark-seat monitor (§8.7; after {@link #start()}, null before). */
    public DarkSeatMonitor darkSeats() {
        return darkSeats;
    }

    /** Stops accepting, closes connections and stops the threads (the actor is the caller's); once. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        extensions.close();
        if (darkSeats != null) {
            darkSeats.close();
        }
        if (serverChannel != null) {
            serverChannel.close().syncUninterruptibly();
        }
        if (cockpit != null) {
            cockpit.close(); // ends its event streams before the loops stop
        }
        if (outbox != null) {
            outbox.deliverPending(1000); // stopping the loops cancels lingering drains
        }
        closeConnections();
        if (workers != null) {
            workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (boss != null) {
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (history != null) {
            history.close(); // before the outbox: a read finishing now still has a thread to answer on
        }
        if (outboxThread != null) {
            outboxThread.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (relayLog != null) {
            relayLog.close(); // after the outbox: every line it handed over is written
        }
        if (serverCertificate != null) {
            serverCertificate.close();
        }
    }

    /**
     * The close handshake of a stopping hub: every WebSocket is sent close 1001 {@code going away}
     * (the protocol handler closes TCP when the peer answers), and whatever is still open after
     * {@link HubConfig#shutdownCloseTimeout()} is dropped. Without it the loops' shutdown closed
     * every socket with no close frame, and clients saw 1006 rather than a hub going away.
     */
    private void closeConnections() {
        if (openSockets == null || openSockets.isEmpty()) {
            return;
        }
        if (pipeline != null) {
            pipeline.stopping(); // no presence broadcast per departing socket
        }
        for (Channel ch : openSockets) {
            if (ch.pipeline().get(WebSocketFrameEncoder.class) != null) {
                ch.writeAndFlush(new CloseWebSocketFrame(1001, "going away"));
            } else {
                ch.close(); // plain HTTP or a handshake in progress: there is no close frame to send
            }
        }
        long budgetMillis = config.shutdownCloseTimeout().toMillis();
        if (budgetMillis > 0 && !openSockets.newCloseFuture().awaitUninterruptibly(budgetMillis)) {
            LOG.info(
                    "{} connection(s) did not answer the close within {} s; dropping them",
                    openSockets.size(), budgetMillis / 1000.0);
        }
        // bounded too: a TLS peer that does not read holds its close_notify for the handler's own timeout
        if (!openSockets.close().awaitUninterruptibly(3_000)) {
            LOG.info(
                    "{} connection(s) still closing after 3 s; the I/O loops' shutdown ends them", openSockets.size());
        }
    }

    private static double seconds(java.time.Duration d) {
        return d.toNanos() / 1e9;
    }

    private static String configEpoch(HubConfig c) {
        String summary = c.hubVersion() + "|" + c.secured() + "|" + c.maxClients() + "|" + c.maxConnectionsPerHost()
                + "|" + c.maxFrameBytes() + "|" + c.requireMessageAuth() + "|" + c.leaseOfflineTtlSeconds();
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(summary.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d).substring(0, 16);
        } catch (Exception e) {
            return "";
        }
    }
}
