package dev.synapsehub.net.auth;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Throttles guessing of credentials (the connect token, the metrics token, per-message HMAC
 * keys) per remote host: after {@link AuthThrottleSettings#failures()} failed attempts within the
 * window, the host's next attempts are refused without checking the credential until its
 * back-off passes; each further episode doubles the back-off up to the cap. One host's state
 * never changes another's; a success changes nothing (else a guesser sharing an address with a
 * working client would be let off by the client's logins). Each episode is logged once; each
 * refusal it causes is counted in {@code refused}. At most {@link AuthThrottleSettings#hosts()}
 * hosts are tracked: the oldest quiet one (else the oldest) is forgotten to make room, a few
 * looked at per new host. Thread-safe; failures are rare, so one lock is enough.
 */
public final class AuthThrottle {
    private static final Logger LOG = LoggerFactory.getLogger(AuthThrottle.class);
    /** Oldest entries looked at per new host: quiet ones are forgotten, amortised O(1). */
    private static final int LOOKS_PER_NEW_HOST = 4;

    private final AuthThrottleSettings settings;
    private final AtomicLong refused;
    private final LongSupplier nanoClock;
    private final long windowNanos;
    private final long backoffNanos;
    private final long maxBackoffNanos;
    /** By last failure, oldest first. */
    private final LinkedHashMap<String, Host> hosts = new LinkedHashMap<>();

    /** A throttle reading monotonic nanoseconds from {@code nanoClock}, counting its refusals in {@code refused}. */
    public AuthThrottle(AuthThrottleSettings settings, LongSupplier nanoClock, AtomicLong refused) {
        this.settings = settings;
        this.nanoClock = nanoClock;
        this.refused = refused;
        this.windowNanos = settings.window().toNanos();
        this.backoffNanos = settings.backoff().toNanos();
        this.maxBackoffNanos = settings.maxBackoff().toNanos();
    }

    /** A throttle that never refuses. */
    public static AuthThrottle off() {
        return new AuthThrottle(AuthThrottleSettings.OFF, System::nanoTime, new AtomicLong());
    }

    /**
     * Whether {@code host} is in a back-off now: its attempt is then refused without checking its
     * credential, and counted. Returns the seconds left (at least 1), 0 when the credential may be
     * checked.
     */
    public long blockedFor(String host) {
        if (exempt(host)) {
            return 0;
        }
        long nowNanos = nanoClock.getAsLong();
        long left;
        synchronized (this) {
            Host h = hosts.get(host);
            left = h == null ? 0 : h.blockedUntil - nowNanos;
        }
        if (left <= 0) {
            return 0;
        }
        refused.incrementAndGet();
        return Math.max(1, (left + 999_999_999) / 1_000_000_000);
    }

    /**
     * One failed attempt from {@code host}; the limit-th within the window starts a back-off.
     * True when it did: that is logged, once for the whole episode.
     */
    public boolean failed(String host) {
        if (exempt(host)) {
            return false;
        }
        long nowNanos = nanoClock.getAsLong();
        long backoff;
        int episode;
        synchronized (this) {
            Host h = hosts.remove(host);
            if (h == null || h.quietAt(nowNanos, windowNanos, maxBackoffNanos)) {
                h = new Host(nowNanos);
                makeRoom(nowNanos);
            }
            hosts.put(host, h); // to the back: the oldest failures stay first
            if (nowNanos - h.windowStart >= windowNanos) {
                h.windowStart = nowNanos;
                h.failures = 0;
            }
            h.failures++;
            h.lastFailure = nowNanos;
            if (h.failures < settings.failures()) {
                return false;
            }
            backoff = backoffNanos;
            for (int i = 0; i < h.episodes && backoff < maxBackoffNanos; i++) { // doubled per episode, capped
                backoff = backoff > maxBackoffNanos / 2 ? maxBackoffNanos : backoff * 2;
            }
            h.episodes++;
            h.blockedUntil = nowNanos + backoff;
            h.failures = 0;
            h.windowStart = nowNanos;
            episode = h.episodes;
        }
        LOG.warn("{} failed authentication attempts from {} within {} s: its attempts are refused unchecked for {} s"
                + " (back-off {} of this host; each refusal counted in synapse_auth_failures_throttled_total)",
                settings.failures(), host, settings.window().toSeconds(), seconds(backoff), episode);
        return true;
    }

    /** The host of a remote socket address, as sessions name it ({@code getHostAddress()}). */
    public static String hostOf(java.net.SocketAddress remote) {
        return remote instanceof java.net.InetSocketAddress a && a.getAddress() != null
                ? a.getAddress().getHostAddress() : String.valueOf(remote);
    }

    /** Hosts tracked now. */
    public synchronized int hosts() {
        return hosts.size();
    }

    /** Whether the throttle counts failures at all. */
    public boolean enabled() {
        return settings.enabled();
    }

    private boolean exempt(String host) {
        return !settings.enabled() || (!settings.loopback() && loopback(host));
    }

    /** Forgets a few of the oldest entries that are quiet, and the oldest one if still full. */
    private void makeRoom(long nowNanos) {
        Iterator<Map.Entry<String, Host>> it = hosts.entrySet().iterator();
        for (int i = 0; i < LOOKS_PER_NEW_HOST && it.hasNext(); i++) {
            if (it.next().getValue().quietAt(nowNanos, windowNanos, maxBackoffNanos)) {
                it.remove();
            }
        }
        if (hosts.size() >= settings.hosts()) {
            it = hosts.entrySet().iterator();
            it.next();
            it.remove();
        }
    }

    /**
     * Loopback by its text, as a remote address is given ({@code getHostAddress()}: 127.0.0.0/8,
     * {@code ::1} in either form, IPv4-mapped 127/8); never a name look-up.
     */
    static boolean loopback(String host) {
        if (host == null) {
            return false;
        }
        int scope = host.indexOf('%');
        String address = (scope < 0 ? host : host.substring(0, scope)).toLowerCase(java.util.Locale.ROOT);
        return address.startsWith("127.") || address.equals("::1") || address.equals("0:0:0:0:0:0:0:1")
                || address.startsWith("::ffff:127.") || address.startsWith("0:0:0:0:0:ffff:127.");
    }

    private static String seconds(long nanos) {
        double s = nanos / 1e9;
        return s == Math.rint(s) ? Long.toString((long) s) : Double.toString(s);
    }

    /** One host's failures and back-off. Guarded by the throttle's lock. */
    private static final class Host {
        long windowStart;
        int failures;
        long lastFailure;
        long blockedUntil;
        int episodes;

        Host(long nowNanos) {
            windowStart = nowNanos;
            lastFailure = nowNanos;
            blockedUntil = nowNanos;
        }

        /** Past its back-off, with no failure in the window, and forgiven its episodes: as good as new. */
        boolean quietAt(long nowNanos, long windowNanos, long maxBackoffNanos) {
            return nowNanos - blockedUntil >= (episodes > 0 ? maxBackoffNanos : 0)
                    && nowNanos - lastFailure >= windowNanos;
        }
    }
}
