package dev.synapsehub.net.session;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The edge's connection table: open sockets, bound names, ownership leases, roles, wake
 * capabilities, last-seen times and advisory wait edges. Not coordination state: the claim
 * registry lives in the actor. Every method holds the monitor only briefly and never blocks.
 */
public final class SessionRegistry {
    /** How many distinct names the last-seen table remembers (oldest forgotten first). */
    public static final int MAX_REMEMBERED_NAMES = 65_536;

    /** Why a socket may not be admitted (close code and exact reason label). */
    public record Refusal(int code, String reason) {
    }

    /** The result of binding a name (contract §3.4–3.5). */
    public record Bind(Kind kind, Session superseded, boolean joined, String leaseToken,
                       List<String> onlineAgents, int connectedClients) {
        /** Outcome kinds: bound, or refused (4009 conflict, 4016 owned, 4014 cooldown / quarantine). */
        public enum Kind { BOUND, CONFLICT, OWNED, TAKEOVER_COOLDOWN, TAKEOVER_QUARANTINE }
    }

    /**
     * Takeover throttling (contract §3.2, close 4014): a takeover within {@code cooldownSeconds}
     * of the name's previous takeover is refused; the takeover that makes {@code threshold}
     * takeovers of one name within {@code windowSeconds} pins the name to its new holder for
     * {@code quarantineSeconds} (later takeovers refused). A plain bind of a free name is not a
     * takeover and is never throttled.
     */
    public record TakeoverPolicy(double cooldownSeconds, int threshold, double windowSeconds,
                                 double quarantineSeconds) {
        /** The contract's defaults: 2 s cooldown; 5 takeovers in 30 s pin the name for 60 s. */
        public static final TakeoverPolicy DEFAULTS = new TakeoverPolicy(2, 5, 30, 60);
    }

    /** What a closed socket leaves behind. */
    public record Departure(boolean left, String name, List<String> onlineAgents) {
    }

    private record Lease(String hash, boolean holderOnline, double expiresAt) {
        boolean liveAt(double now) {
            return holderOnline || expiresAt > now;
        }
    }

    private record OfflineLease(String name, double expiresAt) {
    }

