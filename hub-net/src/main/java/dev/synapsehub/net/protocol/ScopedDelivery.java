package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.net.delivery.Delivery;
import dev.synapsehub.net.delivery.DeliveryIndex;
import dev.synapsehub.net.delivery.LiveClaims;
import dev.synapsehub.net.session.Session;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Scoped delivery of claim traffic and presence (our extension, {@code docs/protocol.md}
 * "Scoped delivery"). Connections in broadcast mode are the loud members of the fan-out and get
 * every batch; a scoped connection gets, as private frames in commit order, only the changes
 * its declaration matches, its own, those of handoffs it is a party to, and those touching its
 * live claims. The subscriber index and the live-claim view are owned by the outbox thread,
 * which publishes in commit order; I/O threads only hand declarations to it.
 */
public final class ScopedDelivery {
    private final Outbox outbox;
    private final Delivery defaultDelivery;
    private final Clock clock;
    private final DeliveryIndex<Session> index = new DeliveryIndex<>();
    /** Scoped connections by bound name (the owners and handoff parties named by a change). */
    private final Map<String, Session> scopedByName = new HashMap<>();
    private final LiveClaims live = new LiveClaims();
    /**
     * Tasks published since start and before the start-up live claims were indexed into
     * {@link #live} (theirs is newer); null once indexed, or given up.
     */
    private Set<String> publishedBeforeSeed = new HashSet<>();
    /**
     * More tasks than this published before the start-up live claims arrived: they are too old to
     * use. Once they arrived, reaching it indexes them instead (the set stays bounded).
     */
    static final int SEED_WINDOW = 65_536;
    /**
     * The start-up live claims, arrived but not indexed yet (unsorted, as read): indexing a
     * restarted hub's every claim costs its start CPU time, and {@link #live} is read only for
     * scoped connections, which a hub may never have. Null when none wait.
     */
    private List<Claim> pendingSeed;
    /**
     * On a hub whose default is scoped, the connections that declared {@code broadcast}: exactly
     * the loud ones, since every other joins quiet. Kept on the outbox thread in commit order, so
     * a frame for loud connections is built and published only when one can take it (on a fleet
     * of scoped agents every claim change was encoded and fanned out to every I/O loop for nobody).
     */
    private final Set<Session> declaredLoud = new HashSet<>();
    /** Scoped connections; read off the outbox thread only to skip work when there are none. */
    private volatile int scopedCount;

    ScopedDelivery(Outbox outbox, Delivery defaultDelivery, Clock clock) {
        this.outbox = outbox;
        this.defaultDelivery = defaultDelivery == null ? Delivery.EVERYTHING : defaultDelivery;
        this.clock = clock;
    }

    /** The delivery of a connection that declares none ({@code --default-delivery}). */
    public Delivery defaultDelivery() {
        return defaultDelivery;
    }

    /** Connections in scoped mode (measured on the outbox thread). */
    public int scopedConnections() {
        return scopedCount;
    }

    /**
     * From any thread: {@code session} (bound) now wants {@code delivery}; {@code ack} (may be
     * null) is sent to it right after, so every frame after the ack follows the new declaration.
     */
    public void declare(Session session, Delivery delivery, ObjectNode ack) {
        onOutbox(() -> {
            apply(session, delivery);
            if (ack != null) {
                outbox.send(session, ack);
            }
        });
    }

    /** From any thread: a closed connection leaves the index. */
    public void forget(Session session) {
        onOutbox(() -> {
            declaredLoud.remove(session);
            if (index.get(session) != null) {
                index.remove(session);
                String name = session.name();
                if (name != null) {
                    scopedByName.remove(name, session);
                }
                scopedCount = index.size();
            }
        });
    }

