package dev.synapsehub.net.handler;

import java.util.HashMap;
import java.util.Map;

/**
 * Sockets that are not (yet) WebSocket sessions: counted from the TCP accept, per remote host
 * and in total, under the same caps as sessions ({@code --max-clients},
 * {@code --max-connections-per-host}), so connections that never finish their upgrade cannot
 * escape them. Thread-safe: every loop's sockets share one instance.
 */
public final class PendingSockets {
    private final int maxTotal;
    private final int maxPerHost;
    private final Map<String, Integer> perHost = new HashMap<>();
    private int total;

    /** Caps of {@code maxTotal} sockets and {@code maxPerHost} from one host (0: no per-host cap). */
    public PendingSockets(int maxTotal, int maxPerHost) {
        this.maxTotal = maxTotal;
        this.maxPerHost = maxPerHost;
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

    /** The socket from {@code host} upgraded or closed. */
    synchronized void leave(String host) {
        total--;
        perHost.computeIfPresent(host, (h, n) -> n <= 1 ? null : n - 1);
    }

    /** Sockets counted now. */
    public synchronized int size() {
        return total;
    }
}
