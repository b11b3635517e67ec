package dev.synapsehub.net.auth;

import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * Bounded nonce cache of contract §9: identity (key id, sender, nonce). A nonce is remembered
 * only while a frame carrying it could still pass the window check (until its signed time
 * plus the window); expired nonces leave through a min-heap on that deadline, so an admission
 * costs O(log n), not a sweep of every entry. A full cache refuses new nonces (fail closed,
 * never evicts a live nonce); size the capacity for the signed rate times the window
 * ({@code --message-auth-replay-capacity}). Thread-safe.
 */
public final class ReplayCache {
    /** A remembered nonce and the instant after which it can no longer be replayed. */
    private record Held(String identity, double forgetAfter) {
    }

    /**
     * Default capacity: 10,000 signed frames a second for the 10 s window plus the 1 s future
     * skew is 110,000 live nonces; this leaves room above that (about 40 MB when full).
     */
    public static final int DEFAULT_CAPACITY = 262_144;

    private final int capacity;
    private final double window;
    private final Map<String, Held> seen = new HashMap<>();
    private final PriorityQueue<Held> byDeadline =
            new PriorityQueue<>((a, b) -> Double.compare(a.forgetAfter(), b.forgetAfter()));

    public ReplayCache(int capacity, double windowSeconds) {
        this.capacity = capacity;
        this.window = windowSeconds;
    }

    /** True when admitted; false = {@code replayed} (duplicate or cache full). */
    public synchronized boolean admit(String keyId, String sender, String nonce, double signedAt, double now) {
        forgetExpired(now);
        String identity = keyId + '\0' + sender + '\0' + nonce;
        if (seen.containsKey(identity) || seen.size() >= capacity) {
            return false;
        }
        Held held = new Held(identity, signedAt + window);
        seen.put(identity, held);
        byDeadline.add(held);
        return true;
    }

    /** Drops nonces whose frames would now fail the window check ({@code signedAt < now - window}). */
    private void forgetExpired(double now) {
        while (!byDeadline.isEmpty() && byDeadline.peek().forgetAfter() < now) {
            seen.remove(byDeadline.poll().identity());
        }
    }

    /** Nonces currently remembered. */
    public synchronized int size() {
        return seen.size();
    }
}
