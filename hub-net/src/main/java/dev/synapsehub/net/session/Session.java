package dev.synapsehub.net.session;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundInvoker;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One WebSocket connection's edge state. The bound name, flags and the name's presence (last
 * seen, last reaction, roles, wake capability) are volatile and published through
 * {@link SessionRegistry}; the rest is touched only on the channel's event loop.
 */
public final class Session {
    private final long id;
    private final Channel channel;
    private final String remoteHost;
    private volatile String name;
    /** This connection's place among the registry's binds ({@link SessionRegistry#binds()}); 0 until bound. */
    private volatile long bindOrder;
    private volatile boolean authenticated;
    private volatile String principal;
    private volatile boolean closing;
    private final AtomicBoolean droppedAsSlowReader = new AtomicBoolean();
    /** A mailbox replay of this connection waits to be retried (set and cleared on any thread). */
    private final AtomicBoolean mailboxReplayDeferred = new AtomicBoolean();
    // Presence of the bound name, written on this connection's own frames without any shared
    // lock (the per-frame path), read by queries and chat fan-out through SessionRegistry.
    private volatile double lastSeen = Double.NaN;
    private volatile double lastReaction = Double.NaN;
    private volatile List<String> roles = List.of();
    private volatile String wake = UNKNOWN_WAKE;
    private ScheduledFuture<?> authTimer;
    private ScheduledFuture<?> slowReaderTimer;
    private double rateTokens;
    private long rateRefilledNanos;
    private long frames;
    private int fanoutIndex = -1;
    private long fanoutDelivered;
    private boolean fanoutQuiet;
    /** The roles refused on this socket's last heartbeat that declared roles, as told (event loop only). */
    private String refusedRoles;
    private final AnswerOrder answers = new AnswerOrder();
    /** Where broadcast batches (already encoded frames) enter the pipeline; null: the channel's tail. */
    private ChannelHandlerContext batchWriter;
    /** Frames read while the first frame waits for its name's pin (event loop only); null when none waits. */
    private ArrayDeque<byte[]> heldFrames;
    /** Set while the bound name's admission waits for its pin decision, and kept after it; null otherwise. */
    private volatile PendingAdmission pendingAdmission;

    /** The wake capability of a name that declared none. */
    public static final String UNKNOWN_WAKE = "unknown";

    /** A fresh, unbound session. */
    public Session(long id, Channel channel, String remoteHost) {
        this.id = id;
        this.channel = channel;
        this.remoteHost = remoteHost;
    }

    /**
     * Takes this connection's one deferred mailbox replay: false when one waits already (a later
     * {@code mailbox: true} then starts no second one: it would replay the same chats twice).
     */
    public boolean deferMailboxReplay() {
        return mailboxReplayDeferred.compareAndSet(false, true);
    }

    /** True while a mailbox replay of this connection waits to be retried. */
    public boolean mailboxReplayDeferred() {
        return mailboxReplayDeferred.get();
    }

    /** Its deferred mailbox replay was served or answered, or this connection no longer holds the name. */
    public void mailboxReplaySettled() {
        mailboxReplayDeferred.set(false);
    }

    /** The order this connection's answers must keep (edge answers behind the writer's replies). */
    public AnswerOrder answers() {
        return answers;
    }

    public long id() {
        return id;
    }

    public Channel channel() {
        return channel;
    }

    /**
     * The client certificate presented in this connection's TLS handshake, or null (plain
     * {@code ws://}, or no certificate presented).
     */
    public java.security.cert.X509Certificate peerCertificate() {
        return dev.synapsehub.net.tls.ServerTls.peerCertificate(channel);
    }

    /** The client certificate chain (leaf first) of this connection's TLS handshake, empty without one. */
    public java.util.List<java.security.cert.X509Certificate> peerCertificateChain() {
        return dev.synapsehub.net.tls.ServerTls.peerCertificateChain(channel);
    }

    /** The remote IP address as text. */
    public String remoteHost() {
        return remoteHost;
    }

    /** The bound name, null until the first frame bound one. */
    public String name() {
        return name;
    }

    void bindName(String bound, long order) {
        this.bindOrder = order;
        this.name = bound;
    }

    /** Its declarations changed (roles): it counts as bound at {@code order} for chat fan-out. */
    void rebind(long order) {
        this.bindOrder = order;
    }

