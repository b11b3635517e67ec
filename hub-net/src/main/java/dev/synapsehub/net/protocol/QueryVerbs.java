package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.messaging.DeadLetter;
import dev.synapsehub.core.resource.ResourceOffer;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.FieldCoercion;
import dev.synapsehub.net.wire.HubFrames;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Read-only verbs (contract §5.9, §5.17, §5.18). Claim state is read through the actor
 * (linearizable) and answered from the outbox thread, after every earlier broadcast.
 */
public final class QueryVerbs {
    private final VerbSupport support;
    private final BoardVerbs board;
    private final CoordinationActor actor;
    private final SessionRegistry registry;
    private final Outbox outbox;
    private final HubFrames frames;
    private final HubExtensions extensions;
    private final WhoFacts facts;
    private final ClaimFrames claimFrames;
    private final KnownIdentities known = new KnownIdentities();

    /**
     * What {@code who_snapshot} says of the hub itself, fixed when it starts.
     *
     * @param hubVersion the hub's version
     * @param configEpoch fingerprint of the effective configuration
     * @param journaled true when the hub has a durable journal (mailbox counts are then read)
     * @param liveness consume-liveness settings: {@code agent_liveness} only while tracked (§6.8)
     */
    record WhoFacts(String hubVersion, String configEpoch, boolean journaled, LivenessSettings liveness) {
    }

    /** The read-only verbs; {@code extensions} scope and label the reads (a mesh reads linearizably). */
    QueryVerbs(VerbSupport support, BoardVerbs board, CoordinationActor actor, SessionRegistry registry, Outbox outbox,
            HubFrames frames, HubExtensions extensions, WhoFacts facts) {
        this.support = support;
        this.board = board;
        this.actor = actor;
        this.registry = registry;
        this.outbox = outbox;
        this.frames = frames;
        this.extensions = extensions;
        this.facts = facts;
        this.claimFrames = new ClaimFrames(frames);
    }

    /** What a state snapshot reads on the actor thread, in one linearizable read. */
    private record StateRead(List<Claim> claims, List<ResourceOffer> resources, List<DeadLetter> deadLetters) {
    }

    /** True for the verbs handled here. */
    public static boolean handles(String type) {
        return "state_request".equals(type) || "who_request".equals(type) || "wait_request".equals(type);
    }

    /** Handles one query (on the connection's event loop). */
    public void handle(Request r) {
        switch (r.type()) {
            case "state_request":
                state(r);
                break;
            case "who_request":
                whoRequest(r);
                break;
            case "wait_request":
                waitRequest(r);
                break;
            default:
                throw new IllegalArgumentException(r.type());
        }
    }

    private void state(Request r) {
        double now = support.now();
        support.afterRead(r, "answering state_request", extensions.read(r, () -> actor.read(s ->
                new StateRead(s.claims().snapshot(now), s.resources().snapshot(now), s.messaging().deadLetters(now)))),
                read -> {
            ObjectNode f = frames.envelope(r.sender(), "state_snapshot", "State snapshot", now);
            ObjectNode snapshot = f.putObject("snapshot");
            ArrayNode active = snapshot.putArray("active_claims");
            for (Claim c : read.claims()) {
                claimFrames.writeClaim(active.addObject(), c);
            }
            ArrayNode agents = snapshot.putArray("agents");
            registry.lastSeen().forEach((name, seen) -> {
                ObjectNode a = agents.addObject();
                a.put("agent", name);
                HubFrames.putFloat(a, "last_seen", seen);
            });
            ArrayNode resources = snapshot.putArray("resources");
            for (ResourceOffer o : read.resources()) {
                board.writeOffer(resources.addObject(), o);
            }
            HubFrames.putFloat(snapshot, "generated_at", now);
            ArrayNode dead = snapshot.putArray("dead_letters");
            for (DeadLetter d : read.deadLetters()) {
                ObjectNode o = dead.addObject();
                o.put("target", d.target());
                o.put("count", d.count());
                HubFrames.putFloat(o, "last_ts", d.lastTs());
                o.put("last_sender", d.lastSender());
            }
            snapshot.putArray("pending_relay_approvals");
            extensions.labelRead(f, r);
            outbox.send(r.session(), f);
        });
    }

    /** who_request: with a journal the pending projection is read through the actor. */
    private void whoRequest(Request r) {
        if (!facts.journaled()) {
            outbox.send(r.session(), who(r.sender(), null));
            return;
        }
        List<String> online = new ArrayList<>(registry.online());
        online.add(r.sender()); // the requester is always listed (contract A11 M1)
        known.touchOnline(online);
        support.afterRead(r, "answering who_request", extensions.read(r,
                () -> actor.read(s -> s.messaging().mailboxPending())), pending -> {
                    ObjectNode f = who(r.sender(), known.withZeros(pending));
                    extensions.labelRead(f, r); // again, knowing the request (a linearizable read says so)
                    outbox.send(r.session(), f);
                });
    }

