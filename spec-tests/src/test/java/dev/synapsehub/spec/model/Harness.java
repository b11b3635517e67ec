package dev.synapsehub.spec.model;

import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.MutationDecider;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.actor.ResponseRenderer;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.event.ClaimDeniedEvent;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.IdempotencyRecordedEvent;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.IdempotencyLedger;
import dev.synapsehub.core.state.StateImage;
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

    static final RegistryLimits LIMITS = RegistryLimits.DEFAULTS.withMaxClaimsPerPrincipal(CAP);
    /** The task and agent of the read-only scope probes; never claimed for real. */
    static final String PROBE = "~probe";

    /** Every event the harness applied, numbered as a journal numbers them; a restart replays it. */
    final ListJournal journal = new ListJournal();
    /** The real authoritative state; a restart swaps in a replayed one. */
    CoordinationState state = new CoordinationState(LIMITS, CoordinationState.DEFAULT_IDEMPOTENCY_CAPACITY);
    /** {@code state.claims()}, kept in step with {@link #state}. */
    ClaimRegistry real = state.claims();
    final ShadowModel model = new ShadowModel(CAP);
    /** The latest state image taken ({@link #takeImage}), or null: a restart also rebuilds from it. */
    StateImage image;
    /** Every keyed request sent so far, as its client remembers it (retries resend these). */
    final List<ModelActions.KeyedRequest> sentKeyed = new ArrayList<>();

    /** Stores a grant's first response the way a wire layer would render it: enough to compare. */
    static final ResponseRenderer RENDERER = (reply, at) -> {
        Claim c = ((Reply.Granted) reply).claim();
        return c.taskId() + "|" + c.owner() + "|" + c.epoch() + "|" + c.version() + "|" + at;
    };

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
        return perform(command, null, p);
    }

    /**
     * {@link #perform} for a keyed request whose key the model does not hold: decided through
     * the actor's own {@link MutationDecider}; a grant must store the model's expected first
     * response, a refusal must not be remembered (INV-CR-1).
     */
    private Reply perform(Command command, Idempotency idem, ShadowModel.Prediction p) {
        model.advanceTo(model.now);
        Observable before = observe();
        MutationDecider.Result result = MutationDecider.decide(state, new Mutation(command, idem), model.now);
        Invariant.check("INV-CR-1", result instanceof MutationDecider.Fresh,
                () -> "a key the model never saw granted was answered from the ledger: " + command + " -> " + result);
        MutationDecider.Fresh fresh = (MutationDecider.Fresh) result;
        Decision decision = new Decision(fresh.reply(), stateEvents(fresh.events()));
        Observable afterDecide = observe();
        Invariant.check("INV-JA-1", before.equals(afterDecide),
                () -> "decide(" + command + ") changed observable state\n  before " + before
                        + "\n  after  " + afterDecide);
        if (idem != null) {
            boolean recorded = fresh.events().size() > decision.events().size();
            Invariant.check("INV-CR-1", p.granted() == recorded && p.granted() == (fresh.storedResponse() != null),
                    () -> "keyed " + command + ": granted=" + p.granted() + " but recorded=" + recorded);
            if (p.granted()) {
                String expected = ShadowModel.response(p.expected(), model.now);
                Invariant.check("INV-CR-1", expected.equals(fresh.storedResponse()),
                        () -> "stored first response " + fresh.storedResponse() + ", model " + expected);
            }
        }
        Reply reply = decision.reply();
        String id = p.invariantId();
        if (p.granted()) {
            Invariant.check(id, reply instanceof Reply.Granted,
                    () -> "model expects a grant for " + command + " but the registry answered " + reply);
            Claim claim = ((Reply.Granted) reply).claim();
            List<String> diff = differences(claim, p.expected());
            Invariant.check(id, diff.isEmpty(),
                    () -> "granted claim differs from the model in " + diff + ": real " + claim + " model " + p.expected());
            commit(fresh.events());
            p.commit().run();
            if (idem != null) {
                model.ledger.put(idem.key(), new ShadowModel.KeyedAnswer(idem.requestDigest(), fresh.storedResponse(),
                        model.restarts));
                count("keyed-granted");
            }
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
            commit(fresh.events());
            if (idem != null) {
                Invariant.check("INV-CR-1", state.idempotency().find(idem.key()).isEmpty(),
                        () -> "a refused keyed request was remembered: " + command);
                count("keyed-refused-not-remembered");
            }
            Observable afterApply = observe();
            Invariant.check("INV-JA-1", before.equals(afterApply),
                    () -> "applying the denial evidence of " + command + " changed state: " + afterApply);
            count("refused:" + p.refusal());
        }
        return reply;
    }

    /**
     * A claim that keeps a held claim ({@link ClaimCommand#keepingHeld()}, an unkeyed retry of a
     * forwarded claim). When the model holds the task live for the same agent and principal, the
     * registry must answer that claim exactly as it stands, with no event, and change nothing (the
     * retry applies once, INV-CR-1: not renewed, not charged, not journaled); otherwise it is a
     * plain claim, checked against the model's prediction as any claim is.
     */
    Reply performKeepHeld(ClaimCommand command) {
        model.advanceTo(model.now);
        String principal = command.principal() == null || command.principal().isEmpty()
                ? command.agent() : command.principal();
        ShadowModel.Slot s = model.live.get(command.taskId());
        if (s == null || !s.owner.equals(command.agent()) || !s.principal.equals(principal)) {
            return perform(command, model.claim(command.agent(), command.principal(), command.taskId(),
                    command.worktree(), command.paths(), command.ttlSeconds()));
        }
        Observable before = observe();
        long seqBefore = journal.lastSeq();
        MutationDecider.Result result = MutationDecider.decide(state, Mutation.of(command), model.now);
        Invariant.check("INV-CR-1", result instanceof MutationDecider.Fresh f && f.events().isEmpty()
                        && f.reply() instanceof Reply.AlreadyHeld held && differences(held.claim(), s).isEmpty(),
                () -> "a kept claim of " + s.owner + " on " + s.task + " was answered " + result + ", model " + s);
        Invariant.check("INV-CR-1", before.equals(observe()) && journal.lastSeq() == seqBefore,
                () -> "a kept claim changed state or the journal: " + command);
        count("kept-held");
        return ((MutationDecider.Fresh) result).reply();
    }

    /** The decided events without the idempotency record (what the state decision itself produced). */
    private static List<CoordinationEvent> stateEvents(List<CoordinationEvent> events) {
        List<CoordinationEvent> out = new ArrayList<>(events);
        out.removeIf(e -> e instanceof IdempotencyRecordedEvent);
        return out;
    }

    /**
     * A keyed request, first or retried (INV-CR-1). A key the model remembers is answered from
     * the ledger before anything else: the same request replays its first response, another
     * conflicts, and nothing changes: not the state, not the journal, whoever is online now. A
     * key the model does not hold is decided afresh (a refused first attempt is not remembered).
     */
    void performKeyed(ModelActions.KeyedRequest request, boolean recipientOnline) {
        Idempotency idem = new Idempotency(request.ledgerKey(), request.digest(), RENDERER);
        Command command = request.command(recipientOnline);
        ShadowModel.KeyedAnswer prior = model.ledger.get(request.ledgerKey());
        if (prior == null) {
            perform(command, idem, request.predict(model, recipientOnline));
            return;
        }
        model.advanceTo(model.now);
        Observable before = observe();
        long seqBefore = journal.lastSeq();
        MutationDecider.Result result = MutationDecider.decide(state, new Mutation(command, idem), model.now);
        Outcome expected = prior.digest().equals(request.digest()) ? new Outcome.Replayed(prior.response())
                : new Outcome.IdempotencyConflict(prior.response());
        Invariant.check("INV-CR-1", result instanceof MutationDecider.Settled settled && settled.outcome().equals(expected),
                () -> "keyed retry " + request + " answered " + result + ", expected " + expected);
        Invariant.check("INV-CR-1", before.equals(observe()) && journal.lastSeq() == seqBefore,
                () -> "keyed retry " + request + " changed state or the journal");
        count(expected instanceof Outcome.Replayed ? "keyed-replayed" : "keyed-conflict");
        if (expected instanceof Outcome.Replayed && prior.restartsAtGrant() < model.restarts) {
            count("keyed-replayed-after-restart");
        }
        if (expected instanceof Outcome.Replayed && request.verb().equals("handoff") && !recipientOnline) {
            count("keyed-handoff-replayed-with-recipient-offline");
        }
    }

    /**
     * Applies decided events the way the actor does (apply, then append), so the journal holds
     * exactly what the live state applied, under the seqs the state expects.
     */
    private void commit(List<CoordinationEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        for (CoordinationEvent e : events) {
            state.apply(e);
        }
        List<JournaledEvent> committed = journal.append(events);
        long journalSeq = committed.get(committed.size() - 1).seq();
        Invariant.check("INV-RR-1", journalSeq == state.lastSeq(),
                () -> "the journal numbered the batch through " + journalSeq + " but the state expects "
                        + state.lastSeq() + " (replay would renumber)");
    }

    /**
     * Everything a restart must preserve, read without mutating (decide-only probes).
     *
     * @param claims the live claims, every field (epoch, version, status, checkpoint, scope, lease, note...)
     * @param charged quota charges of every principal of the model
     * @param liveCount live claims as of the last expiry (read before the snapshot expires anything)
     * @param retained retained checkpoints of every task of the model
     * @param epochCounter the registry's epoch counter
     * @param clock the registry's clock (a replay must have advanced it to the restart time)
     * @param lastSeq the state's journal seq
     * @param firstConflicts per worktree and probing agent, the first conflicting task in insertion order
     * @param idempotency the idempotency ledger
     */
    record Authority(List<Claim> claims, Map<String, Integer> charged, int liveCount, Map<String, String> retained,
                     long epochCounter, double clock, long lastSeq, Map<String, String> firstConflicts,
                     Map<String, IdempotencyLedger.Entry> idempotency) {
    }

    Authority authority(CoordinationState s) {
        ClaimRegistry r = s.claims();
        // Clock, charges, live count and retained checkpoints are read before anything advances
        // the registry, so a replay that failed to expire at restart time cannot be masked by
        // the expiry the snapshot below performs.
        double clock = r.now();
        int live = r.liveCount();
        Map<String, Integer> charged = new TreeMap<>();
        for (String p : PRINCIPALS) {
            charged.put(p, r.charged(p));
        }
        Map<String, String> retained = new TreeMap<>();
        for (String t : TASKS) {
            r.retainedCheckpoint(t).ifPresent(cp -> retained.put(t, cp));
        }
        List<Claim> claims = r.snapshot(model.now);
        Map<String, String> firstConflicts = new TreeMap<>();
        for (String w : WORKTREES) {
            for (String agent : List.of(PROBE, "A", "B", "C")) {
                Reply reply = r.decide(probe(agent, w), model.now).reply();
                firstConflicts.put(w + "/" + agent, reply instanceof Reply.Denied d
                        && d.refusal() == Refusal.SCOPE_CONFLICT ? d.conflictingTask() : "-");
            }
        }
        return new Authority(claims, charged, live, retained, r.epochCounter(), clock, s.lastSeq(),
                firstConflicts, new TreeMap<>(s.idempotency().view()));
    }

    /** A whole-worktree claim of a task nobody holds: answered with the first conflict in insertion order. */
    private static ClaimCommand probe(String agent, String worktree) {
        return new ClaimCommand(agent, null, PROBE, null, null, worktree, List.of(), null);
    }

    /**
     * The full insertion order of live claims per worktree, read by probing and releasing the
     * first conflict until none is left: DESTROYS the registry's claims, so only run it on a
     * registry about to be discarded.
     */
    private List<String> drainConflictOrder(ClaimRegistry r) {
        List<String> order = new ArrayList<>();
        for (String w : WORKTREES) {
            for (int i = 0; i <= TASKS.size(); i++) {
                Reply reply = r.decide(probe(PROBE, w), model.now).reply();
                if (!(reply instanceof Reply.Denied d) || d.refusal() != Refusal.SCOPE_CONFLICT) {
                    break;
                }
                order.add(w + ":" + d.conflictingTask());
                r.apply(new ClaimReleasedEvent(model.now, d.conflictingTask()));
            }
        }
        return order;
    }

    /** A fresh state rebuilt from the journal through {@code CoordinationState.replay} at the model clock. */
    private CoordinationState replayed() throws JournalException {
        CoordinationState fresh = new CoordinationState(LIMITS, CoordinationState.DEFAULT_IDEMPOTENCY_CAPACITY);
        long n = fresh.replay(journal, model.now, progress -> { });
        Invariant.check("INV-RR-1", n == journal.size() && fresh.lastSeq() == journal.lastSeq(),
                () -> "replayed " + n + " of " + journal.size() + " events, seq " + fresh.lastSeq()
                        + " vs journal " + journal.lastSeq());
        return fresh;
    }

    /**
     * Restart by replay (INV-RR-1): a fresh state rebuilt from every event applied so far, expired
     * at the model clock, must hold exactly the authority of the one it replaces, and is swapped
     * in. The shadow model is not touched: the step's invariant check then holds the replayed
     * state to the same predictions.
     */
    void restart() throws JournalException {
        advanceTo(model.now); // the old hub, too, has reached the restart instant
        Authority before = authority(state);
        CoordinationState fresh = replayed();
        CoordinationState twin = replayed();
        Authority after = authority(fresh);
        Invariant.check("INV-EF-1", after.epochCounter() >= before.epochCounter(),
                () -> "the epoch counter regressed across a restart: " + before.epochCounter() + " -> "
                        + after.epochCounter());
        Invariant.check("INV-RR-1", before.equals(after),
                () -> "replay did not rebuild the live authority\n  before  " + before + "\n  replayed " + after);
        // The old state is discarded below, so its order can be read destructively; the replayed
        // twin (same journal, same replay) stands in for the fresh state we keep.
        List<String> orderBefore = drainConflictOrder(state.claims());
        List<String> orderAfter = drainConflictOrder(twin.claims());
        Invariant.check("INV-RR-1", orderBefore.equals(orderAfter),
                () -> "insertion order of conflicts changed across a restart: " + orderBefore + " -> " + orderAfter);
        if (image != null) {
            restartFromImage(fresh);
        }
        state = fresh;
        real = fresh.claims();
        model.restarts++;
        count("restart");
        if (!before.claims().isEmpty()) {
            count("restart-with-live-claims");
        }
        if (orderBefore.size() > 1) {
            count("restart-with-ordered-conflicts");
        }
        if (!before.retained().isEmpty()) {
            count("restart-with-retained-checkpoint");
        }
    }

    /** A state snapshot of the live state between batches, as the hub takes one on its actor. */
    void takeImage() {
        image = state.image();
        count("image-taken");
    }

    /** The latest image restored into a fresh state, then the journal's events after it applied. */
    private CoordinationState restoredFromImage() {
        CoordinationState restored = new CoordinationState(LIMITS, CoordinationState.DEFAULT_IDEMPOTENCY_CAPACITY);
        restored.restore(image);
        long from = image.lastSeq();
        journal.replay(e -> {
            if (e.seq() > from) {
                restored.apply(e);
            }
        });
        restored.settle(model.now, journal.lastSeq());
        return restored;
    }

    /**
     * Restart from a snapshot (INV-RR-1): the latest image plus the journal tail after it must
     * rebuild exactly what the full replay {@code replayed} rebuilt: the same authority, the same
     * conflict order, the same image of every registry.
     */
    private void restartFromImage(CoordinationState replayed) throws JournalException {
        CoordinationState restored = restoredFromImage();
        Authority fromImage = authority(restored);
        Authority fromReplay = authority(replayed);
        Invariant.check("INV-RR-1", fromImage.equals(fromReplay),
                () -> "snapshot + tail differs from a full replay\n  replay   " + fromReplay + "\n  snapshot " + fromImage);
        StateImage a = restored.image();
        StateImage b = replayed.image();
        Invariant.check("INV-RR-1", a.equals(b),
                () -> "snapshot + tail holds another state than a full replay\n  replay   " + b + "\n  snapshot " + a);
        List<String> orderFromImage = drainConflictOrder(restoredFromImage().claims());
        List<String> orderFromReplay = drainConflictOrder(replayed().claims());
        Invariant.check("INV-RR-1", orderFromImage.equals(orderFromReplay),
                () -> "conflict order differs between snapshot + tail and a full replay: " + orderFromImage + " vs "
                        + orderFromReplay);
        count("restart-from-image");
        if (image.lastSeq() < journal.lastSeq()) {
            count("restart-from-image-with-tail");
        }
    }

    /**
     * A batch whose journal append fails (INV-JA-2 at state level): the commands are decided and
     * their events applied inside {@code beginBatch}, a granted one also records an idempotency
     * entry as the actor would, nothing reaches the journal, and {@code rollbackBatch} must leave
     * the state exactly as it was. The model is not told: nothing was granted.
     */
    void failedBatch(List<java.util.function.Function<Harness, Command>> commands) {
        advanceTo(model.now); // expiry is a function of time and is not undone: settle it first
        Authority before = authority(state);
        long journalBefore = journal.lastSeq();
        state.beginBatch();
        int stateEvents = 0;
        List<String> keys = new ArrayList<>();
        for (java.util.function.Function<Harness, Command> make : commands) {
            Command command = make.apply(this);
            Decision decision = state.decide(command, model.now);
            for (CoordinationEvent e : decision.events()) {
                state.apply(e);
                if (!(e instanceof ClaimDeniedEvent)) {
                    stateEvents++;
                }
            }
            if (decision.reply().granted()) {
                String key = "batch" + keys.size() + "\0" + command.getClass().getSimpleName();
                keys.add(key);
                state.apply(new IdempotencyRecordedEvent(model.now, key, "digest", "{\"ok\":true}"));
            }
        }
        state.rollbackBatch();
        Authority after = authority(state);
        Invariant.check("INV-JA-2", before.equals(after),
                () -> "a rolled-back batch left effects\n  before " + before + "\n  after  " + after);
        Invariant.check("INV-JA-2", journal.lastSeq() == journalBefore && keys.stream()
                        .allMatch(k -> state.idempotency().find(k).isEmpty()),
                () -> "a rolled-back batch left a journal entry or idempotency key: " + keys);
        if (stateEvents > 0) {
            count("rollback-undid-state-events");
        }
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
        for (Map.Entry<String, ShadowModel.KeyedAnswer> e : model.ledger.entrySet()) {
            var held = state.idempotency().find(e.getKey());
            Invariant.check("INV-CR-1", held.isPresent() && held.get().requestDigest().equals(e.getValue().digest())
                            && held.get().response().equals(e.getValue().response()),
                    () -> "the ledger lost or changed the first answer under " + e.getKey() + ": " + held);
        }
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
     * End of every sequence: restart, let everything expire, restart again (retained
     * checkpoints and released quota must survive replay too).
     */
    void finalCheck() {
        try {
            restart();
            checkInvariants();
            sweep();
            restart();
            checkInvariants();
        } catch (JournalException e) {
            throw new AssertionError("the in-test journal cannot fail", e);
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