    private final Set<Session> sockets = new LinkedHashSet<>();
    private final Map<String, Integer> perHost = new HashMap<>();
    private final TreeMap<String, Session> byName = new TreeMap<>();
    private final Map<String, Lease> leases = new HashMap<>();
    /**
     * Offline leases in the order they lapse (every one lasts {@code leaseOfflineTtl} from a
     * departure on the steady edge clock, so arrival order is lapse order): swept on every bind
     * and departure, so a lease whose name never binds again does not stay for ever.
     */
    private final ArrayDeque<OfflineLease> lapsing = new ArrayDeque<>();
    private final Map<String, List<String>> roles = new TreeMap<>();
    private final Map<String, String> wake = new TreeMap<>();
    private final Map<String, Double> lastReaction = new HashMap<>();
    private final Map<String, Set<String>> waits = new HashMap<>();
    private final LinkedHashMap<String, Double> lastSeen = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Double> eldest) {
            return size() > MAX_REMEMBERED_NAMES;
        }
    };
    /** Per name, the times of its recent takeovers (at most the quarantine threshold kept). */
    private final LinkedHashMap<String, ArrayDeque<Double>> takeovers = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, ArrayDeque<Double>> eldest) {
            return size() > MAX_REMEMBERED_NAMES;
        }
    };
    /** Names pinned to their holder, with the end of the pin. */
    private final LinkedHashMap<String, Double> quarantinedUntil = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Double> eldest) {
            return size() > MAX_REMEMBERED_NAMES;
        }
    };
    private long quarantinesStarted;
    private final SecureRandom random = new SecureRandom();
    private final int maxClients;
    private final int maxPerHost;
    private final int maxUnauth;
    private final boolean secured;
    private final double leaseOfflineTtl;
    private final TakeoverPolicy takeoverPolicy;

    /** A table enforcing the admission caps of contract §3.2, with the default takeover policy. */
    public SessionRegistry(int maxClients, int maxPerHost, int maxUnauth, boolean secured, double leaseOfflineTtl) {
        this(maxClients, maxPerHost, maxUnauth, secured, leaseOfflineTtl, TakeoverPolicy.DEFAULTS);
    }

    /** A table enforcing the admission caps of contract §3.2 and {@code takeoverPolicy}. */
    public SessionRegistry(int maxClients, int maxPerHost, int maxUnauth, boolean secured, double leaseOfflineTtl,
                           TakeoverPolicy takeoverPolicy) {
        this.maxClients = maxClients;
        this.maxPerHost = maxPerHost;
        this.maxUnauth = maxUnauth;
        this.secured = secured;
        this.leaseOfflineTtl = leaseOfflineTtl;
        this.takeoverPolicy = takeoverPolicy;
    }

    /** Admission checks in contract order; null when admitted (and counted). */
    public synchronized Refusal admit(Session session) {
        if (sockets.size() >= maxClients) {
            return new Refusal(4013, "hub at capacity");
        }
        int fromHost = perHost.getOrDefault(session.remoteHost(), 0);
        if (maxPerHost > 0 && fromHost >= maxPerHost) {
            return new Refusal(4015, "too many connections from host");
        }
        if (secured) {
            long unauth = sockets.stream().filter(s -> !s.authenticated()).count();
            if (unauth >= maxUnauth) {
                return new Refusal(4014, "too many unauthenticated connections");
            }
        } else {
            session.markAuthenticated();
        }
        sockets.add(session);
        perHost.merge(session.remoteHost(), 1, Integer::sum);
        return null;
    }

    /** Binds {@code name} to {@code session} following contract §3.4 steps 3–4 and §3.5. */
    public synchronized Bind bind(Session session, String name, boolean takeover, String ownerLease,
                                  boolean wantLease, double now) {
        dropLapsedLeases(now);
        Lease lease = leases.get(name);
        if (lease != null && !lease.liveAt(now)) {
            leases.remove(name);
            lease = null;
        }
        boolean presented = lease != null && ownerLease != null
                && MessageDigest.isEqual(lease.hash().getBytes(StandardCharsets.US_ASCII),
                        hash(ownerLease).getBytes(StandardCharsets.US_ASCII));
        if (lease != null && !presented) {
            return new Bind(Bind.Kind.OWNED, null, false, null, online(), sockets.size());
        }
        Session holder = byName.get(name);
        Session superseded = null;
        if (holder != null && holder != session) {
            if (!takeover) {
                return new Bind(Bind.Kind.CONFLICT, null, false, null, online(), sockets.size());
            }
            Bind.Kind throttled = throttleTakeover(name, now);
            if (throttled != null) {
                return new Bind(throttled, null, false, null, online(), sockets.size());
            }
            superseded = holder;
        }
        List<String> before = online();
        boolean joined = holder == null;
        byName.put(name, session);
        session.bindName(name);
        lastSeen.remove(name);
        lastSeen.put(name, now);
        lastReaction.put(name, now);
        String token = null;
        if (lease != null) {
            leases.put(name, new Lease(lease.hash(), true, Double.POSITIVE_INFINITY));
        } else if (wantLease) {
            byte[] raw = new byte[32];
            random.nextBytes(raw);
            token = Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
            leases.put(name, new Lease(hash(token), true, Double.POSITIVE_INFINITY));
        }
        return new Bind(Bind.Kind.BOUND, superseded, joined, token, before, sockets.size());
    }

    /** Null when a takeover of {@code name} may proceed now (and records it), else the refusal. */
    private Bind.Kind throttleTakeover(String name, double now) {
        Double pinnedUntil = quarantinedUntil.get(name);
        if (pinnedUntil != null) {
            if (pinnedUntil > now) {
                return Bind.Kind.TAKEOVER_QUARANTINE;
            }
            quarantinedUntil.remove(name);
        }
        ArrayDeque<Double> times = takeovers.computeIfAbsent(name, k -> new ArrayDeque<>());
        while (!times.isEmpty() && times.peekFirst() <= now - takeoverPolicy.windowSeconds()) {
            times.removeFirst();
        }
        if (!times.isEmpty() && now - times.peekLast() < takeoverPolicy.cooldownSeconds()) {
            return Bind.Kind.TAKEOVER_COOLDOWN;
        }
        times.addLast(now);
        if (times.size() >= takeoverPolicy.threshold()) {
            quarantinedUntil.put(name, now + takeoverPolicy.quarantineSeconds());
            quarantinesStarted++;
            times.clear();
        }
        return null;
    }

    /** Removes the offline leases that lapsed by {@code now} (one whose holder came back is kept). */
    private void dropLapsedLeases(double now) {
        while (!lapsing.isEmpty() && lapsing.peekFirst().expiresAt() <= now) {
            OfflineLease lapsed = lapsing.removeFirst();
            Lease lease = leases.get(lapsed.name());
            if (lease != null && !lease.holderOnline() && lease.expiresAt() == lapsed.expiresAt()) {
                leases.remove(lapsed.name());
            }
        }
    }

    /** True when {@code name} holds an ownership lease that has not lapsed at {@code now}. */
    public synchronized boolean leaseLive(String name, double now) {
        Lease lease = leases.get(name);
        return lease != null && lease.liveAt(now);
    }

    /** Name leases held, their holder online or not. */
    public synchronized int leaseCount() {
        return leases.size();
    }

    /** How many takeover quarantines were started since the hub started. */
    public synchronized long takeoverQuarantines() {
        return quarantinesStarted;
    }

    /** Forgets a closed socket; unbinds its name if it still owns it (contract §3.8). */
    public synchronized Departure remove(Session session, double now) {
        dropLapsedLeases(now);
        if (!sockets.remove(session)) {
            return new Departure(false, null, online());
        }
        perHost.computeIfPresent(session.remoteHost(), (h, n) -> n <= 1 ? null : n - 1);
        String name = session.name();
        if (name == null || byName.get(name) != session) {
            return new Departure(false, name, online());
        }
        byName.remove(name);
        roles.remove(name);
        wake.remove(name);
        waits.remove(name);
        lastReaction.remove(name);
        Lease lease = leases.get(name);
        if (lease != null) {
            if (leaseOfflineTtl <= 0) {
                leases.remove(name);
            } else {
                leases.put(name, new Lease(lease.hash(), false, now + leaseOfflineTtl));
                lapsing.addLast(new OfflineLease(name, now + leaseOfflineTtl));
            }
        }
        return new Departure(true, name, online());
    }

    /** Refreshes a name's last-seen time; {@code reaction} also marks it live for liveness. */
    public synchronized void touch(String name, double now, boolean reaction) {
        lastSeen.remove(name);
        lastSeen.put(name, now);
        if (reaction && byName.containsKey(name)) {
            lastReaction.put(name, now);
        }
    }

    /** Sorted bound names (sidecars included). */
    public synchronized List<String> online() {
        return new ArrayList<>(byName.keySet());
    }

    /** True when {@code name} is bound to a live socket. */
    public synchronized boolean isOnline(String name) {
        return byName.containsKey(name);
    }

    /** The session bound to {@code name}, or null. */
    public synchronized Session session(String name) {
        return byName.get(name);
    }

    /** Open sockets. */
    public synchronized int connectedClients() {
        // A socket the hub is closing is gone for every later snapshot, as in the reference,
        // even though its TCP connection may take a moment to finish.
        int open = 0;
        for (Session s : sockets) {
            if (!s.closing()) {
                open++;
            }
        }
        return open;
    }

    /** Sockets that may receive broadcasts: all on an open hub, authenticated ones on a token hub. */
    public synchronized List<Session> audience() {
        List<Session> out = new ArrayList<>(sockets.size());
        for (Session s : sockets) {
            if (s.authenticated() && !s.closing()) {
                out.add(s);
            }
        }
        return out;
    }

    /** Every name seen since start with its last-seen time, sorted by name. */
    public synchronized TreeMap<String, Double> lastSeen() {
        return new TreeMap<>(lastSeen);
    }

    /** Last reaction time of online names. */
    public synchronized Map<String, Double> lastReactions() {
        return new TreeMap<>(lastReaction);
    }

    /** Replaces a name's roles (empty clears). */
    public synchronized void roles(String name, List<String> value) {
        if (!byName.containsKey(name)) {
            return;
        }
        if (value.isEmpty()) {
            roles.remove(name);
        } else {
            roles.put(name, List.copyOf(value));
        }
    }

    /** Names with roles. */
    public synchronized Map<String, List<String>> roles() {
        return new TreeMap<>(roles);
    }

    /** Sets or clears ({@code unknown}) a name's wake capability. */
    public synchronized void wake(String name, String capability) {
        if (!byName.containsKey(name)) {
            return;
        }
        if ("unknown".equals(capability)) {
            wake.remove(name);
        } else {
            wake.put(name, capability);
        }
    }

    /** Non-unknown wake capabilities of online names. */
    public synchronized Map<String, String> wake() {
        return new TreeMap<>(wake);
    }

    /** Records an advisory wait edge waiter → task. */
    public synchronized void addWait(String waiter, String taskId) {
        if (byName.containsKey(waiter)) {
            waits.computeIfAbsent(waiter, k -> new LinkedHashSet<>()).add(taskId);
        }
    }

    /** Clears a waiter's edge on a task (it obtained it). */
    public synchronized void clearWait(String waiter, String taskId) {
        Set<String> tasks = waits.get(waiter);
        if (tasks != null) {
            tasks.remove(taskId);
            if (tasks.isEmpty()) {
                waits.remove(waiter);
            }
        }
    }

    /** Drops every edge on a task (it was released). */
    public synchronized void pruneWaits(String taskId) {
        waits.values().forEach(s -> s.remove(taskId));
        waits.values().removeIf(Set::isEmpty);
    }

    /** A copy of the wait-for graph: waiter → tasks. */
    public synchronized Map<String, Set<String>> waitGraph() {
        Map<String, Set<String>> copy = new HashMap<>();
        waits.forEach((k, v) -> copy.put(k, Set.copyOf(v)));
        return copy;
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
