package dev.synapsehub.net.session;

import dev.synapsehub.core.messaging.AddressMatcher;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The edge's connection table, split by concern: admission ({@link Admission}), bound names
 * (a concurrent sorted map), ownership leases ({@link NameLeases}), takeover throttling
 * ({@link TakeoverThrottle}), offline last-seen times ({@link SeenNames}) and advisory wait edges
 * ({@link WaitGraph}). A bound name's presence (last seen, last reaction, roles, wake) lives on
 * its {@link Session}. Not coordination state: the claim registry lives in the actor.
 *
 * <p>Locking: binding and unbinding a name take one name lock, so a bind's checks (lease,
 * holder, throttle) and its effect are atomic; admission has its own monitor. The per-frame
 * path ({@link #touch}) takes no lock at all: it writes the sender's own session. Lookups
 * ({@link #session}, {@link #isOnline}, {@link #online}) and chat fan-out ({@link #presence})
 * read the concurrent map without a lock and copy no table.
 */
public final class SessionRegistry {
    /** How many offline names the last-seen table remembers (oldest forgotten first). */
    public static final int MAX_REMEMBERED_NAMES = 65_536;

    /** Why a socket may not be admitted (close code and exact reason label). */
    public record Refusal(int code, String reason) {
    }

    /** The result of binding a name (contract §3.4–3.5). */
    public record Bind(Kind kind, Session superseded, boolean joined, String leaseToken,
                       List<String> onlineAgents, int connectedClients) {
        /** Outcome kinds: bound, or refused (4009 conflict, 4016 owned, 4014 cooldown / quarantine). */
        public enum Kind { BOUND, CONFLICT, OWNED, OWNER_LEASED, TAKEOVER_COOLDOWN, TAKEOVER_QUARANTINE }
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

    /**
     * One bound name as chat routing and {@code who} see it.
     *
     * @param lastSeen hub time of its last frame (or bind)
     * @param lastReaction hub time of its last non-heartbeat frame (or bind)
     */
    public record Presence(String name, List<String> roles, String wake, double lastSeen, double lastReaction) {
    }

    private final Admission admission;
    private final ConcurrentSkipListMap<String, Session> byName = new ConcurrentSkipListMap<>();
    /** Held while a name binds or leaves: the bind's checks and effect are one step. */
    private final Object nameLock = new Object();
    private final NameLeases leases;
    private final TakeoverThrottle throttle;
    private final SeenNames seen = new SeenNames(MAX_REMEMBERED_NAMES);
    private final WaitGraph waits = new WaitGraph(byName::containsKey);
    /** Binds so far, written under the name lock once the bound name is in {@link #byName}. */
    private volatile long binds;

    /** A table enforcing the admission caps of contract §3.2, with the default takeover policy. */
    public SessionRegistry(int maxClients, int maxPerHost, int maxUnauth, boolean secured, double leaseOfflineTtl) {
        this(maxClients, maxPerHost, maxUnauth, secured, leaseOfflineTtl, TakeoverPolicy.DEFAULTS);
    }

    /** A table enforcing the admission caps of contract §3.2 and {@code takeoverPolicy}. */
    public SessionRegistry(int maxClients, int maxPerHost, int maxUnauth, boolean secured, double leaseOfflineTtl,
                           TakeoverPolicy takeoverPolicy) {
        this.admission = new Admission(maxClients, maxPerHost, maxUnauth, secured);
        this.leases = new NameLeases(leaseOfflineTtl);
        this.throttle = new TakeoverThrottle(takeoverPolicy);
    }

    /** Admission checks in contract order; null when admitted (and counted). */
    public Refusal admit(Session session) {
        return admission.admit(session);
    }

    /** Binds {@code name} to {@code session} following contract §3.4 steps 3–4 and §3.5. */
    public Bind bind(Session session, String name, boolean takeover, String ownerLease,
                     boolean wantLease, double now) {
        synchronized (nameLock) {
            leases.sweep(now);
            NameLeases.Presented presented = leases.check(name, ownerLease, now);
            if (presented == NameLeases.Presented.REFUSED) {
                return new Bind(Bind.Kind.OWNED, null, false, null, online(), admission.size());
            }
            // a sidecar X-rx / X-pane-rx stands for X (mailbox, private routing, history): while X holds a
            // lease, binding it needs X's owner_lease too (ours: the contract is silent). A sidecar presenting
            // its own live lease passed that check when the lease was granted: one token cannot match both
            String owner = AddressMatcher.logicalName(name);
            if (!owner.equals(name) && presented != NameLeases.Presented.MATCHED
                    && leases.check(owner, ownerLease, now) == NameLeases.Presented.REFUSED) {
                return new Bind(Bind.Kind.OWNER_LEASED, null, false, null, online(), admission.size());
            }
            Session holder = byName.get(name);
            Session superseded = null;
            if (holder != null && holder != session) {
                if (!takeover) {
                    return new Bind(Bind.Kind.CONFLICT, null, false, null, online(), admission.size());
                }
                Bind.Kind throttled = throttle.admit(name, now);
                if (throttled != null) {
                    return new Bind(throttled, null, false, null, online(), admission.size());
                }
                superseded = holder;
                session.inheritDeclarations(holder); // roles and wake were the name's, as before
            }
            List<String> before = online();
            boolean joined = holder == null;
            long order = binds + 1;
            session.bindName(name, order);
            session.touch(now, true);
            byName.put(name, session); // bound before the offline record goes: a reader always finds the name
            binds = order; // counted once visible: a reader of the count finds every bind it counts
            seen.bound(name);
            String token = leases.bound(name, presented, wantLease);
            return new Bind(Bind.Kind.BOUND, superseded, joined, token, before, admission.size());
        }
    }

    /**
     * How many binds there were so far. Every connection whose {@link Session#bindOrder()} is at
     * most the value read is in {@link #presence()} and {@link #session} from then on (until it
     * leaves); one bound later has a larger order (chat fan-out, to reach a recipient that bound
     * after the chat's recipients were resolved).
     */
    public long binds() {
        return binds;
    }

    /** True when {@code name} holds an ownership lease that has not lapsed at {@code now}. */
    public boolean leaseLive(String name, double now) {
        // no sweep here: a sweep outside the name lock could drop a lease between a bind's check and bound
        return leases.live(name, now);
    }

    /**
     * Ends {@code name}'s ownership lease, its holder online or not (its identity pin was
     * reclaimed, contract A2.6): the next bind of the name needs no {@code owner_lease}, and a
     * holder evicted after this leaves no offline lease behind. True when there was one.
     */
    public boolean revokeLease(String name) {
        synchronized (nameLock) {
            return leases.revoke(name);
        }
    }

    /** Name leases held, their holder online or not. */
    public int leaseCount() {
        return leases.count();
    }

    /** Name leases asked for and not granted, because the lease table was full. */
    public long leasesRefused() {
        return leases.refused();
    }

    /** How many takeover quarantines were started since the hub started. */
    public long takeoverQuarantines() {
        return throttle.quarantinesStarted();
    }

    /** Forgets a closed socket; unbinds its name if it still owns it (contract §3.8). */
    public Departure remove(Session session, double now) {
        boolean admitted = admission.remove(session);
        synchronized (nameLock) {
            leases.sweep(now);
            if (!admitted) {
                return new Departure(false, null, online());
            }
            String name = session.name();
            if (name == null || byName.get(name) != session) {
                return new Departure(false, name, online());
            }
            seen.left(name, session.lastSeen()); // remembered before unbound: a reader always finds the name
            byName.remove(name);
            waits.dropWaiter(name);
            leases.departed(name, now);
            return new Departure(true, name, online());
        }
    }

    /**
     * A frame from {@code session}'s bound name arrived at {@code now}; {@code reaction} (any
     * frame but a heartbeat) also marks it live for liveness. The per-frame path: no lock, no
     * table, only the sender's own session.
     */
    public void touch(Session session, double now, boolean reaction) {
        session.touch(now, reaction);
    }

    /** Sorted bound names (sidecars included). */
    public List<String> online() {
        return new ArrayList<>(byName.keySet());
    }

    /** True when {@code name} is bound to a live socket. */
    public boolean isOnline(String name) {
        return byName.containsKey(name);
    }

    /** The session bound to {@code name}, or null. */
    public Session session(String name) {
        return byName.get(name);
    }

    /** Hub time of the last frame of {@code name} while it is bound; null when it is not. */
    public Double lastSeenIfBound(String name) {
        Session s = byName.get(name);
        return s == null ? null : s.lastSeen();
    }

    /** Hub time of the last reaction of {@code name} while it is bound; null when it is not. */
    public Double lastReactionIfBound(String name) {
        Session s = byName.get(name);
        return s == null ? null : s.lastReaction();
    }

    /** The roles {@code name} declared while bound (empty when none or not bound). */
    public List<String> rolesOf(String name) {
        Session s = byName.get(name);
        return s == null ? List.of() : s.roles();
    }

    /** Every bound name with its presence, sorted by name: one pass, no table copied. */
    public List<Presence> presence() {
        List<Presence> out = new ArrayList<>();
        for (Map.Entry<String, Session> e : byName.entrySet()) {
            Session s = e.getValue();
            out.add(new Presence(e.getKey(), s.roles(), s.wake(), s.lastSeen(), s.lastReaction()));
        }
        return out;
    }

    /** Open sockets. */
    public int connectedClients() {
        // A socket the hub is closing is gone for every later snapshot, as in the reference,
        // even though its TCP connection may take a moment to finish.
        return admission.connectedClients();
    }

    /** Sockets that may receive broadcasts: all on an open hub, authenticated ones on a token hub. */
    public List<Session> audience() {
        return admission.audience();
    }

    /** Every name seen since start with its last-seen time, sorted by name. */
    public TreeMap<String, Double> lastSeen() {
        TreeMap<String, Double> out = new TreeMap<>();
        byName.forEach((name, s) -> out.put(name, s.lastSeen()));
        seen.copyInto(out);
        return out;
    }

    /** Last reaction time of online names. */
    public Map<String, Double> lastReactions() {
        TreeMap<String, Double> out = new TreeMap<>();
        byName.forEach((name, s) -> out.put(name, s.lastReaction()));
        return out;
    }

    /** Replaces a name's roles (empty clears); ignored when the name is not bound. */
    public void roles(String name, List<String> value) {
        Session s = byName.get(name);
        if (s == null || s.roles().equals(value)) {
            return;
        }
        synchronized (nameLock) {
            if (byName.get(name) != s) {
                return;
            }
            s.roles(value);
            // counted as a bind: a chat that resolved its recipients before these roles (a registration's
            // frame sets them just after its bind) checks this connection again at fan-out (ChatVerb)
            long order = binds + 1;
            s.rebind(order);
            binds = order;
        }
    }

    /** Names with roles. */
    public Map<String, List<String>> roles() {
        TreeMap<String, List<String>> out = new TreeMap<>();
        byName.forEach((name, s) -> {
            if (!s.roles().isEmpty()) {
                out.put(name, s.roles());
            }
        });
        return out;
    }

    /** Sets or clears ({@code unknown}) a name's wake capability; ignored when the name is not bound. */
    public void wake(String name, String capability) {
        Session s = byName.get(name);
        if (s != null) {
            s.wake(capability);
        }
    }

    /** Non-unknown wake capabilities of online names. */
    public Map<String, String> wake() {
        TreeMap<String, String> out = new TreeMap<>();
        byName.forEach((name, s) -> {
            if (!Session.UNKNOWN_WAKE.equals(s.wake())) {
                out.put(name, s.wake());
            }
        });
        return out;
    }

    /** Records an advisory wait edge waiter → task (only while the waiter is bound). */
    public void addWait(String waiter, String taskId) {
        waits.add(waiter, taskId);
    }

    /** Clears a waiter's edge on a task (it obtained it). */
    public void clearWait(String waiter, String taskId) {
        waits.clear(waiter, taskId);
    }

    /** Drops every edge on a task (it was released). */
    public void pruneWaits(String taskId) {
        waits.prune(taskId);
    }

    /** A copy of the wait-for graph: waiter → tasks. */
    public Map<String, Set<String>> waitGraph() {
        return waits.copy();
    }
}