    /**
     * When this connection bound its name or last changed its roles, as a count of the registry's
     * binds: one that did so after {@link SessionRegistry#binds()} read {@code n} has a larger
     * order than {@code n}.
     */
    public long bindOrder() {
        return bindOrder;
    }

    /** Hub time of this connection's last frame (or its bind); NaN before it bound. */
    public double lastSeen() {
        return lastSeen;
    }

    /** Hub time of its last reaction (any frame but a heartbeat, or its bind); NaN before it bound. */
    public double lastReaction() {
        return lastReaction;
    }

    /** The roles its name declared (empty when none). */
    public List<String> roles() {
        return roles;
    }

    /** The wake capability its name declared ({@link #UNKNOWN_WAKE} when none). */
    public String wake() {
        return wake;
    }

    /** A frame arrived at {@code now}: seen, and live for liveness unless it was a heartbeat. */
    void touch(double now, boolean reaction) {
        lastSeen = now;
        if (reaction) {
            lastReaction = now;
        }
    }

    void roles(List<String> value) {
        roles = List.copyOf(value);
    }

    void wake(String capability) {
        wake = capability;
    }

    /** A takeover: the name's declared roles and wake capability stay with the name. */
    void inheritDeclarations(Session previous) {
        roles = previous.roles;
        wake = previous.wake;
    }

    /** True once the connect token was accepted (always true on an open hub). */
    public boolean authenticated() {
        return authenticated;
    }

    public void markAuthenticated() {
        this.authenticated = true;
    }

    /** The quota principal charged for this connection's claims. */
    public String principal() {
        return principal;
    }

    public void principal(String value) {
        this.principal = value;
    }

    /** True once the hub decided to close this connection: later frames are ignored. */
    public boolean closing() {
        return closing;
    }

    public void markClosing() {
        this.closing = true;
    }

    /**
     * Marks this connection dropped for not reading and closing; true only the first time, so
     * each dropped reader is counted once however many writes find it over its limit.
     */
    public boolean dropAsSlowReader() {
        closing = true;
        return droppedAsSlowReader.compareAndSet(false, true);
    }

    public ScheduledFuture<?> authTimer() {
        return authTimer;
    }

    public void authTimer(ScheduledFuture<?> timer) {
        this.authTimer = timer;
    }

    public ScheduledFuture<?> slowReaderTimer() {
        return slowReaderTimer;
    }

    public void slowReaderTimer(ScheduledFuture<?> timer) {
        this.slowReaderTimer = timer;
    }

    /**
     * Holds this connection's later frames, and stops reading more, until {@link #releaseFrames}:
     * its first frame waits for the writer's pin decision, and frames must apply in the order sent
     * (event loop only).
     */
    public void holdFrames() {
        if (heldFrames == null) {
            heldFrames = new ArrayDeque<>();
            channel.config().setAutoRead(false);
        }
    }

    /** True while later frames are held (event loop only). */
    public boolean holdingFrames() {
        return heldFrames != null;
    }

    /** Keeps a frame read while frames are held, in order (event loop only). */
    public void holdFrame(byte[] frame) {
        heldFrames.addLast(frame);
    }

    /** Ends the hold: the frames held, in the order read, and reading resumes (event loop only). */
    public List<byte[]> releaseFrames() {
        List<byte[]> held = heldFrames == null ? List.of() : List.copyOf(heldFrames);
        if (heldFrames != null) {
            heldFrames = null;
            channel.config().setAutoRead(true);
        }
        return held;
    }

    /**
     * The first frame brings a first-use pin: its admission waits for the pin decision, so
     * deliveries addressed to the name wait ({@link #deliverWhenAdmitted}) until {@link
     * #admissionDecided}. Called before the bind makes the name visible (a fan-out finding the
     * name in between would otherwise write straight to a socket that may lose the pin race).
     */
    public void admissionPending() {
        pendingAdmission = new PendingAdmission();
    }

    /** The pending admission's bind made the name visible; {@code announcesJoin}: it announces it {@code joined} once admitted. */
    public void admissionBound(boolean announcesJoin) {
        PendingAdmission pending = pendingAdmission;
        if (pending != null) {
            pending.announcesJoin(announcesJoin);
        }
    }

