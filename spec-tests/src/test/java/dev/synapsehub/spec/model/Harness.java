package dev.synapsehub.spec.model;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.event.ClaimDeniedEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Reply;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One model run: the real {@link ClaimRegistry} and the {@link ShadowModel}, stepped together.
 * Every command goes through {@link #perform}: the model predicts, the registry decides, the
 * answers must agree, and only then are the events applied.
 */
final class Harness {
    static final List<String> AGENTS = List.of("A", "B", "C");
    static final List<String> TASKS = List.of("T1", "T2", "T3", "T4");
    static final List<String> WORKTREES = List.of("wt-main", "wt-side");
    static final List<String> PATHS = List.of("", "src", "src/a.py", "src/b.py", "tests", "tests/x.py");
    static final String SHARED_PRINCIPAL = "open-host:127.0.0.1";
    static final List<String> PRINCIPALS = List.of("A", "B", "C", SHARED_PRINCIPAL);
    static final int CAP = 2;

    /** Run-wide counters of interesting outcomes, so the test can prove they happened. */
    static final Map<String, AtomicLong> COVERAGE = new ConcurrentHashMap<>();

    final ClaimRegistry real = new ClaimRegistry(RegistryLimits.DEFAULTS.withMaxClaimsPerPrincipal(CAP));
    final ShadowModel model = new ShadowModel(CAP);

    static void count(String what) {
        COVERAGE.computeIfAbsent(what, k -> new AtomicLong()).incrementAndGet();
    }

    static long covered(String what) {
        AtomicLong n = COVERAGE.get(what);
        return n == null ? 0 : n.get();
    }

    /** Everything a caller can observe of the registry, at the model's clock. */
    record Observable(List<Claim> claims, Map<String, Integer> charged, Map<String, String> retained,
                      long epochCounter) {
    }

    Observable observe() {
        List<Claim> claims = real.snapshot(model.now);
        Map<String, Integer> charged = new TreeMap<>();
        for (String p : PRINCIPALS) {
            charged.put(p, real.charged(p));
        }
        Map<String, String> retained = new TreeMap<>();
        for (String t : TASKS) {
            real.retainedCheckpoint(t).ifPresent(cp -> retained.put(t, cp));
        }
        return new Observable(claims, charged, retained, real.epochCounter());
    }

    /** Advances both clocks; the registry's expiry runs through a read, as a hub read would. */
    void advanceTo(double t) {
        model.advanceTo(t);
        real.snapshot(model.now);
    }

    /**
     * Decides {@code command} on the real registry and checks it against the model's prediction.
     * INV-JA-1 at the state-transition level: with time already advanced, {@code decide} alone
     * must leave every observable unchanged; only {@code apply} of the returned events mutates.
     */
    Reply perform(Command command, ShadowModel.Prediction p) {
        model.advanceTo(model.now);
        Observable before = observe();
        Decision decision = real.decide(command, model.now);
        Observable afterDecide = observe();
        Invariant.check("INV-JA-1", before.equals(afterDecide),
                () -> "decide(" + command + ") changed observable state\n  before " + before
                        + "\n  after  " + afterDecide);
        Reply reply = decision.reply();
        String id = p.invariantId();
        if (p.granted()) {
            Invariant.check(id, reply instanceof Reply.Granted,
                    () -> "model expects a grant for " + command + " but the registry answered " + reply);
            Claim claim = ((Reply.Granted) reply).claim();
            List<String> diff = differences(claim, p.expected());
            Invariant.check(id, diff.isEmpty(),
                    () -> "granted claim differs from the model in " + diff + ": real " + claim + " model " + p.expected());
            for (CoordinationEvent e : decision.events()) {
                real.apply(e);
            }
            p.commit().run();
        } else {
            Invariant.check(id, reply instanceof Reply.Denied d && d.refusal() == p.refusal(),
                    () -> "model expects " + p.refusal() + " for " + command + " but the registry answered " + reply);
            if (p.conflictingTask() != null) {
                Reply.Denied d = (Reply.Denied) reply;
                Invariant.check(id, p.conflictingTask().equals(d.conflictingTask()),
                        () -> "conflict reported with " + d.conflictingTask() + ", model says the first in"
                                + " insertion order is " + p.conflictingTask());
                Invariant.check("INV-ME-3", sameWorktree(command, d.conflictingTask()),
                        () -> "a scope conflict was reported across worktrees: " + command + " vs " + d);
            }
            boolean auditOnly = decision.events().stream().allMatch(e -> e instanceof ClaimDeniedEvent);
            Invariant.check("INV-JA-1", auditOnly, () -> "a refusal produced state events: " + decision.events());
            decision.events().forEach(real::apply);
            Observable afterApply = observe();
            Invariant.check("INV-JA-1", before.equals(afterApply),
                    () -> "applying the denial evidence of " + command + " changed state: " + afterApply);
            count("refused:" + p.refusal());
        }
        return reply;
    }

    private boolean sameWorktree(Command command, String otherTask) {
        String requested;
        if (command instanceof dev.synapsehub.core.command.ClaimCommand c) {
            requested = c.worktree();
        } else {
            ShadowModel.Slot moved = model.live.get(((dev.synapsehub.core.command.ClaimFamilyCommand) command).taskId());
            requested = moved == null ? null : moved.worktree;
        }
        ShadowModel.Slot other = model.live.get(otherTask);
        return other != null && other.worktree.equals(requested);
    }

    /** Field-by-field differences between a real claim and the model's expectation. */
    static List<String> differences(Claim c, ShadowModel.Slot s) {
        List<String> d = new ArrayList<>();
        if (!c.taskId().equals(s.task)) {
            d.add("taskId");
        }
        if (!c.owner().equals(s.owner)) {
            d.add("owner");
        }
        if (!c.principal().equals(s.principal)) {
            d.add("principal");
        }
        if (!c.worktree().equals(s.worktree) || !c.paths().equals(s.paths)) {
            d.add("scope");
        }
        if (Double.compare(c.claimedAt(), s.claimedAt) != 0) {
            d.add("claimedAt");
        }
        if (Double.compare(c.leaseExpiresAt(), s.expiresAt) != 0) {
            d.add("leaseExpiresAt");
        }
        if (c.epoch() != s.epoch) {
            d.add("epoch");
        }
        if (c.version() != s.version) {
            d.add("version");
        }
        if (!c.status().wire().equals(s.status)) {
            d.add("status");
        }
        if (!c.checkpoint().equals(s.checkpoint)) {
            d.add("checkpoint");
        }
        return d;
    }

    /** Every [model] state invariant, checked after every step. */
    void checkInvariants() {
        double now = model.now;
        List<Claim> claims = real.snapshot(now);
        Map<String, Claim> byTask = new HashMap<>();
        for (Claim c : claims) {
            Invariant.check("INV-ME-1", byTask.put(c.taskId(), c) == null,
                    () -> "two live records for " + c.taskId() + ": " + claims);
        }
        Invariant.check("INV-LL-2", byTask.keySet().equals(model.live.keySet()),
                () -> "live tasks " + new TreeMap<>(byTask).keySet() + " but the model expects "
                        + new TreeMap<>(model.live).keySet() + " at t=" + now);
        for (Claim c : claims) {
            ShadowModel.Slot s = model.live.get(c.taskId());
            Invariant.check("INV-ME-1", c.owner().equals(s.owner),
                    () -> c.taskId() + " owned by " + c.owner() + ", model expects " + s.owner);
            Invariant.check("INV-LL-1", c.leaseExpiresAt() > now,
                    () -> c.taskId() + " live with expiry " + c.leaseExpiresAt() + " <= now " + now);
            Invariant.check("INV-LL-3", Double.compare(c.leaseExpiresAt(), s.expiresAt) == 0
                            && Double.compare(c.claimedAt(), s.claimedAt) == 0,
                    () -> c.taskId() + " lease [" + c.claimedAt() + ", " + c.leaseExpiresAt() + "], model ["
                            + s.claimedAt + ", " + s.expiresAt + "]");
            Invariant.check("INV-EF-1", c.epoch() >= 1 && c.epoch() <= real.epochCounter() && c.epoch() == s.epoch,
                    () -> c.taskId() + " epoch " + c.epoch() + " (counter " + real.epochCounter() + "), model " + s.epoch);
            Invariant.check("INV-EF-3", c.version() >= 0 && c.version() == s.version && c.status().wire().equals(s.status),
                    () -> c.taskId() + " v" + c.version() + " " + c.status() + ", model v" + s.version + " " + s.status);
            Invariant.check("INV-ME-2", c.worktree().equals(s.worktree) && c.paths().equals(s.paths),
                    () -> c.taskId() + " scope " + c.worktree() + c.paths() + ", model " + s.worktree + s.paths);
            Invariant.check("INV-ME-5", c.principal().equals(s.principal),
                    () -> c.taskId() + " charged to " + c.principal() + ", model " + s.principal);
            Invariant.check("INV-CR-3", c.checkpoint().equals(s.checkpoint),
                    () -> c.taskId() + " checkpoint '" + c.checkpoint() + "', model '" + s.checkpoint + "'");
        }
        Set<Long> epochs = new HashSet<>();
        for (Claim c : claims) {
            Invariant.check("INV-EF-1", epochs.add(c.epoch()), () -> "epoch " + c.epoch() + " held twice: " + claims);
        }
        Invariant.check("INV-EF-1", real.epochCounter() == model.epochCounter,
                () -> "epoch counter " + real.epochCounter() + ", model " + model.epochCounter);
        for (int i = 0; i < claims.size(); i++) {
            for (int j = i + 1; j < claims.size(); j++) {
                Claim a = claims.get(i);
                Claim b = claims.get(j);
                if (a.owner().equals(b.owner()) || !a.worktree().equals(b.worktree())) {
                    continue;
                }
                if (ModelScope.whole(a.paths()) || ModelScope.whole(b.paths())) {
                    Invariant.check("INV-ME-4", false,
                            () -> "a whole-worktree claim coexists with another owner's claim: " + a + " / " + b);
                }
                Invariant.check("INV-ME-2", !ModelScope.pathsOverlap(a.paths(), b.paths()),
                        () -> "different owners hold overlapping live scopes: " + a + " / " + b);
            }
        }
        Map<String, Integer> byPrincipal = new HashMap<>();
        for (Claim c : claims) {
            byPrincipal.merge(c.principal(), 1, Integer::sum);
        }
        for (String p : PRINCIPALS) {
            int held = byPrincipal.getOrDefault(p, 0);
            Invariant.check("INV-ME-5", held <= CAP && real.charged(p) == held && model.count(p) == held,
                    () -> p + " holds " + held + " (charged " + real.charged(p) + ", model " + model.count(p)
                            + ", cap " + CAP + ")");
        }
        for (String t : TASKS) {
            String expected = model.retained.get(t);
            String actual = real.retainedCheckpoint(t).orElse(null);
            Invariant.check("INV-CR-3", java.util.Objects.equals(expected, actual),
                    () -> t + " retained checkpoint " + actual + ", model " + expected);
        }
    }

    /**
     * The final sweep: jump past the 30-day ceiling. Every lease must be gone, every quota
     * charge released, every non-empty checkpoint retained for the next claimant.
     */
    void sweep() {
        Map<String, String> expectRetained = new HashMap<>(model.retained);
        for (ShadowModel.Slot s : model.live.values()) {
            if (!s.checkpoint.isEmpty()) {
                expectRetained.put(s.task, s.checkpoint);
            }
        }
        advanceTo(model.now + ShadowModel.MAX_TTL + 1);
        Invariant.check("INV-LL-2", real.snapshot(model.now).isEmpty() && real.liveCount() == 0,
                () -> "claims survive past the 30-day ceiling: " + real.snapshot(model.now));
        for (String p : PRINCIPALS) {
            Invariant.check("INV-ME-5", real.charged(p) == 0, () -> p + " still charged after everything expired");
        }
        for (String t : TASKS) {
            String actual = real.retainedCheckpoint(t).orElse(null);
            Invariant.check("INV-CR-3", java.util.Objects.equals(expectRetained.get(t), actual),
                    () -> t + " retained '" + actual + "' after the sweep, expected '" + expectRetained.get(t) + "'");
        }
        checkInvariants();
    }
}
