package dev.synapsehub.net.auth;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * Bounded nonce cache of contract §9: identity (key id, sender, nonce). A nonce is remembered
 * while a frame carrying it could still pass the window check: from its admission for the rest
 * of its window ({@code signedAt + window - wall}), measured in hub (monotonic) time, and then
 * for as long as the wall clock still reads no later than {@code signedAt + window} (so a wall
 * clock stepped back cannot re-admit it). Expired nonces leave through a min-heap on that
 * deadline, so an admission costs O(log n), not a sweep of every entry. A full cache refuses new
 * nonces (fail closed, never evicts a live nonce); size the capacity for the signed rate times
 * the window ({@code --message-auth-replay-capacity}). A nonce may also be charged to
 * {@link Share}s (a key, a name, a remote host): a full share refuses only the nonces charged to
 * it, so one signer's flood fills its own share and never the others'. Duplicates are found
 * across every share. Thread-safe.
 */
public final class ReplayCache {
    /** A remembered nonce, its signing time, and the hub time at which it is looked at again. */
    private record Held(String identity, double signedAt, double recheckAt, List<Share> shares) {
    }

    /** At most {@code limit} remembered nonces are charged to {@code bucket} at once. */
    public record Share(String bucket, int limit) {
    }

    /** What {@link #admit(String, String, String, double, SigningTime, List)} decided. */
    public enum Admission {
        /** New: remembered until it can no longer pass the window check. */
        ADMITTED,
        /** Already remembered: a replay. */
        REPLAYED,
        /** New, but the cache or one of its shares is full: not remembered. */
        FULL
    }

    /**
     * Default capacity: 10,000 signed frames a second for the 10 s window plus the 1 s future
     * skew is 110,000 live nonces; this leaves room above that (about 40 MB when full).
     */
    public static final int DEFAULT_CAPACITY = 262_144;

    private final int capacity;
    private final double window;
    private final Map<String, Held> seen = new HashMap<>();
    private final Map<String, Integer> charged = new HashMap<>();
    private final PriorityQueue<Held> byRecheck =
            new PriorityQueue<>((a, b) -> Double.compare(a.recheckAt(), b.recheckAt()));

    public ReplayCache(int capacity, double windowSeconds) {
        this.capacity = capacity;
        this.window = windowSeconds;
    }

    /** True when admitted; false = {@code replayed} (duplicate or cache full). */
    public boolean admit(String keyId, String sender, String nonce, double signedAt, SigningTime at) {
        return admit(keyId, sender, nonce, signedAt, at, List.of()) == Admission.ADMITTED;
    }

    /** Admits a nonce charged to {@code shares}; a full share or cache refuses it as {@link Admission#FULL}. */
    public synchronized Admission admit(String keyId, String sender, String nonce, double signedAt, SigningTime at,
            List<Share> shares) {
        forgetExpired(at);
        String identity = keyId + '\0' + sender + '\0' + nonce;
        if (seen.containsKey(identity)) {
            return Admission.REPLAYED;
        }
        if (seen.size() >= capacity || shares.stream().anyMatch(s -> charged.getOrDefault(s.bucket(), 0) >= s.limit())) {
            return Admission.FULL;
        }
        Held held = new Held(identity, signedAt, at.steady() + Math.max(0, signedAt + window - at.wall()),
                List.copyOf(shares));
        seen.put(identity, held);
        byRecheck.add(held);
        shares.forEach(s -> charged.merge(s.bucket(), 1, Integer::sum));
        return Admission.ADMITTED;
    }

    /**
     * Drops nonces whose frames now fail the window check ({@code signedAt < wall - window}) once
     * their remembered time has passed; one whose frame the wall clock (stepped back) would
     * still admit is looked at again when its window ends by the wall clock's reading now.
     */
    private void forgetExpired(SigningTime at) {
        while (!byRecheck.isEmpty() && byRecheck.peek().recheckAt() < at.steady()) {
            Held held = byRecheck.poll();
            if (seen.get(held.identity()) != held) {
                continue; // released since (busy): already forgotten
            }
            double left = held.signedAt() + window - at.wall();
            if (left < 0) {
                seen.remove(held.identity());
                held.shares().forEach(s -> charged.computeIfPresent(s.bucket(), (b, n) -> n > 1 ? n - 1 : null));
            } else {
                Held again = new Held(held.identity(), held.signedAt(), at.steady() + left, held.shares());
                seen.put(held.identity(), again);
                byRecheck.add(again);
            }
        }
    }

    /**
     * Forgets a nonce just admitted whose frame was then refused for a passing reason (busy)
     * with nothing applied: the same frame sent again is then judged afresh, not {@code replayed}.
     */
    public synchronized void release(String keyId, String sender, String nonce) {
        Held held = seen.remove(keyId + '\0' + sender + '\0' + nonce);
        if (held != null) {
            held.shares().forEach(s -> charged.computeIfPresent(s.bucket(), (b, n) -> n > 1 ? n - 1 : null));
        }
    }

    /** Nonces currently remembered. */
    public synchronized int size() {
        return seen.size();
    }

    /** Nonces currently charged to {@code bucket}. */
    public synchronized int charged(String bucket) {
        return charged.getOrDefault(bucket, 0);
    }
}
