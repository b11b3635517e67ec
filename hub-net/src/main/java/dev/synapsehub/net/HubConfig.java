package dev.synapsehub.net;

import dev.synapsehub.core.SpecConstants;
import dev.synapsehub.net.auth.AuthThrottleSettings;
import dev.synapsehub.net.auth.MetricsAuth;
import dev.synapsehub.net.auth.ReplayCache;
import dev.synapsehub.net.delivery.Delivery;
import dev.synapsehub.net.identity.IdentityPinSettings;
import dev.synapsehub.net.tls.TlsFiles;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

/**
 * Everything the network edge needs to know, validated once (contract §3, §4.4, §9, §10).
 *
 * @param token connect token, or null for an open hub
 * @param maxConnectionsPerHost 0 disables the per-host cap
 * @param outboundHighWaterBytes per-connection outbound buffer; a client that stays above it
 *        for {@code slowReaderGrace} (or reaches twice it) is disconnected
 * @param leaseOfflineTtlSeconds how long a name lease outlives its holder's disconnect
 * @param ratePerSecond per-connection frame rate for non-heartbeat frames; 0 disables
 * @param hostRatePerSecond per-remote-host frame rate, every frame of every socket of the host
 *        ({@code --host-rate}, contract §4.3 step 3); 0 disables
 * @param pingInterval server WebSocket ping interval; the peer must answer within the same time
 * @param privateDirectedMessages {@code --private-directed-messages}: directed chats go only to the
 *        directed-private audience (contract §4.7, §8.8), and history/resume show them only to their
 *        sender and recipients (behaviour notes, decision 4)
 * @param takeoverCooldown a takeover of a name within this time of its previous takeover is refused
 *        (close 4014 {@code takeover cooldown}); zero disables
 * @param takeoverQuarantineThreshold this many takeovers of one name within
 *        {@code takeoverQuarantineWindow} pin the name to its holder (4014 {@code takeover quarantine})
 * @param takeoverQuarantine how long such a name stays pinned
 * @param presenceFanoutLimit above this many open sockets, joins and leaves are no longer
 *        broadcast as {@code presence_update} (each one costs a frame listing every online agent
 *        to every socket, quadratic in the fleet); clients poll {@code who_request}. 0 = always
 * @param broadcastLinger how long a broadcast waits before going to sockets other than its
 *        requester's, so that broadcasts close together share one write per socket (at most 1 s)
 * @param nativeTransport use Linux's native epoll transport where it loads (else Java NIO)
 * @param ioLoops the I/O loops (threads) that serve the connections; 0 (the default): one per core
 *        (embedders and tests; not an operator flag)
 * @param maxFanoutBacklogBytes while more broadcast bytes than this wait on the I/O loops for
 *        their sockets, the hub answers new mutating requests {@code busy} instead of letting
 *        the backlog grow without bound
 * @param maxFanoutDelay while the oldest broadcast still waiting on an I/O loop for one of its
 *        sockets was published longer ago than this, the hub answers new requests {@code busy}:
 *        the bytes bound counts a batch once, but each batch costs one write per socket, so a
 *        flat-out requester could put every other agent's copy seconds behind while the bytes
 *        stayed small. More than {@link #broadcastLinger()} (every batch waits that long by design)
 * @param maxFanoutWrites while an I/O loop owes its sockets more writes than this for the
 *        broadcasts waiting there (each batch once per socket it is for), the hub answers new
 *        requests {@code busy}: the delay bound trips only once a batch is old, by when a flat-out
 *        requester has piled up seconds of writes; this one stops it before
 * @param outboxBusyTasks while more continuations than this wait for the outbox thread (which
 *        publishes every reply and broadcast), new requests are answered {@code busy}; its queue
 *        refuses work beyond {@link #outboxQueueCapacity()} (not an operator flag)
 * @param tls native TLS on the hub port ({@code wss://}), or null for plain {@code ws://}
 * @param ui serve the read-only operator cockpit at {@code /ui} ({@code --ui})
 * @param defaultDelivery the claim-traffic delivery of agents that declare none
 *        ({@code --default-delivery}; broadcast, the wire contract's, unless set)
 * @param identityPins identity pinning and its reclaim grants (contract A2); off by default
 * @param maxFindingsPerAgent {@code --max-findings-per-agent}: admitted {@code finding}s per bound
 *        name (contract A12 PM5); below 1 is 1
 * @param warnStaleRecipients {@code --warn-stale-recipients} (contract §8.6): a directed chat
 *        counts only consume-live recipients and warns its sender; false restores socket-presence
 *        semantics (every bound recipient counts, no {@code recipient_liveness_warning}, no
 *        {@code agent_liveness} in {@code who_snapshot})
 * @param recipientLivenessWindowSeconds {@code --recipient-liveness-window}: a recipient whose last
 *        reaction is older than this is stale (§8.6); positive and finite
 * @param waiterLivenessWindowSeconds {@code --waiter-liveness-window}: an {@code -rx} /
 *        {@code -pane-rx} seen within this is a live waiter (§8.6, §8.7); positive and finite
 * @param metricsAuth who may read {@code /health} and {@code /metrics} ({@code --metrics-token},
 *        contract §10); null is {@link MetricsAuth#OPEN}
 * @param shutdownCloseTimeout {@code --shutdown-close-timeout}: at {@link HubServer#close()} the
 *        connections are sent close 1001 {@code going away}, and those whose peer has not answered
 *        within this time are dropped; zero drops them at once (contract §13); null is
 *        {@link #DEFAULT_SHUTDOWN_CLOSE_TIMEOUT}
 * @param authThrottle the throttle of failed authentication attempts per remote host
 *        ({@code --auth-fail-limit} and its companions); null is {@link AuthThrottleSettings#DEFAULTS}
 */
