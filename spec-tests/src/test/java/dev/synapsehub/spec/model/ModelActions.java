package dev.synapsehub.spec.model;

import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.spec.runner.Action;
import dev.synapsehub.spec.runner.Weighted;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The model's actions. Each carries its parameters and resolves "the current owner" when it
 * runs, so a shrunk sequence stays meaningful. toString is the line a failure report prints.
 */
final class ModelActions {
    private ModelActions() {
    }

    /** How a guarded verb supplies its epoch fence. */
    enum EpochMode {
        NONE, CURRENT, STALE_AHEAD, STALE_BEHIND;

        Long pick(ShadowModel.Slot slot) {
            long current = slot == null ? 1 : slot.epoch;
            switch (this) {
                case NONE:
                    return null;
                case CURRENT:
                    return current;
                case STALE_AHEAD:
                    return current + 1000;
                default:
                    return current - 1;
            }
        }
    }

    static final List<Double> ODD_TTLS = List.of(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
            0.0, -5.0, 1e-9, 29.999, 30.0, 30.5, 120.0, 3599.5, 2_592_000.0, 2_592_000.5, 1e15, Double.MAX_VALUE,
            -Double.MAX_VALUE, Double.MIN_VALUE);
    static final List<String> TOKENS = List.of("", "cp-1", "cp-2", "cursor=42", "step-3");
    static final List<String> STATUSES = List.of("working", "working", "working", "input_required", "done",
            "failed", "claimed", "");

    private static <T> T pick(Random r, List<T> from) {
        return from.get(r.nextInt(from.size()));
    }