    /** The pending admission's bind failed: the name never became this socket's, so nothing waits for it. */
    public void admissionAbandoned() {
        admissionDecided(false);
        pendingAdmission = null;
    }

    /**
     * Runs {@code deliver} now, or, while the admission is pending, once it is admitted; {@code
     * drop} instead when it is refused or the socket goes first. Any thread.
     */
    public void deliverWhenAdmitted(Runnable deliver, Runnable drop) {
        PendingAdmission pending = pendingAdmission;
        if (pending == null || !pending.hold(new PendingAdmission.Held(deliver, drop))) {
            deliver.run();
        }
    }

    /**
     * The pending admission was decided ({@code admitted}) or abandoned: the deliveries held run,
     * or are dropped, in order. Nothing when none was pending or it was decided already. Returns
     * how many were dropped.
     */
    public int admissionDecided(boolean admitted) {
        PendingAdmission pending = pendingAdmission;
        if (pending == null) {
            return 0;
        }
        List<PendingAdmission.Held> held = pending.decide(admitted);
        for (PendingAdmission.Held h : held) {
            (admitted ? h.deliver() : h.drop()).run();
        }
        return admitted ? 0 : held.size();
    }

    /**
     * True when this socket's bind would announce its name {@code joined} but was never admitted:
     * no {@code joined} went out, so its departure announces no {@code left} either.
     */
    public boolean joinUnannounced() {
        PendingAdmission pending = pendingAdmission;
        return pending != null && pending.joinUnannounced();
    }

    /** Frames received so far (event loop only). */
    public long countFrame() {
        return ++frames;
    }

    /** This session's slot among its event loop's broadcast members, -1 when none (event loop only). */
    public int fanoutIndex() {
        return fanoutIndex;
    }

    public void fanoutIndex(int index) {
        this.fanoutIndex = index;
    }

    /**
     * Where broadcast batches enter this connection's pipeline (event loop only): the WebSocket
     * encoder's context when there is one, so a batch passes only the handlers nearer the socket
     * (TLS) instead of walking the whole pipeline once per member; the channel otherwise.
     */
    public ChannelOutboundInvoker batchWriter() {
        ChannelHandlerContext ctx = batchWriter;
        if (ctx == null || ctx.isRemoved()) {
            ctx = channel.pipeline().context(WEBSOCKET_ENCODER);
            batchWriter = ctx;
        }
        return ctx != null ? ctx : channel;
    }

    /** The name Netty's WebSocket handshake gives the frame encoder it installs. */
    private static final String WEBSOCKET_ENCODER = "wsencoder";

    /** The newest broadcast batch of its event loop this session has been given (event loop only). */
    public long fanoutDelivered() {
        return fanoutDelivered;
    }

    public void fanoutDelivered(long seq) {
        this.fanoutDelivered = seq;
    }

    /**
     * True while this session takes only the broadcasts meant for every socket: claim traffic
     * and presence reach it only when its declared delivery matches (event loop only).
     */
    public boolean fanoutQuiet() {
        return fanoutQuiet;
    }

    public void fanoutQuiet(boolean quiet) {
        this.fanoutQuiet = quiet;
    }

    /**
     * Records the roles refused on a heartbeat ({@code refused}, null for none); true when they
     * differ from the last heartbeat's, so the refusal is told once, not on every keepalive
     * (event loop only).
     */
    public boolean refusedRolesChanged(String refused) {
        boolean changed = !java.util.Objects.equals(refused, refusedRoles);
        refusedRoles = refused;
        return changed;
    }

    /** Token bucket: true when a frame may pass at {@code nowNanos} (event loop only). */
    public boolean takeRateToken(double perSecond, int burst, long nowNanos) {
        if (rateRefilledNanos == 0) {
            rateRefilledNanos = nowNanos;
            rateTokens = burst;
        }
        double elapsed = (nowNanos - rateRefilledNanos) / 1e9;
        rateRefilledNanos = nowNanos;
        rateTokens = Math.min(burst, rateTokens + elapsed * perSecond);
        if (rateTokens < 1.0) {
            return false;
        }
        rateTokens -= 1.0;
        return true;
    }

    @Override
    public String toString() {
        return "Session[" + id + ", " + remoteHost + ", " + name + "]";
    }
}
