package dev.synapsehub.spec.model;

import dev.synapsehub.core.reply.Refusal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The independent shadow model: what the spec says the registry must hold and answer. It keeps
 * its own owner, principal, epoch, expiry, version, status, scope and checkpoint per task, its
 * own retained checkpoints, its own insertion order and epoch counter; its TTL window, default
 * TTL and lifecycle table are taken from seed 000, not from the core's classes.
 */
final class ShadowModel {
    /** Seed 000 constants table, restated on purpose (the model must not read the code's values). */
    static final double MIN_TTL = 30.0;
    static final double MAX_TTL = 2_592_000.0;
    static final double DEFAULT_TTL = 3600.0;

    private static final Map<String, Set<String>> NEXT = Map.of(
            "claimed", Set.of("working", "done", "failed"),
            "working", Set.of("input_required", "done", "failed"),
            "input_required", Set.of("working", "done", "failed"),
            "done", Set.of(),
            "failed", Set.of());

    /** One expected claim. Mutable only through {@link #copy()} and the model's commits. */
    static final class Slot {
        String task;
        String owner;
        String principal;
        String worktree;
        List<String> paths;
        double claimedAt;
        double expiresAt;
        long epoch;
        long version;
        String status;
        String checkpoint;
        long order;

        Slot copy() {
            Slot s = new Slot();
            s.task = task;
            s.owner = owner;
            s.principal = principal;
            s.worktree = worktree;
            s.paths = paths;
            s.claimedAt = claimedAt;
            s.expiresAt = expiresAt;
            s.epoch = epoch;
            s.version = version;
            s.status = status;
            s.checkpoint = checkpoint;
            s.order = order;
            return s;
        }

        @Override
        public String toString() {
            return task + "{owner=" + owner + ", principal=" + principal + ", " + worktree + paths
                    + ", epoch=" + epoch + ", v" + version + ", " + status + ", exp=" + expiresAt
                    + ", cp='" + checkpoint + "'}";
        }
    }

    /**
     * What the registry must answer.
     *
     * @param refusal null for a grant
     * @param conflictingTask for SCOPE_CONFLICT: the first conflicting task in insertion order
     * @param expected for a grant: the claim the reply must carry
     * @param invariantId the spec invariant the answer is evidence for
     * @param commit applies the grant to the model
     */
    record Prediction(Refusal refusal, String conflictingTask, Slot expected, String invariantId, Runnable commit) {
        static Prediction refuse(Refusal refusal, String id) {
            return new Prediction(refusal, null, null, id, () -> { });
        }

        boolean granted() {
            return refusal == null;
        }
    }

    final int cap;
    double now = 1000.0;
    long epochCounter;
    private long orderCounter;
    final Map<String, Slot> live = new HashMap<>();
    final Map<String, String> retained = new HashMap<>();
    /** First answers of keyed grants by ledger key (INV-CR-1); a refused keyed request is not here. */
    final Map<String, KeyedAnswer> ledger = new HashMap<>();
    /** Restarts so far, so a replay can be told apart from one across a restart. */
    int restarts;

    /** A remembered first answer: the request's digest, the stored response, the restart count then. */
    record KeyedAnswer(String digest, String response, int restartsAtGrant) {
    }

    /**
     * The first response the harness's renderer must have stored for a grant: the model's own
     * expected claim, at the decision instant.
     */
    static String response(Slot expected, double at) {
        return expected.task + "|" + expected.owner + "|" + expected.epoch + "|" + expected.version + "|" + at;
    }

    ShadowModel(int cap) {
        this.cap = cap;
    }

    /** Moves the clock forward (never back) and expires every lease at or before it. */
    void advanceTo(double t) {
        if (t > now) {
            now = t;
        }
        live.values().removeIf(s -> {
            if (s.expiresAt <= now) {
                if (!s.checkpoint.isEmpty()) {
                    retained.put(s.task, s.checkpoint);
                }
                return true;
            }
            return false;
        });
    }