    /**
     * From any thread: the live claims a restarted hub holds, before anyone could change them, in
     * any order (the list is kept, not copied: the caller hands it over). On the outbox thread
     * they are kept as they are and indexed only when the view is first needed: at once if a
     * connection is scoped already, else when one declares scoped, or when so many tasks were
     * published since start that tracking them would outgrow its bound ({@link #SEED_WINDOW}).
     * Indexing takes them in task id order and skips every task published since start (its
     * publication is newer). Claims arriving after that many publications are dropped as too old.
     */
    public void seed(List<Claim> claims) {
        onOutbox(() -> {
            if (publishedBeforeSeed == null) {
                return; // arrived too late to be trusted
            }
            pendingSeed = claims;
            if (index.size() > 0) {
                indexSeed();
            }
        });
    }

    /**
     * Outbox thread: indexes the start-up live claims that wait (see {@link #seed}) into
     * {@link #live}, before anything reads it for a scoped connection; afterwards publications
     * alone keep it.
     */
    private void indexSeed() {
        List<Claim> claims = pendingSeed;
        if (claims == null) {
            return;
        }
        pendingSeed = null;
        List<Claim> byTask = new ArrayList<>(claims);
        byTask.sort(java.util.Comparator.comparing(Claim::taskId));
        for (Claim c : byTask) {
            if (!publishedBeforeSeed.contains(c.taskId())) {
                live.put(held(c)); // an ended lease is kept as today: reads skip it, the heap sweeps it
            }
        }
        publishedBeforeSeed = null;
    }

    /** Whether the start-up live claims wait to be indexed (outbox thread; for tests). */
    boolean seedPending() {
        return pendingSeed != null;
    }

    /** Claims in the view of live claims (outbox thread; for tests). */
    int liveClaimsIndexed() {
        return live.size();
    }

    /**
     * Outbox thread: publishes the frames of one claim change, in order: to every loud
     * connection as a broadcast, and to each scoped connection that the rules select privately.
     *
     * @param claim the claim after the change (as released, for a release)
     * @param previousOwner the giver of a handoff, else null
     */
    void claimTraffic(List<String> texts, Session origin, Claim claim, boolean released, String previousOwner) {
        if (!outbox.executor().inEventLoop()) {
            // every publisher runs on the outbox thread; should one not, its order is kept all the same
            outbox.runInOrder(() -> claimTraffic(texts, origin, claim, released, previousOwner));
            return;
        }
        double now = clock.nowSeconds();
        live.expire(now);
        Set<Session> scoped = null;
        if (index.size() > 0) {
            indexSeed(); // a scoped declaration indexed it already; should none have, before it is read
            scoped = new LinkedHashSet<>();
            index.match(claim.taskId(), claim.worktree(), claim.paths(), scoped);
            List<String> parties = new ArrayList<>(4);
            parties.add(claim.owner());
            if (previousOwner != null) {
                parties.add(previousOwner);
            }
            live.ownersTouching(claim.worktree(), claim.paths(), now, parties);
            for (String party : parties) {
                Session s = scopedByName.get(party);
                if (s != null) {
                    scoped.add(s);
                }
            }
            if (origin != null && index.get(origin) != null) {
                scoped.add(origin); // the requester always gets its own replies
            }
        }
        for (String text : texts) {
            loud(text, origin);
        }
        if (scoped != null) {
            for (Session s : scoped) {
                for (String text : texts) {
                    outbox.send(s, text);
                }
            }
        }
        if (publishedBeforeSeed != null && publishedBeforeSeed.add(claim.taskId())) {
            if (pendingSeed != null && publishedBeforeSeed.size() >= SEED_WINDOW) {
                // index the waiting claims now rather than track more tasks; this task is in the
                // set, so the seed skips it and the change below is what stays
                indexSeed();
            } else if (publishedBeforeSeed.size() > SEED_WINDOW) {
                publishedBeforeSeed = null; // claims arriving later would be too old
            }
        }
        if (released) {
            live.remove(claim.taskId());
        } else {
            live.put(held(claim));
        }
    }