    private static List<String> paths(Random r) {
        int n = r.nextInt(4);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String p = pick(r, Harness.PATHS);
            if (!out.contains(p)) {
                out.add(p);
            }
        }
        return out;
    }

    private static String principal(Random r) {
        int k = r.nextInt(4);
        return k == 0 ? Harness.SHARED_PRINCIPAL : null;
    }

    private static EpochMode epochMode(Random r) {
        int k = r.nextInt(10);
        return k < 4 ? EpochMode.NONE : k < 7 ? EpochMode.CURRENT : k < 9 ? EpochMode.STALE_AHEAD : EpochMode.STALE_BEHIND;
    }

    private static String actor(Harness h, String task, boolean byOwner, String fallback) {
        ShadowModel.Slot s = h.model.live.get(task);
        return byOwner && s != null ? s.owner : fallback;
    }

    // -------------------------------------------------------------------------------------
    // Claim (plain, explicit TTL)

    record Claim(String agent, String task, String worktree, List<String> paths, String principal, Double ttl,
                 boolean explicitTtl) implements Action<Harness> {
        @Override
        public void run(Harness h) {
            ShadowModel.Prediction p = h.model.claim(agent, principal, task, worktree, paths, ttl);
            Reply r = h.perform(new ClaimCommand(agent, principal, task, null, ttl, worktree, paths, null), p);
            if (p.granted() && explicitTtl) {
                var c = ((Reply.Granted) r).claim();
                double lease = c.leaseExpiresAt() - c.claimedAt();
                Invariant.check("INV-LL-3", Double.isFinite(c.leaseExpiresAt())
                                && Double.compare(c.leaseExpiresAt(), c.claimedAt() + ShadowModel.lease(ttl)) == 0
                                && lease >= ShadowModel.MIN_TTL - 1e-6 && lease <= ShadowModel.MAX_TTL + 1e-6,
                        () -> "ttl " + ttl + " gave lease " + lease + ", expected " + ShadowModel.lease(ttl));
                Harness.count(ttl == null || !Double.isFinite(ttl) ? "ttl:non-finite-default" : "ttl:explicit");
            }
            if (p.granted() && "INV-ME-3".equals(p.invariantId())) {
                Harness.count("granted-despite-overlap-in-other-worktree");
            }
            if (p.granted() && "INV-CR-3".equals(p.invariantId()) && !p.expected().checkpoint.isEmpty()) {
                Harness.count("takeover-resumed-checkpoint");
            }
        }

        @Override
        public List<Action<Harness>> simplifications() {
            List<Action<Harness>> out = new ArrayList<>();
            if (ttl != null) {
                out.add(new Claim(agent, task, worktree, paths, principal, null, false));
            }
            if (principal != null) {
                out.add(new Claim(agent, task, worktree, paths, null, ttl, explicitTtl));
            }
            if (!paths.isEmpty()) {
                out.add(new Claim(agent, task, worktree, List.of(), principal, ttl, explicitTtl));
                for (int i = 0; i < paths.size() && paths.size() > 1; i++) {
                    List<String> fewer = new ArrayList<>(paths);
                    fewer.remove(i);
                    out.add(new Claim(agent, task, worktree, fewer, principal, ttl, explicitTtl));
                }
            }
            if (!worktree.equals(Harness.WORKTREES.get(0))) {
                out.add(new Claim(agent, task, Harness.WORKTREES.get(0), paths, principal, ttl, explicitTtl));
            }
            return out;
        }

        @Override
        public String toString() {
            return "claim " + agent + " " + task + " " + worktree + paths
                    + (principal != null ? " principal=" + principal : "") + (ttl != null ? " ttl=" + ttl : "");
        }
    }

    static Weighted<Harness> claim(int weight) {
        return Weighted.of(weight, "claim", r -> new Claim(pick(r, Harness.AGENTS), pick(r, Harness.TASKS),
                pick(r, Harness.WORKTREES), paths(r), principal(r), null, false));
    }

    static Weighted<Harness> claimWithTtl(int weight) {
        return Weighted.of(weight, "claim-ttl", r -> new Claim(pick(r, Harness.AGENTS), pick(r, Harness.TASKS),
                pick(r, Harness.WORKTREES), paths(r), principal(r),
                r.nextBoolean() ? pick(r, ODD_TTLS) : 1 + r.nextInt(10_000) + r.nextInt(4) * 0.25, true));
    }

    // -------------------------------------------------------------------------------------
    // Renew: the live owner re-claims its own scope under its own principal (INV-LL-4)

    record Renew(String task) implements Action<Harness> {
        @Override
        public void run(Harness h) {
            ShadowModel.Slot s = h.model.live.get(task);
            if (s == null) {
                return;
            }
            long before = s.epoch;
            int chargedBefore = h.real.charged(s.principal);
            boolean atCap = chargedBefore >= Harness.CAP;
            ShadowModel.Prediction p = h.model.claim(s.owner, s.principal, task, s.worktree, s.paths, null);
            Reply r = h.perform(new ClaimCommand(s.owner, s.principal, task, null, null, s.worktree, s.paths, null), p);
            Invariant.check("INV-LL-4", r instanceof Reply.Granted g && g.claim().owner().equals(s.owner)
                            && g.claim().epoch() > before && h.real.charged(s.principal) == chargedBefore,
                    () -> "renewal of " + s + " answered " + r + " (charged before " + chargedBefore + ")");
            if (atCap) {
                Harness.count("renewal-at-cap");
            }
        }

        @Override
        public String toString() {
            return "renew " + task;
        }
    }

    static Weighted<Harness> renew(int weight) {
        return Weighted.of(weight, "renew", r -> new Renew(pick(r, Harness.TASKS)));
    }

    // -------------------------------------------------------------------------------------
    // Keep held: an unkeyed retry of a forwarded claim, answered as it stands when still held (INV-CR-1)

    /**
     * A claim with {@code keepHeld}: as the live holder (its own principal and scope) when
     * {@code asHolder} and the task is held, otherwise as {@code agent} under {@code principal}
     * (another agent, another principal, or a task nobody holds: decided as a plain claim).
     */
    record KeepHeld(String task, boolean asHolder, String agent, String worktree, List<String> paths,
                    String principal) implements Action<Harness> {
        @Override
        public void run(Harness h) {
            ShadowModel.Slot s = h.model.live.get(task);
            ClaimCommand c = asHolder && s != null
                    ? new ClaimCommand(s.owner, s.principal, task, null, null, s.worktree, s.paths, null)
                    : new ClaimCommand(agent, principal, task, null, null, worktree, paths, null);
            h.performKeepHeld(c.keepingHeld());
        }

        @Override
        public String toString() {
            return "keep-held " + task + (asHolder ? " as holder" : " " + agent + " " + worktree + paths
                    + (principal != null ? " principal=" + principal : ""));
        }
    }

    static Weighted<Harness> keepHeld(int weight) {
        return Weighted.of(weight, "keep-held", r -> new KeepHeld(pick(r, Harness.TASKS), r.nextInt(3) > 0,
                pick(r, Harness.AGENTS), pick(r, Harness.WORKTREES), paths(r), principal(r)));
    }

    // -------------------------------------------------------------------------------------
    // Release

    record Release(String task, boolean byOwner, String agent, EpochMode epoch) implements Action<Harness> {
        @Override
        public void run(Harness h) {
            String who = actor(h, task, byOwner, agent);
            ShadowModel.Slot s = h.model.live.get(task);
            Long e = epoch.pick(s);
            ShadowModel.Prediction p = h.model.release(who, task, e);
            Reply r = h.perform(new ReleaseCommand(who, task, e), p);
            if (s != null && s.owner.equals(who) && e != null && e != s.epoch) {
                Invariant.check("INV-EF-2", !r.granted() && h.real.liveClaim(task, h.model.now)
                                .map(c -> c.owner().equals(s.owner) && c.epoch() == s.epoch).orElse(false),
                        () -> "stale release of " + s + " with epoch " + e + " answered " + r);
                Harness.count("stale-epoch-fenced");
            }
        }

        @Override
        public List<Action<Harness>> simplifications() {
            return epoch == EpochMode.NONE ? List.of() : List.of(new Release(task, byOwner, agent, EpochMode.NONE));
        }

        @Override
        public String toString() {
            return "release " + task + " by " + (byOwner ? "owner(else " + agent + ")" : agent) + " epoch=" + epoch;
        }
    }

    static Weighted<Harness> release(int weight) {
        return Weighted.of(weight, "release", r -> new Release(pick(r, Harness.TASKS), r.nextInt(4) != 0,
                pick(r, Harness.AGENTS), epochMode(r)));
    }

    // -------------------------------------------------------------------------------------
    // update_task

    enum VersionMode { NONE, CURRENT, STALE }

    record Update(String task, boolean byOwner, String agent, String status, EpochMode epoch, VersionMode version)
            implements Action<Harness> {
        @Override
        public void run(Harness h) {
            String who = actor(h, task, byOwner, agent);
            ShadowModel.Slot s = h.model.live.get(task);
            Long e = epoch.pick(s);
            long current = s == null ? 0 : s.version;
            Long v = version == VersionMode.NONE ? null : version == VersionMode.CURRENT ? current : current + 500;
            ShadowModel.Prediction p = h.model.update(who, task, status, e, v);
            Reply r = h.perform(new TaskUpdateCommand(who, task, status, null, null, e, v), p);
            if (r.granted()) {
                Invariant.check("INV-EF-3", ((Reply.Granted) r).claim().version() == current + 1,
                        () -> "a successful update must bump the version by one: " + r);
            }
            if (p.refusal() == dev.synapsehub.core.reply.Refusal.VERSION_CONFLICT) {
                Harness.count("stale-version-fenced");
            }
        }

        @Override
        public List<Action<Harness>> simplifications() {
            List<Action<Harness>> out = new ArrayList<>();
            if (epoch != EpochMode.NONE) {
                out.add(new Update(task, byOwner, agent, status, EpochMode.NONE, version));
            }
            if (version != VersionMode.NONE) {
                out.add(new Update(task, byOwner, agent, status, epoch, VersionMode.NONE));
            }
            if (!status.equals("working")) {
                out.add(new Update(task, byOwner, agent, "working", epoch, version));
            }
            return out;
        }

        @Override
        public String toString() {
            return "update " + task + " by " + (byOwner ? "owner(else " + agent + ")" : agent) + " status='" + status
                    + "' epoch=" + epoch + " expected_version=" + version;
        }
    }

    static Weighted<Harness> update(int weight) {
        return Weighted.of(weight, "update", r -> {
            int k = r.nextInt(10);
            VersionMode v = k < 5 ? VersionMode.NONE : k < 7 ? VersionMode.CURRENT : VersionMode.STALE;
            return new Update(pick(r, Harness.TASKS), r.nextInt(5) != 0, pick(r, Harness.AGENTS),
                    pick(r, STATUSES), epochMode(r), v);
        });
    }

    // -------------------------------------------------------------------------------------
    // Handoff (INV-CR-2)

    record Handoff(String task, boolean byOwner, String agent, String recipient, boolean recipientOnline,
                   String recipientPrincipal, EpochMode epoch) implements Action<Harness> {
        @Override
        public void run(Harness h) {
            String who = actor(h, task, byOwner, agent);
            ShadowModel.Slot s = h.model.live.get(task);
            Long e = epoch.pick(s);
            ShadowModel.Prediction p = h.model.handoff(who, task, recipient, recipientOnline, recipientPrincipal, e);
            Reply r = h.perform(new HandoffCommand(who, task, recipient, recipientOnline,
                    recipientOnline ? recipientPrincipal : null, null, e), p);
            if (r instanceof Reply.Granted g) {
                Invariant.check("INV-CR-2", s != null && who.equals(g.previousOwner())
                                && g.claim().owner().equals(recipient) && g.claim().version() == 0
                                && g.claim().epoch() > s.epoch && g.claim().status().wire().equals(s.status)
                                && g.claim().checkpoint().equals(s.checkpoint)
                                && g.claim().paths().equals(s.paths) && g.claim().worktree().equals(s.worktree),
                        () -> "handoff of " + s + " to " + recipient + " gave " + g);
                Harness.count("handoff-granted");
            }
        }

        @Override
        public List<Action<Harness>> simplifications() {
            List<Action<Harness>> out = new ArrayList<>();
            if (epoch != EpochMode.NONE) {
                out.add(new Handoff(task, byOwner, agent, recipient, recipientOnline, recipientPrincipal, EpochMode.NONE));
            }
            if (recipientPrincipal != null) {
                out.add(new Handoff(task, byOwner, agent, recipient, recipientOnline, null, epoch));
            }
            if (!recipientOnline) {
                out.add(new Handoff(task, byOwner, agent, recipient, true, recipientPrincipal, epoch));
            }
            return out;
        }

        @Override
        public String toString() {
            return "handoff " + task + " by " + (byOwner ? "owner(else " + agent + ")" : agent) + " to " + recipient
                    + (recipientOnline ? "" : " (offline)")
                    + (recipientPrincipal != null ? " principal=" + recipientPrincipal : "") + " epoch=" + epoch;
        }
    }

    static Weighted<Harness> handoff(int weight) {
        return Weighted.of(weight, "handoff", r -> new Handoff(pick(r, Harness.TASKS), r.nextInt(5) != 0,
                pick(r, Harness.AGENTS), pick(r, Harness.AGENTS), r.nextInt(8) != 0, principal(r), epochMode(r)));
    }

    // -------------------------------------------------------------------------------------
    // Keyed requests and their retries (INV-CR-1)

    /**
     * One keyed request as a client sends it: the verb, the sender (resolved when first sent),
     * the task, the verb's parameter (worktree and paths, status, recipient, token) and the raw
     * {@code idem_key}. Its digest covers exactly these, never a fact of the present moment.
     */
    record KeyedRequest(String verb, String sender, String task, String worktree, List<String> paths, String other,
                        String rawKey) {
        String ledgerKey() {
            return dev.synapsehub.core.actor.Idempotency.key(sender, verb, rawKey);
        }

        String digest() {
            return verb + "|" + sender + "|" + task + "|" + worktree + paths + "|" + other;
        }

        /** The command, with who is online now: the only thing a retry may see differently. */
        Command command(boolean recipientOnline) {
            switch (verb) {
                case "claim":
                    return new ClaimCommand(sender, null, task, null, null, worktree, paths, null);
                case "release":
                    return new ReleaseCommand(sender, task, null);
                case "task_update":
                    return new TaskUpdateCommand(sender, task, other, null, null, null, null);
                case "handoff":
                    return new HandoffCommand(sender, task, other, recipientOnline, null, null, null);
                default:
                    return new CheckpointCommand(sender, task, other, null);
            }
        }

        ShadowModel.Prediction predict(ShadowModel model, boolean recipientOnline) {
            switch (verb) {
                case "claim":
                    return model.claim(sender, null, task, worktree, paths, null);
                case "release":
                    return model.release(sender, task, null);
                case "task_update":
                    return model.update(sender, task, other, null, null);
                case "handoff":
                    return model.handoff(sender, task, other, recipientOnline, null, null);
                default:
                    return model.checkpoint(sender, task, other, null);
            }
        }

        @Override
        public String toString() {
            return verb + " " + task + " by " + sender + (verb.equals("claim") ? " " + worktree + paths
                    : other.isEmpty() ? "" : " '" + other + "'") + " idem_key=" + rawKey;
        }
    }

    /** A keyed request; "the owner" is resolved when it runs. A reused key with another request conflicts. */
    record Keyed(String verb, boolean byOwner, String agent, String task, String worktree, List<String> paths,
                 String other, String rawKey, boolean recipientOnline) implements Action<Harness> {
        @Override
        public void run(Harness h) {
            String who = verb.equals("claim") ? agent : actor(h, task, byOwner, agent);
            KeyedRequest request = new KeyedRequest(verb, who, task, verb.equals("claim") ? worktree : "",
                    verb.equals("claim") ? paths : List.of(), other, rawKey);
            h.sentKeyed.add(request);
            h.performKeyed(request, recipientOnline);
        }

        @Override
        public String toString() {
            return "keyed " + verb + " " + task + " by " + (byOwner ? "owner(else " + agent + ")" : agent)
                    + (verb.equals("claim") ? " " + worktree + paths : other.isEmpty() ? "" : " '" + other + "'")
                    + (recipientOnline ? "" : " (recipient offline)") + " idem_key=" + rawKey;
        }
    }

    static Weighted<Harness> keyed(int weight) {
        return Weighted.of(weight, "keyed", r -> {
            String verb = pick(r, List.of("claim", "claim", "release", "task_update", "handoff", "handoff", "checkpoint"));
            String other;
            switch (verb) {
                case "task_update":
                    other = pick(r, STATUSES);
                    break;
                case "handoff":
                    other = pick(r, Harness.AGENTS);
                    break;
                case "checkpoint":
                    other = pick(r, TOKENS);
                    break;
                default:
                    other = "";
            }
            return new Keyed(verb, r.nextInt(5) != 0, pick(r, Harness.AGENTS), pick(r, Harness.TASKS),
                    pick(r, Harness.WORKTREES), paths(r), other, "k" + r.nextInt(3), r.nextInt(6) != 0);
        });
    }

    /**
     * Resends an earlier keyed request exactly (by index into those sent so far), as a client
     * retrying after a lost reply or a restart would; who is online may have changed since.
     */
    record KeyedRetry(int index, boolean recipientOnline) implements Action<Harness> {
        @Override
        public void run(Harness h) {
            if (h.sentKeyed.isEmpty()) {
                return;
            }
            h.performKeyed(h.sentKeyed.get(index % h.sentKeyed.size()), recipientOnline);
        }

        @Override
        public String toString() {
            return "retry keyed request #" + index + (recipientOnline ? "" : " (recipient offline now)");
        }
    }

    static Weighted<Harness> keyedRetry(int weight) {
        return Weighted.of(weight, "keyed-retry", r -> new KeyedRetry(r.nextInt(1000), r.nextInt(2) == 0));
    }

    // -------------------------------------------------------------------------------------
    // Checkpoint

    record Checkpoint(String task, boolean byOwner, String agent, String token, EpochMode epoch)
            implements Action<Harness> {
        @Override
        public void run(Harness h) {
            String who = actor(h, task, byOwner, agent);
            Long e = epoch.pick(h.model.live.get(task));
            h.perform(new CheckpointCommand(who, task, token, e), h.model.checkpoint(who, task, token, e));
        }

        @Override
        public List<Action<Harness>> simplifications() {
            return epoch == EpochMode.NONE ? List.of() : List.of(new Checkpoint(task, byOwner, agent, token, EpochMode.NONE));
        }

        @Override
        public String toString() {
            return "checkpoint " + task + " by " + (byOwner ? "owner(else " + agent + ")" : agent) + " '" + token
                    + "' epoch=" + epoch;
        }
    }

    static Weighted<Harness> checkpoint(int weight) {
        return Weighted.of(weight, "checkpoint", r -> new Checkpoint(pick(r, Harness.TASKS), r.nextInt(6) != 0,
                pick(r, Harness.AGENTS), pick(r, TOKENS), epochMode(r)));
    }

    // -------------------------------------------------------------------------------------
    // Time

    record Advance(double seconds) implements Action<Harness> {
        @Override
        public void run(Harness h) {
            h.advanceTo(h.model.now + seconds);
        }

        @Override
        public List<Action<Harness>> simplifications() {
            return seconds > 1 ? List.of(new Advance(Math.floor(seconds / 2))) : List.of();
        }

        @Override
        public String toString() {
            return "advance " + seconds + "s";
        }
    }

    static Weighted<Harness> advance(int weight) {
        return Weighted.of(weight, "advance", r -> new Advance(1 + r.nextInt(7200) + (r.nextInt(4) == 0 ? 0.5 : 0)));
    }

    /** Lets a live task lapse (exactly at its expiry, or a little after) and has another agent take it over. */
    record Takeover(String task, String agent, double slack) implements Action<Harness> {
        @Override
        public void run(Harness h) {
            ShadowModel.Slot s = h.model.live.get(task);
            if (s == null) {
                return;
            }
            String claimant = agent.equals(s.owner)
                    ? Harness.AGENTS.get((Harness.AGENTS.indexOf(agent) + 1) % Harness.AGENTS.size()) : agent;
            h.advanceTo(s.expiresAt + slack);
            Invariant.check("INV-LL-2", h.real.liveClaim(task, h.model.now).isEmpty(),
                    () -> task + " still live at its expiry " + s.expiresAt + " (now " + h.model.now + ")");
            if (slack == 0) {
                Harness.count("expired-exactly-at-boundary");
            }
            ShadowModel.Prediction p = h.model.claim(claimant, null, task, s.worktree, s.paths, null);
            Reply r = h.perform(new ClaimCommand(claimant, null, task, null, null, s.worktree, s.paths, null), p);
            if (r.granted()) {
                Invariant.check("INV-CR-3", ((Reply.Granted) r).claim().checkpoint().equals(s.checkpoint)
                                && h.real.retainedCheckpoint(task).isEmpty(),
                        () -> "takeover of " + s + " must resume from checkpoint '" + s.checkpoint + "': " + r);
                if (!s.checkpoint.isEmpty()) {
                    Harness.count("takeover-resumed-checkpoint");
                }
            }
        }

        @Override
        public List<Action<Harness>> simplifications() {
            return slack > 0 ? List.of(new Takeover(task, agent, 0)) : List.of();
        }

        @Override
        public String toString() {
            return "takeover " + task + " by " + agent + " at expiry+" + slack + "s";
        }
    }

    static Weighted<Harness> takeover(int weight) {
        return Weighted.of(weight, "takeover", r -> new Takeover(pick(r, Harness.TASKS), pick(r, Harness.AGENTS),
                r.nextBoolean() ? 0 : 1 + r.nextInt(100)));
    }

    /** Jumps past the 30-day ceiling mid-sequence: nothing may survive (INV-LL-2). */
    record FarJump() implements Action<Harness> {
        @Override
        public void run(Harness h) {
            h.sweep();
        }

        @Override
        public String toString() {
            return "jump past 30 days";
        }
    }

    static Weighted<Harness> farJump(int weight) {
        return Weighted.of(weight, "far-jump", r -> new FarJump());
    }

    // -------------------------------------------------------------------------------------
    // Restart by replay (INV-RR-1) and a batch whose journal append fails (INV-JA-2)

    /** Rebuilds the real state from the journal and swaps it in; the shadow model is untouched. */
    record Restart() implements Action<Harness> {
        @Override
        public void run(Harness h) throws Exception {
            h.restart();
        }

        @Override
        public String toString() {
            return "restart (replay the journal)";
        }
    }

    static Weighted<Harness> restart(int weight) {
        return Weighted.of(weight, "restart", r -> new Restart());
    }

    /** Takes a state snapshot of the live state; later restarts also rebuild from it plus the tail. */
    record Snapshot() implements Action<Harness> {
        @Override
        public void run(Harness h) {
            h.takeImage();
        }

        @Override
        public String toString() {
            return "snapshot (image the state)";
        }
    }

    static Weighted<Harness> snapshot(int weight) {
        return Weighted.of(weight, "snapshot", r -> new Snapshot());
    }

    /** One command of a failed batch; "the owner" is resolved against the real state inside the batch. */
    record BatchStep(String verb, String agent, String task, String worktree, List<String> paths, String other) {
        Command command(Harness h) {
            String owner = h.real.liveClaim(task, h.model.now).map(c -> c.owner()).orElse(agent);
            switch (verb) {
                case "claim":
                    return new ClaimCommand(agent, null, task, null, null, worktree, paths, null);
                case "release":
                    return new ReleaseCommand(owner, task, null);
                case "update":
                    return new TaskUpdateCommand(owner, task, other, null, null, null, null);
                case "handoff":
                    return new HandoffCommand(owner, task, other, true, null, null, null);
                default:
                    return new CheckpointCommand(owner, task, other, null);
            }
        }

        @Override
        public String toString() {
            return verb.equals("claim") ? "claim " + agent + " " + task + " " + worktree + paths
                    : verb + " " + task + " by owner(else " + agent + ")" + (other.isEmpty() ? "" : " '" + other + "'");
        }
    }

    /** Decides and applies a few commands in one batch, then the append "fails" and the batch rolls back. */
    record FailedBatch(List<BatchStep> steps) implements Action<Harness> {
        @Override
        public void run(Harness h) {
            List<java.util.function.Function<Harness, Command>> commands = new ArrayList<>();
            for (BatchStep step : steps) {
                commands.add(step::command);
            }
            h.failedBatch(commands);
        }

        @Override
        public List<Action<Harness>> simplifications() {
            List<Action<Harness>> out = new ArrayList<>();
            for (int i = 0; i < steps.size() && steps.size() > 1; i++) {
                List<BatchStep> fewer = new ArrayList<>(steps);
                fewer.remove(i);
                out.add(new FailedBatch(fewer));
            }
            return out;
        }

        @Override
        public String toString() {
            return "failed batch " + steps + " (rolled back)";
        }
    }

    static Weighted<Harness> rollback(int weight) {
        return Weighted.of(weight, "rollback", r -> {
            List<BatchStep> steps = new ArrayList<>();
            int n = 1 + r.nextInt(4);
            for (int i = 0; i < n; i++) {
                String verb = pick(r, List.of("claim", "claim", "release", "update", "handoff", "checkpoint"));
                String other;
                if (verb.equals("update")) {
                    other = pick(r, STATUSES);
                } else if (verb.equals("handoff")) {
                    other = pick(r, Harness.AGENTS);
                } else if (verb.equals("checkpoint")) {
                    other = pick(r, TOKENS);
                } else {
                    other = "";
                }
                steps.add(new BatchStep(verb, pick(r, Harness.AGENTS), pick(r, Harness.TASKS),
                        pick(r, Harness.WORKTREES), paths(r), other));
            }
            return new FailedBatch(steps);
        });
    }
}