    int count(String principal) {
        int n = 0;
        for (Slot s : live.values()) {
            if (s.principal.equals(principal)) {
                n++;
            }
        }
        return n;
    }

    List<Slot> inOrder() {
        List<Slot> out = new ArrayList<>(live.values());
        out.sort(Comparator.comparingLong(s -> s.order));
        return out;
    }

    static double lease(Double requested) {
        double ttl = requested == null || requested.isNaN() || requested.isInfinite() ? DEFAULT_TTL : requested;
        return Math.min(MAX_TTL, Math.max(MIN_TTL, ttl));
    }

    private Slot firstConflict(String worktree, List<String> paths, Predicate<Slot> contends) {
        for (Slot s : inOrder()) {
            if (contends.test(s) && ModelScope.conflict(worktree, paths, s.worktree, s.paths)) {
                return s;
            }
        }
        return null;
    }

    /** A claim, renewal or takeover. */
    Prediction claim(String agent, String principalArg, String task, String worktree, List<String> declared,
                     Double ttl) {
        String principal = principalArg == null || principalArg.isEmpty() ? agent : principalArg;
        List<String> paths = ModelScope.stored(declared);
        Slot existing = live.get(task);
        if (existing != null && !existing.owner.equals(agent)) {
            return Prediction.refuse(Refusal.LEASE_LIVE, "INV-ME-1");
        }
        Slot conflict = firstConflict(worktree, paths, s -> !s.owner.equals(agent));
        if (conflict != null) {
            String id = ModelScope.whole(paths) || ModelScope.whole(conflict.paths) ? "INV-ME-4" : "INV-ME-2";
            return new Prediction(Refusal.SCOPE_CONFLICT, conflict.task, null, id, () -> { });
        }
        boolean freeRenewal = existing != null && existing.principal.equals(principal);
        if (!freeRenewal && count(principal) >= cap) {
            return Prediction.refuse(Refusal.QUOTA_EXCEEDED, "INV-ME-5");
        }
        Slot n = new Slot();
        n.task = task;
        n.owner = agent;
        n.principal = principal;
        n.worktree = worktree;
        n.paths = paths;
        n.claimedAt = now;
        n.expiresAt = now + lease(ttl);
        n.epoch = epochCounter + 1;
        n.version = 0;
        n.status = "claimed";
        n.checkpoint = existing != null ? existing.checkpoint : retained.getOrDefault(task, "");
        n.order = existing != null ? existing.order : orderCounter + 1;
        String id;
        if (existing != null) {
            id = "INV-LL-4";
        } else if (retained.containsKey(task)) {
            id = "INV-CR-3";
        } else if (crossWorktreeOverlap(agent, worktree, paths)) {
            id = "INV-ME-3";
        } else if (ttl != null) {
            id = "INV-LL-3";
        } else {
            id = "INV-ME-1";
        }
        return new Prediction(null, null, n, id, () -> {
            if (existing == null) {
                orderCounter++;
            }
            epochCounter++;
            live.put(task, n);
            retained.remove(task);
        });
    }

    /** True when another owner's live claim overlaps these paths, but only in a different worktree. */
    boolean crossWorktreeOverlap(String agent, String worktree, List<String> paths) {
        for (Slot s : live.values()) {
            if (!s.owner.equals(agent) && !s.worktree.equals(worktree) && ModelScope.pathsOverlap(paths, s.paths)) {
                return true;
            }
        }
        return false;
    }

    Prediction release(String agent, String task, Long epoch) {
        Slot s = live.get(task);
        if (s == null) {
            return Prediction.refuse(Refusal.NOT_CLAIMED, "INV-LL-2");
        }
        if (!s.owner.equals(agent)) {
            return Prediction.refuse(Refusal.NOT_OWNER, "INV-ME-1");
        }
        if (epoch != null && epoch != s.epoch) {
            return Prediction.refuse(Refusal.STALE_EPOCH, "INV-EF-2");
        }
        return new Prediction(null, null, s.copy(), epoch != null ? "INV-EF-2" : "INV-CR-3", () -> {
            live.remove(task);
            retained.remove(task);
        });
    }