    /**
     * From any thread: a {@code presence_update} about {@code agent}. {@code loudFrame} (null:
     * none, {@code --presence-fanout-limit} reached) goes to every loud connection, built only
     * when there is one (or the relay log): each frame lists every online agent, so building it
     * for nobody on every join of a fleet whose sockets are all scoped cost time quadratic in its
     * size. The scoped connections the presence rule selects get {@code frame} (built only when
     * one does). Both are built on the outbox thread, in commit order.
     *
     * @param session the agent's own connection (it is told nothing: it has its welcome)
     */
    public void presence(Supplier<String> loudFrame, Supplier<String> frame, Session session, String agent) {
        if (loudFrame == null && scopedCount == 0) {
            return;
        }
        onOutbox(() -> {
            String loudText = loudFrame != null && loudAudience() ? loudFrame.get() : null;
            if (loudText != null) {
                loud(loudText, session);
            }
            if (index.size() == 0) {
                return;
            }
            Set<Session> audience = presenceAudience(session, agent);
            audience.remove(session);
            if (audience.isEmpty()) {
                return;
            }
            String text = loudText != null ? loudText : frame.get();
            for (Session s : audience) {
                outbox.send(s, text);
            }
        });
    }

    /**
     * The scoped connections told of {@code agent}'s presence: those subscribed to a worktree it
     * declared, and those a change of one of its live claims would reach.
     */
    private Set<Session> presenceAudience(Session session, String agent) {
        indexSeed(); // a scoped declaration indexed it already; should none have, before it is read
        Set<Session> out = new LinkedHashSet<>();
        Delivery declared = session == null ? null : index.get(session);
        if (declared != null) {
            for (String w : declared.worktrees()) {
                index.matchWorktree(w, out);
            }
        }
        double now = clock.nowSeconds();
        for (LiveClaims.Held h : live.of(agent, now)) {
            index.match(h.taskId(), h.worktree(), h.paths(), out);
            List<String> owners = new ArrayList<>();
            live.ownersTouching(h.worktree(), h.paths(), now, owners);
            for (String owner : owners) {
                Session s = scopedByName.get(owner);
                if (s != null) {
                    out.add(s);
                }
            }
        }
        return out;
    }

    /**
     * To every loud connection. While no connection is quiet (no scoped declaration, and
     * broadcast by default) that is every connection: then the frame joins the batch of other
     * broadcasts, as before scoped delivery existed, instead of starting a batch of its own.
     */
    private void loud(String text, Session origin) {
        if (!loudAudience()) {
            return; // no loud connection and no relay log: the requester, quiet, is sent its reply privately
        }
        if (index.size() == 0 && !defaultDelivery.scoped()) {
            outbox.broadcast(text, origin);
        } else {
            outbox.broadcastLoud(text, origin);
        }
    }

    /**
     * Outbox thread: whether a frame for loud connections can reach anyone. On a hub whose
     * default is broadcast, connections join loud on their own I/O loops, unordered with this
     * thread, so there it is always true.
     */
    private boolean loudAudience() {
        return !defaultDelivery.scoped() || !declaredLoud.isEmpty() || outbox.mirroring();
    }

    private void apply(Session session, Delivery delivery) {
        String name = session.name();
        if (delivery.scoped()) {
            declaredLoud.remove(session);
        } else {
            declaredLoud.add(session);
        }
        if (delivery.scoped()) {
            indexSeed(); // the view is needed from now on: complete before this connection's first change
            index.put(session, delivery);
            if (name != null) {
                scopedByName.put(name, session);
            }
        } else {
            index.remove(session);
            if (name != null) {
                scopedByName.remove(name, session);
            }
        }
        scopedCount = index.size();
        outbox.quiet(session, delivery.scoped());
    }

    private void onOutbox(Runnable task) {
        if (outbox.executor().inEventLoop()) {
            task.run();
        } else {
            outbox.runInOrder(task);
        }
    }

    private static LiveClaims.Held held(Claim c) {
        return new LiveClaims.Held(c.taskId(), c.owner(), c.worktree(), c.paths(), c.leaseExpiresAt());
    }
}
