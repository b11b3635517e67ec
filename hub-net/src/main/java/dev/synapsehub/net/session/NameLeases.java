package dev.synapsehub.net.session;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

/**
 * Ownership leases on names (contract §3.5): a bound holder's lease lasts while it is online;
 * once it leaves, {@code offlineTtl} seconds more. Lapsed leases are removed by {@link #sweep},
 * which the registry runs on every bind, departure and lease check, so a lease whose name never
 * binds again does not stay for ever. Changed only under the registry's name lock; the monitor
 * here lets other threads read the count and liveness.
 */
final class NameLeases {
    /** What a binding connection's lease presentation amounts to. */
    enum Presented { NO_LEASE, MATCHED, REFUSED }

    private record Lease(String hash, boolean holderOnline, double expiresAt) {
        boolean liveAt(double now) {
            return holderOnline || expiresAt > now;
        }
    }

    private record OfflineLease(String name, double expiresAt) {
    }

    /**
     * Leases held at most: names bound with {@code lease: true} and left are kept {@code offlineTtl}
     * (an hour by default), so without a bound a client binding and leaving names would grow the
     * map with its bind rate times the TTL. Online holders are bounded by the connection caps.
     */
    static final int MAX_LEASES = 65_536;

    private final Map<String, Lease> leases = new HashMap<>();
    /** Leases asked for and not granted, because {@link #MAX_LEASES} were held. */
    private long refused;
    /**
     * Offline leases in the order they lapse (every one lasts {@code offlineTtl} from a departure
     * on the steady edge clock, so arrival order is lapse order).
     */
    private final ArrayDeque<OfflineLease> lapsing = new ArrayDeque<>();
    private final SecureRandom random = new SecureRandom();
    private final double offlineTtl;

    NameLeases(double offlineTtl) {
        this.offlineTtl = offlineTtl;
    }

    /** Removes the offline leases that lapsed by {@code now} (one whose holder came back is kept). */
    synchronized void sweep(double now) {
        while (!lapsing.isEmpty() && lapsing.peekFirst().expiresAt() <= now) {
            OfflineLease lapsed = lapsing.removeFirst();
            Lease lease = leases.get(lapsed.name());
            if (lease != null && !lease.holderOnline() && lease.expiresAt() == lapsed.expiresAt()) {
                leases.remove(lapsed.name());
            }
        }
    }

    /** Whether a bind of {@code name} presenting {@code ownerLease} (or null) may proceed. */
    synchronized Presented check(String name, String ownerLease, double now) {
        Lease lease = leases.get(name);
        if (lease != null && !lease.liveAt(now)) {
            leases.remove(name);
            lease = null;
        }
        if (lease == null) {
            return Presented.NO_LEASE;
        }
        boolean matched = ownerLease != null
                && MessageDigest.isEqual(lease.hash().getBytes(StandardCharsets.US_ASCII),
                        hash(ownerLease).getBytes(StandardCharsets.US_ASCII));
        return matched ? Presented.MATCHED : Presented.REFUSED;
    }

    /**
     * {@code name} bound: a presented lease is held online again; otherwise a new one is issued
     * when asked for. Returns the new token, or null.
     */
    synchronized String bound(String name, Presented presented, boolean wantLease) {
        Lease held = leases.get(name);
        if (presented == Presented.MATCHED && held != null) {
            leases.put(name, new Lease(held.hash(), true, Double.POSITIVE_INFINITY));
            return null;
        }
        if (!wantLease) {
            return null;
        }
        if (leases.size() >= MAX_LEASES && !leases.containsKey(name)) {
            // fail closed: a name binds without a lease rather than a held one going early (a client
            // binding and leaving names could otherwise push out a restarting agent's lease and take its name)
            refused++;
            return null;
        }
        byte[] raw = new byte[32];
        random.nextBytes(raw);
        String token = Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
        leases.put(name, new Lease(hash(token), true, Double.POSITIVE_INFINITY));
        return token;
    }

    /** Leases asked for and not granted because {@link #MAX_LEASES} were held. */
    synchronized long refused() {
        return refused;
    }

    /** {@code name}'s holder left at {@code now}: its lease lasts {@code offlineTtl} more (none without one). */
    synchronized void departed(String name, double now) {
        Lease lease = leases.get(name);
        if (lease == null) {
            return;
        }
        if (offlineTtl <= 0) {
            leases.remove(name);
        } else {
            leases.put(name, new Lease(lease.hash(), false, now + offlineTtl));
            lapsing.addLast(new OfflineLease(name, now + offlineTtl));
        }
    }

    /**
     * Ends {@code name}'s lease, its holder online or not; true when there was one. A holder still
     * bound gets no offline lease when it then departs ({@link #departed} finds none).
     */
    synchronized boolean revoke(String name) {
        return leases.remove(name) != null; // a queued lapse of it finds nothing and is skipped by sweep
    }

    /** True when {@code name} holds a lease that has not lapsed at {@code now}. */
    synchronized boolean live(String name, double now) {
        Lease lease = leases.get(name);
        return lease != null && lease.liveAt(now);
    }

    /** Leases held, their holder online or not. */
    synchronized int count() {
        return leases.size();
    }

    private static String hash(String token) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