    Prediction update(String agent, String task, String status, Long epoch, Long expectedVersion) {
        Slot s = live.get(task);
        if (s == null) {
            return Prediction.refuse(Refusal.NOT_FOUND, "INV-LL-2");
        }
        if (!s.owner.equals(agent)) {
            return Prediction.refuse(Refusal.NOT_OWNER, "INV-ME-1");
        }
        if (epoch != null && epoch != s.epoch) {
            return Prediction.refuse(Refusal.STALE_EPOCH, "INV-EF-2");
        }
        if (expectedVersion != null && expectedVersion != s.version) {
            return Prediction.refuse(Refusal.VERSION_CONFLICT, "INV-EF-3");
        }
        if (!status.isEmpty() && !(status.equals(s.status) || NEXT.getOrDefault(s.status, Set.of()).contains(status))) {
            return Prediction.refuse(Refusal.ILLEGAL_TRANSITION, "INV-EF-3");
        }
        Slot n = s.copy();
        n.version = s.version + 1;
        if (!status.isEmpty()) {
            n.status = status;
        }
        return new Prediction(null, null, n, "INV-EF-3", () -> live.put(task, n));
    }

    Prediction handoff(String agent, String task, String recipient, boolean recipientOnline,
                       String recipientPrincipal, Long epoch) {
        if (!recipientOnline) { // checked first (contract §5.7)
            return Prediction.refuse(Refusal.TARGET_OFFLINE, "INV-CR-2");
        }
        Slot s = live.get(task);
        if (s == null) {
            return Prediction.refuse(Refusal.NOT_CLAIMED, "INV-LL-2");
        }
        if (!s.owner.equals(agent)) {
            return Prediction.refuse(Refusal.NOT_OWNER, "INV-CR-2");
        }
        if (recipient.equals(s.owner)) {
            return Prediction.refuse(Refusal.ALREADY_OWNER, "INV-CR-2");
        }
        if (epoch != null && epoch != s.epoch) {
            return Prediction.refuse(Refusal.STALE_EPOCH, "INV-EF-2");
        }
        String principal = recipientPrincipal == null || recipientPrincipal.isEmpty() ? recipient : recipientPrincipal;
        if (!principal.equals(s.principal) && count(principal) >= cap) {
            return Prediction.refuse(Refusal.QUOTA_EXCEEDED, "INV-ME-5");
        }
        Slot conflict = firstConflict(s.worktree, s.paths, o -> !o.owner.equals(recipient) && !o.task.equals(task));
        if (conflict != null) {
            return new Prediction(Refusal.SCOPE_CONFLICT, conflict.task, null, "INV-CR-2", () -> { });
        }
        Slot n = s.copy();
        n.owner = recipient;
        n.principal = principal;
        n.claimedAt = now;
        n.expiresAt = now + lease(DEFAULT_TTL);
        n.epoch = epochCounter + 1;
        n.version = 0;
        return new Prediction(null, null, n, "INV-CR-2", () -> {
            epochCounter++;
            live.put(task, n);
        });
    }

    Prediction checkpoint(String agent, String task, String token, Long epoch) {
        Slot s = live.get(task);
        if (s == null) {
            return Prediction.refuse(Refusal.NOT_FOUND, "INV-LL-2");
        }
        if (!s.owner.equals(agent)) {
            return Prediction.refuse(Refusal.NOT_OWNER, "INV-ME-1");
        }
        if (epoch != null && epoch != s.epoch) {
            return Prediction.refuse(Refusal.STALE_EPOCH, "INV-EF-2");
        }
        Slot n = s.copy();
        n.checkpoint = token;
        n.version = s.version + 1;
        return new Prediction(null, null, n, "INV-CR-3", () -> live.put(task, n));
    }
}