public record HubConfig(
        String host,
        int port,
        String token,
        int maxClients,
        int maxConnectionsPerHost,
        int maxUnauthClients,
        Duration authTimeout,
        int maxFrameBytes,
        int maxJsonDepth,
        int outboundHighWaterBytes,
        Duration slowReaderGrace,
        double leaseOfflineTtlSeconds,
        List<MessageAuthKey> messageAuthKeys,
        boolean requireMessageAuth,
        int messageAuthReplayCapacity,
        double messageAuthWindowSeconds,
        double messageAuthFutureSkewSeconds,
        boolean metricsEnabled,
        String hubId,
        String hubVersion,
        double ratePerSecond,
        int rateBurst,
        double hostRatePerSecond,
        int hostRateBurst,
        Duration pingInterval,
        String advertisedHost,
        List<String> allowOrigins,
        boolean privateDirectedMessages,
        Duration takeoverCooldown,
        int takeoverQuarantineThreshold,
        Duration takeoverQuarantineWindow,
        Duration takeoverQuarantine,
        int presenceFanoutLimit,
        Duration broadcastLinger,
        boolean nativeTransport,
        int ioLoops,
        long maxFanoutBacklogBytes,
        Duration maxFanoutDelay,
        long maxFanoutWrites,
        int outboxBusyTasks,
        TlsFiles tls,
        boolean ui,
        Delivery defaultDelivery,
        IdentityPinSettings identityPins,
        int maxFindingsPerAgent,
        boolean warnStaleRecipients,
        double recipientLivenessWindowSeconds,
        double waiterLivenessWindowSeconds,
        MetricsAuth metricsAuth,
        Duration shutdownCloseTimeout,
        AuthThrottleSettings authThrottle) {

    /**
     * Every component as a record prints them, but the connect token as {@code (set)}: a log line
     * or an exception message that shows the configuration must not carry the secret.
     */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder("HubConfig[");
        java.lang.reflect.RecordComponent[] components = HubConfig.class.getRecordComponents();
        for (int i = 0; i < components.length; i++) {
            String name = components[i].getName();
            Object value;
            try {
                value = components[i].getAccessor().invoke(this);
            } catch (ReflectiveOperationException e) {
                value = "?";
            }
            if (name.equals("token")) {
                value = value == null ? null : "(set)";
            }
            out.append(i == 0 ? "" : ", ").append(name).append('=').append(value);
        }
        return out.append(']').toString();
    }

    /**
     * {@link #maxFanoutDelay()}'s default: twice the oldest wait sampled in the paced
     * 10,000-agent runs at a load of 8-13 (at most 2.2 s); the writes bound is what stops a
     * flat-out producer (docs/benchmarks.md, "admission by fan-out delay").
     */
    public static final Duration DEFAULT_MAX_FANOUT_DELAY = Duration.ofMillis(5000);

    /**
     * {@link #maxFanoutWrites()}'s default: about a second of one loop's writes at the 0.9-1.7 µs
     * per socket write measured at 10,000 agents, twice the most the paced runs were sampled
     * owing (490,196; docs/benchmarks.md, "admission by fan-out delay").
     */
    public static final long DEFAULT_MAX_FANOUT_WRITES = 1_000_000;

    /** {@link #shutdownCloseTimeout()}'s default, the contract's (§13). */
    public static final Duration DEFAULT_SHUTDOWN_CLOSE_TIMEOUT = Duration.ofSeconds(5);

    public HubConfig {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        token = token == null || token.isEmpty() ? null : token;
        metricsAuth = metricsAuth == null ? MetricsAuth.OPEN : metricsAuth;
        authThrottle = authThrottle == null ? AuthThrottleSettings.DEFAULTS : authThrottle;
        // out of range is refused, not raised to the nearest value: -32 per host meant a cap, not 0 (off)
        atLeast("max clients", maxClients, 1);
        atLeast("max connections per host (0: no cap)", maxConnectionsPerHost, 0);
        atLeast("max unauthenticated clients (0: max clients)", maxUnauthClients, 0);
        maxUnauthClients = maxUnauthClients == 0 ? maxClients : maxUnauthClients;
        maxFrameBytes = Math.max(1024, maxFrameBytes);
        maxJsonDepth = Math.max(1, maxJsonDepth);
        outboundHighWaterBytes = Math.max(8 * 1024, outboundHighWaterBytes);
        maxFindingsPerAgent = Math.max(1, maxFindingsPerAgent); // 0 and -5 behave as 1 (PM5)
        leaseOfflineTtlSeconds = Math.max(0, leaseOfflineTtlSeconds);
        messageAuthKeys = List.copyOf(messageAuthKeys);
        atLeast("message-auth replay capacity", messageAuthReplayCapacity, 1);
        hubId = hubId == null || hubId.isBlank() ? randomHubId() : hubId;
        allowOrigins = List.copyOf(allowOrigins);
        atLeast("presence fan-out limit (0: always broadcast)", presenceFanoutLimit, 0);
        if (authTimeout == null || authTimeout.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException("auth timeout must be at least 1 ms: " + authTimeout);
        }
        takeoverCooldown = nonNegative(takeoverCooldown);
        takeoverQuarantineThreshold = Math.max(1, takeoverQuarantineThreshold);
        takeoverQuarantineWindow = nonNegative(takeoverQuarantineWindow);
        takeoverQuarantine = nonNegative(takeoverQuarantine);
        if (broadcastLinger == null || broadcastLinger.isNegative() || broadcastLinger.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new IllegalArgumentException("broadcast linger must be within 0..1 s: " + broadcastLinger);
        }
        if (maxFanoutBacklogBytes < 1) {
            throw new IllegalArgumentException("fan-out backlog limit must be positive: " + maxFanoutBacklogBytes);
        }
        if (maxFanoutDelay == null || maxFanoutDelay.compareTo(broadcastLinger) <= 0
                || maxFanoutDelay.compareTo(Duration.ofHours(1)) > 0) {
            throw new IllegalArgumentException("fan-out delay limit must be longer than the broadcast linger ("
                    + broadcastLinger.toMillis() + " ms) and at most 1 h: " + maxFanoutDelay);
        }
        if (ioLoops < 0) {
            throw new IllegalArgumentException("I/O loops must be 0 (one per core) or more: " + ioLoops);
        }
        if (maxFanoutWrites < 1) {
            throw new IllegalArgumentException("fan-out writes limit must be positive: " + maxFanoutWrites);
        }
        defaultDelivery = defaultDelivery == null ? Delivery.EVERYTHING : defaultDelivery;
        if (outboxBusyTasks < 1) {
            throw new IllegalArgumentException("outbox busy threshold must be positive: " + outboxBusyTasks);
        }
        identityPins = identityPins == null ? IdentityPinSettings.OFF : identityPins;
        shutdownCloseTimeout = shutdownCloseTimeout == null ? DEFAULT_SHUTDOWN_CLOSE_TIMEOUT : shutdownCloseTimeout;
        if (shutdownCloseTimeout.isNegative()) {
            throw new IllegalArgumentException("shutdown close timeout must be >= 0: " + shutdownCloseTimeout);
        }
        positiveWindow("recipient liveness window", recipientLivenessWindowSeconds);
        positiveWindow("waiter liveness window", waiterLivenessWindowSeconds);
        if (!(ratePerSecond >= 0) || !Double.isFinite(ratePerSecond) || rateBurst < 1) {
            // a burst of 0 answers every frame rate_limited, for good
            throw new IllegalArgumentException("rate must be >= 0 and its burst >= 1: " + ratePerSecond
                    + " burst " + rateBurst);
        }
        if (!(hostRatePerSecond >= 0) || !Double.isFinite(hostRatePerSecond) || hostRateBurst < 1) {
            throw new IllegalArgumentException("host rate must be >= 0 and its burst >= 1: " + hostRatePerSecond
                    + " burst " + hostRateBurst);
        }
    }

    /** Default {@link #recipientLivenessWindowSeconds()} (contract §8.6, §13). */
    public static final double DEFAULT_RECIPIENT_LIVENESS_WINDOW = 90.0;

    /** Default {@link #waiterLivenessWindowSeconds()} (contract §8.6, §13). */
    public static final double DEFAULT_WAITER_LIVENESS_WINDOW = 20.0;

    private static void atLeast(String what, long value, long min) {
        if (value < min) {
            throw new IllegalArgumentException(what + " must be at least " + min + ": " + value);
        }
    }

    private static void positiveWindow(String what, double seconds) {
        // NaN or infinity would make every recipient live (or none) without saying so
        if (!(seconds > 0) || Double.isInfinite(seconds)) {
            throw new IllegalArgumentException(what + " must be a positive finite number of seconds: " + seconds);
        }
    }

    /**
     * The outbox thread's queue bound: the busy threshold plus room for what is already past
     * admission when it trips (the actor's queue and one batch, at their defaults).
     */
    public int outboxQueueCapacity() {
        return outboxBusyTasks + 128 * 1024;
    }

    private static Duration nonNegative(Duration d) {
        return d == null || d.isNegative() ? Duration.ZERO : d;
    }

    /** The URI scheme clients use: {@code wss} with native TLS, else {@code ws}. */
    public String scheme() {
        return tls == null ? "ws" : "wss";
    }

    /** True when a connect token is configured. */
    public boolean secured() {
        return token != null;
    }

    /** {@code syn-} + 8 lowercase hex characters. */
    public static String randomHubId() {
        byte[] b = new byte[4];
        new SecureRandom().nextBytes(b);
        return "syn-" + HexFormat.of().formatHex(b);
    }

    /** A builder with the contract's defaults (127.0.0.1:8876, open hub). */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.host = host; b.port = port; b.token = token; b.maxClients = maxClients;
        b.maxConnectionsPerHost = maxConnectionsPerHost; b.maxUnauthClients = maxUnauthClients;
        b.authTimeout = authTimeout; b.maxFrameBytes = maxFrameBytes; b.maxJsonDepth = maxJsonDepth;
        b.outboundHighWaterBytes = outboundHighWaterBytes; b.slowReaderGrace = slowReaderGrace;
        b.leaseOfflineTtlSeconds = leaseOfflineTtlSeconds; b.messageAuthKeys = messageAuthKeys;
        b.requireMessageAuth = requireMessageAuth; b.messageAuthReplayCapacity = messageAuthReplayCapacity;
        b.messageAuthWindowSeconds = messageAuthWindowSeconds;
        b.messageAuthFutureSkewSeconds = messageAuthFutureSkewSeconds; b.metricsEnabled = metricsEnabled;
        b.hubId = hubId; b.hubVersion = hubVersion; b.ratePerSecond = ratePerSecond; b.rateBurst = rateBurst;
        b.hostRatePerSecond = hostRatePerSecond; b.hostRateBurst = hostRateBurst;
        b.pingInterval = pingInterval; b.advertisedHost = advertisedHost; b.allowOrigins = allowOrigins;
        b.privateDirectedMessages = privateDirectedMessages;
        b.takeoverCooldown = takeoverCooldown; b.takeoverQuarantineThreshold = takeoverQuarantineThreshold;
        b.takeoverQuarantineWindow = takeoverQuarantineWindow; b.takeoverQuarantine = takeoverQuarantine;
        b.presenceFanoutLimit = presenceFanoutLimit;
        b.broadcastLinger = broadcastLinger; b.nativeTransport = nativeTransport;
        b.ioLoops = ioLoops;
        b.maxFanoutBacklogBytes = maxFanoutBacklogBytes; b.maxFanoutDelay = maxFanoutDelay;
        b.maxFanoutWrites = maxFanoutWrites; b.outboxBusyTasks = outboxBusyTasks;
        b.tls = tls;
        b.ui = ui;
        b.defaultDelivery = defaultDelivery;
        b.identityPins = identityPins;
        b.maxFindingsPerAgent = maxFindingsPerAgent;
        b.warnStaleRecipients = warnStaleRecipients;
        b.recipientLivenessWindowSeconds = recipientLivenessWindowSeconds;
        b.waiterLivenessWindowSeconds = waiterLivenessWindowSeconds;
        b.metricsAuth = metricsAuth;
        b.shutdownCloseTimeout = shutdownCloseTimeout;
        b.authThrottle = authThrottle;
        return b;
    }

    /** Mutable builder for {@link HubConfig}. */
    public static final class Builder {
        private String host = "127.0.0.1";
        private int port = 8876;
        private String token;
        private int maxClients = 256;
        private int maxConnectionsPerHost = 32;
        private int maxUnauthClients;
        private Duration authTimeout = Duration.ofSeconds(10);
        private int maxFrameBytes = 1024 * 1024;
        private int maxJsonDepth = 64;
        private int outboundHighWaterBytes = 4 * 1024 * 1024;
        private Duration slowReaderGrace = Duration.ofSeconds(5);
        private double leaseOfflineTtlSeconds = SpecConstants.DEFAULT_LEASE_OFFLINE_TTL;
        private List<MessageAuthKey> messageAuthKeys = List.of();
        private boolean requireMessageAuth;
        private int messageAuthReplayCapacity = ReplayCache.DEFAULT_CAPACITY;
        private double messageAuthWindowSeconds = SpecConstants.DEFAULT_MESSAGE_AUTH_WINDOW_SECONDS;
        private double messageAuthFutureSkewSeconds = SpecConstants.DEFAULT_MESSAGE_AUTH_FUTURE_SKEW_SECONDS;
        private boolean metricsEnabled;
        private String hubId;
        private String hubVersion = "synapse-hub-java/0.1.0";
        private double ratePerSecond;
        private int rateBurst = 20;
        private double hostRatePerSecond;
        private int hostRateBurst = 40;
        private Duration pingInterval = Duration.ofSeconds(15);
        private String advertisedHost;
        private List<String> allowOrigins = List.of();
        private boolean privateDirectedMessages;
        private Duration takeoverCooldown = Duration.ofSeconds(2);
        private int takeoverQuarantineThreshold = 5;
        private Duration takeoverQuarantineWindow = Duration.ofSeconds(30);
        private Duration takeoverQuarantine = Duration.ofSeconds(60);
        private int presenceFanoutLimit;
        private Duration broadcastLinger = Duration.ofMillis(5);
        private boolean nativeTransport = true;
        private int ioLoops;
        private long maxFanoutBacklogBytes = 64L * 1024 * 1024;
        private Duration maxFanoutDelay = DEFAULT_MAX_FANOUT_DELAY;
        private long maxFanoutWrites = DEFAULT_MAX_FANOUT_WRITES;
        private int outboxBusyTasks = 16_384;
        private TlsFiles tls;
        private boolean ui;
        private Delivery defaultDelivery = Delivery.EVERYTHING;
        private IdentityPinSettings identityPins = IdentityPinSettings.OFF;
        private int maxFindingsPerAgent = 512;
        private boolean warnStaleRecipients = true;
        private double recipientLivenessWindowSeconds = DEFAULT_RECIPIENT_LIVENESS_WINDOW;
        private double waiterLivenessWindowSeconds = DEFAULT_WAITER_LIVENESS_WINDOW;
        private MetricsAuth metricsAuth = MetricsAuth.OPEN;
        private Duration shutdownCloseTimeout = DEFAULT_SHUTDOWN_CLOSE_TIMEOUT;
        private AuthThrottleSettings authThrottle = AuthThrottleSettings.DEFAULTS;

        public Builder host(String v) { host = v; return this; }
        public Builder port(int v) { port = v; return this; }
        public Builder token(String v) { token = v; return this; }
        public Builder maxClients(int v) { maxClients = v; return this; }
        public Builder maxConnectionsPerHost(int v) { maxConnectionsPerHost = v; return this; }
        public Builder maxUnauthClients(int v) { maxUnauthClients = v; return this; }
        public Builder authTimeout(Duration v) { authTimeout = v; return this; }
        public Builder maxFrameBytes(int v) { maxFrameBytes = v; return this; }
        public Builder maxJsonDepth(int v) { maxJsonDepth = v; return this; }
        public Builder outboundHighWaterBytes(int v) { outboundHighWaterBytes = v; return this; }
        public Builder slowReaderGrace(Duration v) { slowReaderGrace = v; return this; }
        public Builder leaseOfflineTtlSeconds(double v) { leaseOfflineTtlSeconds = v; return this; }
        public Builder messageAuthKeys(List<MessageAuthKey> v) { messageAuthKeys = v; return this; }
        public Builder requireMessageAuth(boolean v) { requireMessageAuth = v; return this; }
        public Builder messageAuthReplayCapacity(int v) { messageAuthReplayCapacity = v; return this; }
        public Builder messageAuthWindowSeconds(double v) { messageAuthWindowSeconds = v; return this; }
        public Builder messageAuthFutureSkewSeconds(double v) { messageAuthFutureSkewSeconds = v; return this; }
        public Builder metricsEnabled(boolean v) { metricsEnabled = v; return this; }
        public Builder hubId(String v) { hubId = v; return this; }
        public Builder hubVersion(String v) { hubVersion = v; return this; }
        public Builder ratePerSecond(double v) { ratePerSecond = v; return this; }
        public Builder rateBurst(int v) { rateBurst = v; return this; }
        public Builder hostRatePerSecond(double v) { hostRatePerSecond = v; return this; }
        public Builder hostRateBurst(int v) { hostRateBurst = v; return this; }
        public Builder pingInterval(Duration v) { pingInterval = v; return this; }
        public Builder advertisedHost(String v) { advertisedHost = v; return this; }
        public Builder allowOrigins(List<String> v) { allowOrigins = v; return this; }
        public Builder privateDirectedMessages(boolean v) { privateDirectedMessages = v; return this; }
        public Builder takeoverCooldown(Duration v) { takeoverCooldown = v; return this; }
        public Builder takeoverQuarantineThreshold(int v) { takeoverQuarantineThreshold = v; return this; }
        public Builder takeoverQuarantineWindow(Duration v) { takeoverQuarantineWindow = v; return this; }
        public Builder takeoverQuarantine(Duration v) { takeoverQuarantine = v; return this; }
        public Builder presenceFanoutLimit(int v) { presenceFanoutLimit = v; return this; }
        public Builder broadcastLinger(Duration v) { broadcastLinger = v; return this; }
        public Builder nativeTransport(boolean v) { nativeTransport = v; return this; }
        public Builder ioLoops(int v) { ioLoops = v; return this; }
        public Builder maxFanoutBacklogBytes(long v) { maxFanoutBacklogBytes = v; return this; }
        public Builder maxFanoutDelay(Duration v) { maxFanoutDelay = v; return this; }
        public Builder maxFanoutWrites(long v) { maxFanoutWrites = v; return this; }
        public Builder outboxBusyTasks(int v) { outboxBusyTasks = v; return this; }
        public Builder tls(TlsFiles v) { tls = v; return this; }
        public Builder ui(boolean v) { ui = v; return this; }
        public Builder defaultDelivery(Delivery v) { defaultDelivery = v; return this; }
        public Builder identityPins(IdentityPinSettings v) { identityPins = v; return this; }
        public Builder maxFindingsPerAgent(int v) { maxFindingsPerAgent = v; return this; }
        public Builder warnStaleRecipients(boolean v) { warnStaleRecipients = v; return this; }
        public Builder recipientLivenessWindowSeconds(double v) { recipientLivenessWindowSeconds = v; return this; }
        public Builder waiterLivenessWindowSeconds(double v) { waiterLivenessWindowSeconds = v; return this; }
        public Builder metricsAuth(MetricsAuth v) { metricsAuth = v; return this; }
        public Builder shutdownCloseTimeout(Duration v) { shutdownCloseTimeout = v; return this; }
        public Builder authThrottle(AuthThrottleSettings v) { authThrottle = v; return this; }

        /** The validated configuration. */
        public HubConfig build() {
            return new HubConfig(host, port, token, maxClients, maxConnectionsPerHost, maxUnauthClients,
                    authTimeout, maxFrameBytes, maxJsonDepth, outboundHighWaterBytes, slowReaderGrace,
                    leaseOfflineTtlSeconds, messageAuthKeys, requireMessageAuth, messageAuthReplayCapacity,
                    messageAuthWindowSeconds, messageAuthFutureSkewSeconds, metricsEnabled, hubId, hubVersion,
                    ratePerSecond, rateBurst, hostRatePerSecond, hostRateBurst, pingInterval, advertisedHost, allowOrigins,
                    privateDirectedMessages, takeoverCooldown, takeoverQuarantineThreshold, takeoverQuarantineWindow,
                    takeoverQuarantine, presenceFanoutLimit, broadcastLinger, nativeTransport, ioLoops, maxFanoutBacklogBytes,
                    maxFanoutDelay, maxFanoutWrites, outboxBusyTasks, tls, ui, defaultDelivery, identityPins, maxFindingsPerAgent,
                    warnStaleRecipients, recipientLivenessWindowSeconds, waiterLivenessWindowSeconds, metricsAuth,
                    shutdownCloseTimeout, authThrottle);
        }
    }
}
