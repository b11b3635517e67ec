package dev.synapsehub.net.handler;

import java.util.HashMap;
import java.util.Map;

/**
 * Sockets that have not yet sent a complete HTTP request (the WebSocket upgrade or a request to
 * an HTTP endpoint): counted from the TCP accept, per remote host and in total, so connections
 * that never finish their upgrade cannot hold file descriptors and buffers without bound (the
 * auth timeout reaps each). The caps leave room above the session caps ({@link #forSessions}):
 * a socket within them upgrades and is then refused by the session caps with the contract's
 * close code and reason (§3.2: 4013, 4015), which clients read; only a flood beyond that room is
 * reset at the accept. Thread-safe: every loop's sockets share one instance.
 */
public final class PendingSockets {
    /** The least room for sockets on their way to an upgrade, in all and from one host. */
    static final int MIN_TOTAL = 1024;
    static final int MIN_PER_HOST = 64;

    private final int maxTotal;
    private final int maxPerHost;
    private final Map<String, Integer> perHost = new HashMap<>();
    private int total;

    /** Caps of {@code maxTotal} sockets and {@code maxPerHost} from one host (0: no per-host cap). */
    public PendingSockets(int maxTotal, int maxPerHost) {
        this.maxTotal = maxTotal;
        this.maxPerHost = maxPerHost;
    }

    /**
     * The caps for a hub of {@code maxClients} sessions and {@code maxPerHost} from one host (0:
     * none): twice each, and at least {@link #MIN_TOTAL} and {@link #MIN_PER_HOST}, so that a
     * burst of connects past the session caps still gets the contract's close codes.
     */
    public static PendingSockets forSessions(int maxClients, int maxPerHost) {
        return new PendingSockets(Math.max(MIN_TOTAL, 2 * maxClients),
                maxPerHost == 0 ? 0 : Math.max(MIN_PER_HOST, 2 * maxPerHost));
    }

    /** Counts a new socket from {@code host}; false (not counted) when a cap is reached. */
    synchronized boolean enter(String host) {
        int fromHost = perHost.getOrDefault(host, 0);
        if (total >= maxTotal || (maxPerHost > 0 && fromHost >= maxPerHost)) {
            return false;
        }
        total++;
        perHost.put(host, fromHost + 1);
        return true;
    }

    /** The socket from {@code host} sent its first complete request, or closed. */
    synchronized void leave(String host) {
        total--;
        perHost.computeIfPresent(host, (h, n) -> n <= 1 ? null : n - 1);
    }

    /** Sockets counted now. */
    public synchronized int size() {
        return total;
    }
}