    /**
     * The {@code who_snapshot} frame for {@code requester} (contract §6.8).
     *
     * @param pending identity to pending directed messages, or null without a journal
     */
    ObjectNode who(String requester, Map<String, Integer> pending) {
        double now = support.now();
        // one snapshot of the bound names: roles, liveness and wake agree with the online list,
        // and the last-seen table of offline names is not copied
        List<SessionRegistry.Presence> bound = registry.presence();
        Map<String, SessionRegistry.Presence> byName = new java.util.HashMap<>();
        List<String> online = new ArrayList<>(bound.size());
        for (SessionRegistry.Presence p : bound) {
            byName.put(p.name(), p);
            online.add(p.name());
        }
        ObjectNode f = frames.envelope(requester, "who_snapshot", "Who snapshot", now);
        HubFrames.putStrings(f, "online_agents", online);
        ObjectNode roles = f.putObject("agent_roles");
        for (SessionRegistry.Presence p : bound) {
            if (!p.roles().isEmpty()) {
                HubFrames.putStrings(roles, p.name(), p.roles());
            }
        }
        f.put("connected_clients", registry.connectedClients());
        f.put("hub_version", facts.hubVersion());
        f.put("config_epoch", facts.configEpoch());
        if (pending == null) {
            f.putNull("mailbox_pending");
        } else {
            ObjectNode p = f.putObject("mailbox_pending");
            pending.forEach(p::put);
        }
        if (facts.liveness().tracked()) { // §6.8: only while stale-recipient tracking is on
            putLiveness(f.putObject("agent_liveness"), bound, byName, now);
        }
        ObjectNode w = null;
        for (SessionRegistry.Presence p : bound) {
            if (!dev.synapsehub.net.session.Session.UNKNOWN_WAKE.equals(p.wake())) {
                if (w == null) {
                    w = f.putObject("wake_capabilities");
                }
                w.put(p.name(), p.wake());
            }
        }
        extensions.labelRead(f);
        return f;
    }

    /** §6.8 {@code agent_liveness}: every bound name but the sidecars, with its waiter and reaction. */
    private void putLiveness(ObjectNode liveness, List<SessionRegistry.Presence> bound,
            Map<String, SessionRegistry.Presence> byName, double now) {
        for (SessionRegistry.Presence p : bound) {
            String name = p.name();
            if (name.endsWith("-rx")) {
                continue;
            }
            ObjectNode l = liveness.putObject(name);
            double last = p.lastReaction(); // NaN only before its bind set it
            l.put("proven_live", !Double.isNaN(last));
            // §8.6: its -rx/-pane-rx, seen within the waiter window
            l.put("has_live_waiter", LiveWaiters.has(name, now, facts.liveness().waiterWindow(), n -> {
                SessionRegistry.Presence waiter = byName.get(n);
                return waiter == null ? null : waiter.lastSeen();
            }));
            if (Double.isNaN(last)) {
                l.putNull("last_reaction_age");
            } else {
                HubFrames.putFloat(l, "last_reaction_age", Math.max(0.0, now - last));
            }
        }
    }

    /** Outcome of a wait check, computed on the actor thread from committed state. */
    private record WaitCheck(String holder, boolean deadlock) {
    }

    private void waitRequest(Request r) {
        if (FieldCoercion.notText(r.get("task_id"))) {
            ObjectNode e = frames.error(r.sender(), "Field 'task_id' must be a string.",
                    support.now());
            e.put("error_code", "malformed_request");
            e.put("field", "task_id");
            outbox.send(r.session(), e);
            return;
        }
        String id = FieldCoercion.text(r.get("task_id"));
        id = id == null ? "" : PythonWhitespace.strip(id);
        if (id.isEmpty()) {
            String payload = FieldCoercion.text(r.get("payload"));
            id = payload == null ? "" : PythonWhitespace.strip(payload);
        }
        String taskId = id;
        String waiter = r.sender();
        Map<String, Set<String>> graph = registry.waitGraph();
        double now = support.now();
        support.afterRead(r, "answering wait_request", actor.read(s -> check(s, taskId, waiter, graph, now)),
                check -> {
            double at = support.now();
            if (check == null) {
                outbox.send(r.session(), claimFrames.denied("wait_denied", waiter, taskId,
                        "Task '" + taskId + "' is not claimed; nothing to wait for.", at));
            } else if (check.holder().equals(waiter)) {
                outbox.send(r.session(), claimFrames.denied("wait_denied", waiter, taskId,
                        "You already hold '" + taskId + "'.", at));
            } else if (check.deadlock()) {
                ObjectNode f = claimFrames.denied("wait_denied", waiter, taskId,
                        "Waiting for '" + taskId + "' held by " + check.holder() + " would deadlock.", at);
                f.put("holder", check.holder());
                outbox.send(r.session(), f);
            } else {
                registry.addWait(waiter, taskId);
                ObjectNode f = frames.envelope(waiter, "wait_granted",
                        "Waiting for '" + taskId + "' held by " + check.holder() + ".", at);
                f.put("task_id", taskId);
                f.put("holder", check.holder());
                outbox.send(r.session(), f);
            }
        });
    }

    /** Runs on the actor thread: copies out only what the answer needs. */
    private static WaitCheck check(CoordinationState state, String taskId, String waiter,
                                   Map<String, Set<String>> graph, double now) {
        Optional<Claim> claim = taskId.isEmpty() ? Optional.empty() : state.claims().liveClaim(taskId, now);
        if (claim.isEmpty()) {
            return null;
        }
        String holder = claim.get().owner();
        if (holder.equals(waiter)) {
            return new WaitCheck(holder, false);
        }
        Deque<String> todo = new ArrayDeque<>();
        Set<String> seen = new HashSet<>();
        todo.push(holder);
        while (!todo.isEmpty() && seen.size() < 10_000) {
            String agent = todo.pop();
            if (agent.equals(waiter)) {
                return new WaitCheck(holder, true);
            }
            if (!seen.add(agent)) {
                continue;
            }
            for (String task : graph.getOrDefault(agent, Set.of())) {
                state.claims().liveClaim(task, now).ifPresent(c -> todo.push(c.owner()));
            }
        }
        return new WaitCheck(holder, false);
    }
}
