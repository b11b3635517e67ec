package dev.synapsehub.net.auth;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Bounded nonce cache of contract §9: identity (key id, sender, nonce); entries older than
 * the window are forgotten on each admission; a full cache refuses new nonces (fail closed,
 * never evicts a live nonce). Thread-safe.
 */
public final class ReplayCache {
    private final int capacity;
    private final double window;
    private final Map<String, Double> seen = new HashMap<>();

    public ReplayCache(int capacity, double windowSeconds) {
        this.capacity = capacity;
        this.window = windowSeconds;
    }

    /** True when admitted; false = {@code replayed} (duplicate or cache full). */
    public synchronized boolean admit(String keyId, String sender, String nonce, double signedAt, double now) {
        double cutoff = now - window;
        for (Iterator<Double> it = seen.values().iterator(); it.hasNext(); ) {
            if (it.next() < cutoff) {
                it.remove();
            }
        }
        String identity = keyId + '\0' + sender + '\0' + nonce;
        if (seen.containsKey(identity) || seen.size() >= capacity) {
            return false;
        }
        seen.put(identity, signedAt);
        return true;
    }

    /** Nonces currently remembered. */
    public synchronized int size() {
        return seen.size();
    }
}
