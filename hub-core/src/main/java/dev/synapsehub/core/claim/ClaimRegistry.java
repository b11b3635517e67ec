package dev.synapsehub.core.claim;

import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.scope.PathNormalizer;
import dev.synapsehub.core.scope.Scope;
import dev.synapsehub.core.scope.ScopeIndex;
import dev.synapsehub.core.state.StateImage;
import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The claim registry: leases, epochs, versions, scopes, quotas and retained checkpoints
 * (seed 000 §§1–3, INV-CR-2, INV-CR-3).
 *
 * <p>{@link #decide} validates a command against the current state and returns the events
 * that carry its effect without applying them; {@link #apply} is the one path that changes
 * state, used live and on replay alike. Expiry is a pure function of time: it runs before
 * every decision and read, and again inside {@code apply} at the event's own timestamp, so a
 * replayed log rebuilds exactly the live state. Not thread-safe: one writer owns it.
 */
public final class ClaimRegistry {

    /**
     * A live claim with its index entry (which remembers the insertion order) and its quota
     * charge. The expiry heap points at these directly: an entry is acted on only while its
     * {@code Held} is still the live one, which replaces the map lookup and epoch comparison.
     */
    private static final class Held {
        final Claim claim;
        /** Replaced when the index is rebuilt around the survivors of a bulk expiry. */
        ScopeIndex.Entry entry;
        final Charge charge;
        /**
         * False once removed (released, replaced, expired or rolled back). A record dropped by a
         * bulk expiry keeps it: the heap, map and index that could reach it are dropped with it.
         */
        boolean live = true;

        Held(Claim claim, ScopeIndex.Entry entry, Charge charge) {
            this.claim = claim;
            this.entry = entry;
            this.charge = charge;
        }

        Claim claim() {
            return claim;
        }

        ScopeIndex.Holding holding() {
            return entry.holding();
        }
    }

    /**
     * Live claims charged to one principal. A principal whose count drops to zero keeps its
     * (empty) charge until enough empty ones accumulate to sweep them in one pass.
     */
    private static final class Charge {
        int count;
    }

    /**
     * Leases expired one at a time before {@link #advanceTo} checks whether most of the live
     * ones are due: a decision usually finds one or a few due, and those never pay for a scan.
     */
    static final int ONE_BY_ONE_BEFORE_SCAN = 64;

    private final RegistryLimits limits;
    /** Replaced, not emptied, by a bulk expiry: a map keeps the table it once grew to. */
    private Map<String, Held> live = new HashMap<>();
    private final ScopeIndex index = new ScopeIndex();
    private final ExpiryQueue<Held> expiry = new ExpiryQueue<>();
    /** Replaced by a bulk expiry, like {@link #live}. */
    private Map<String, Charge> chargedByPrincipal = new HashMap<>();
    /** Charges in {@link #chargedByPrincipal} at zero, not yet swept. */
    private int emptyCharges;
    /** Live claims carrying a non-empty checkpoint. */
    private int checkpointed;
    private final RetainedCheckpoints retainedCheckpoints;
    private long epochCounter;
    private long orderCounter;
    private double now = Double.NEGATIVE_INFINITY;
    private final UndoLog undo;

    /** A registry with the given bounds, recording its changes in {@code undo}. */
    public ClaimRegistry(RegistryLimits limits, UndoLog undo) {
        this.limits = limits;
        this.undo = undo;
        this.retainedCheckpoints = new RetainedCheckpoints(limits.maxRetainedCheckpoints());
    }

    /** A registry with the given bounds and an undo log of its own. */
    public ClaimRegistry(RegistryLimits limits) {
        this(limits, new UndoLog());
    }

    /** A registry with the spec's default bounds. */
    public ClaimRegistry() {
        this(RegistryLimits.DEFAULTS);
    }

    /** The bounds in force. */
    public RegistryLimits limits() {
        return limits;
    }

    // ---------------------------------------------------------------------------------------
    // Decide

    /**
     * Decides {@code command} at {@code at} (raised to the registry's clock if earlier).
     * Runs expiry first; otherwise changes nothing. Apply the returned events to make it so.
     */
    public Decision decide(Command command, double at) {
        double t = advanceTo(at);
        if (command instanceof ClaimCommand c) {
            return decideClaim(c, t);
        } else if (command instanceof ReleaseCommand r) {
            return decideRelease(r, t);
        } else if (command instanceof TaskUpdateCommand u) {
            return decideUpdate(u, t);
        } else if (command instanceof HandoffCommand h) {
            return decideHandoff(h, t);
        } else if (command instanceof CheckpointCommand k) {
            return decideCheckpoint(k, t);
        }
        throw new IllegalArgumentException("unknown command " + command.getClass().getName());
    }

    private Decision decideClaim(ClaimCommand c, double t) {
        String taskId = strip(c.taskId());
        String agent = c.agent();
        String principal = c.principal() == null || c.principal().isEmpty() ? agent : c.principal();
        Scope scope = new Scope(c.worktree(), PathNormalizer.normalizeDeclared(c.paths(), limits.maxDeclaredPaths()),
                c.pathIdentity());
        if (taskId.isEmpty()) {
            return claimDenied(t, agent, taskId, scope,
                    new Reply.Denied("", Refusal.TASK_ID_REQUIRED, "A task id is required to claim."));
        }
        Held existing = live.get(taskId);
        if (c.answersHeld() && existing != null && existing.claim().owner().equals(agent)
                && existing.claim().principal().equals(principal)) {
            // an unkeyed retry of a forwarded claim: answered with the claim as it stands, before any
            // other check, exactly as a read of the committed claim would have answered it
            return new Decision(new Reply.AlreadyHeld(existing.claim(),
                    "Task '" + taskId + "' already claimed by " + agent + "."), List.of());
        }
        if (c.pathIdentity() != null && !c.pathIdentity().alignsWith(scope.worktree(), scope.paths())) {
            return claimDenied(t, agent, taskId, scope, new Reply.Denied(taskId, Refusal.PATH_IDENTITY_INVALID,
                    "Task '" + taskId + "' path identity does not match its declared scope."));
        }
        if (existing != null && !existing.claim().owner().equals(agent)) {
            String owner = existing.claim().owner();
            return claimDenied(t, agent, taskId, scope, new Reply.Denied(taskId, Refusal.LEASE_LIVE,
                    "Task '" + taskId + "' is already claimed by " + owner + ".", owner, null));
        }
        Optional<ScopeIndex.Holding> conflict = index.firstConflict(scope, agent, null);
        if (conflict.isPresent()) {
            return claimDenied(t, agent, taskId, scope, scopeConflict(taskId, conflict.get()));
        }
        boolean freeRenewal = existing != null && existing.claim().principal().equals(principal);
        if (!freeRenewal && charged(principal) >= limits.maxClaimsPerPrincipal()) {
            return claimDenied(t, agent, taskId, scope, new Reply.Denied(taskId, Refusal.QUOTA_EXCEEDED,
                    "Principal claim quota reached: maximum " + limits.maxClaimsPerPrincipal() + " claims."));
        }
        double ttl = TtlPolicy.effective(c.ttlSeconds(), limits.defaultTtlSeconds());
        String checkpoint = existing != null
                ? existing.claim().checkpoint()
                : retainedOrEmpty(taskId);
        Claim claim = new Claim(taskId, agent, principal, strip(c.note()), t, t + ttl, ClaimStatus.CLAIMED, "",
                scope.worktree(), scope.paths(), epochCounter + 1, 0, checkpoint, c.git(), c.pathIdentity());
        String verb = existing != null ? "renewed" : "claimed";
        return granted(new ClaimSnapshotEvent(t, ClaimSnapshotEvent.Kind.CLAIM, claim),
                new Reply.Granted(claim, null, "Task '" + taskId + "' " + verb + " by " + agent + "."));
    }

    private Decision decideRelease(ReleaseCommand r, double t) {
        String taskId = strip(r.taskId());
        if (taskId.isEmpty()) {
            return denied(taskId, Refusal.TASK_ID_REQUIRED, "Task ID is required.");
        }
        Held held = live.get(taskId);
        if (held == null) {
            return denied(taskId, Refusal.NOT_CLAIMED, "Task '" + taskId + "' is not currently claimed.");
        }
        Optional<Decision> fenced = fence(held.claim(), r.agent(), r.epoch(), IS_OWNED_BY);
        if (fenced.isPresent()) {
            return fenced.get();
        }
        return granted(new ClaimReleasedEvent(t, taskId),
                new Reply.Granted(held.claim(), null, "Task '" + taskId + "' released by " + r.agent() + "."));
    }

    /**
     * An operator relay's force-release (A5.1): no owner or epoch check, only that the task is
     * held by an agent of {@code namespace} (the prefix of its name before {@code /}).
     */
    public Decision decideForcedRelease(String taskId, String namespace, double t) {
        String id = strip(taskId);
        Held held = live.get(id);
        if (held == null) {
            return denied(id, Refusal.NOT_CLAIMED, "task_not_claimed");
        }
        String owner = held.claim().owner();
        int slash = owner.indexOf('/');
        if (!(slash < 0 ? "" : owner.substring(0, slash)).equals(namespace)) {
            return denied(id, Refusal.NOT_OWNER, "task_not_in_namespace");
        }
        return granted(new ClaimReleasedEvent(t, id), new Reply.Granted(held.claim(), null,
                "Task '" + id + "' released by operator relay."));
    }

    private Decision decideUpdate(TaskUpdateCommand u, double t) {
        String taskId = strip(u.taskId());
        if (taskId.isEmpty()) {
            return denied(taskId, Refusal.TASK_ID_REQUIRED, "A task id is required to update a task.");
        }
        Held held = live.get(taskId);
        if (held == null) {
            return denied(taskId, Refusal.NOT_FOUND, "Task '" + taskId + "' not found.");
        }
        Claim claim = held.claim();
        Optional<Decision> fenced = fence(claim, u.agent(), u.epoch(), OWNED_BY);
        if (fenced.isPresent()) {
            return fenced.get();
        }
        if (u.expectedVersion() != null && u.expectedVersion() != claim.version()) {
            return denied(taskId, Refusal.VERSION_CONFLICT, "Task '" + taskId + "' version conflict: expected "
                    + u.expectedVersion() + ", current " + claim.version() + ".");
        }
        ClaimStatus status = claim.status();
        String requested = strip(u.status());
        if (!requested.isEmpty()) {
            Optional<ClaimStatus> target = ClaimStatus.fromWire(requested);
            if (target.isEmpty() || !claim.status().canMoveTo(target.get())) {
                return denied(taskId, Refusal.ILLEGAL_TRANSITION,
                        "Task '" + taskId + "' cannot transition " + claim.status().wire() + " -> " + requested + ".");
            }
            status = target.get();
        }
        Claim updated = claim.withUpdate(status,
                u.note() == null ? claim.note() : PythonWhitespace.strip(u.note()),
                u.dataRef() == null ? claim.dataRef() : PythonWhitespace.strip(u.dataRef()));
        return granted(new ClaimSnapshotEvent(t, ClaimSnapshotEvent.Kind.TASK_UPDATE, updated),
                new Reply.Granted(updated, null, "Task '" + taskId + "' updated."));
    }

    private Decision decideHandoff(HandoffCommand h, double t) {
        String taskId = strip(h.taskId());
        String recipient = strip(h.recipient());
        if (!h.recipientOnline()) { // checked first (contract §5.7)
            return denied(taskId, Refusal.TARGET_OFFLINE, "Handoff target '" + recipient + "' is not online.");
        }
        if (taskId.isEmpty()) {
            return denied(taskId, Refusal.TASK_ID_REQUIRED, "A task id is required to hand off.");
        }
        if (recipient.isEmpty()) {
            return denied(taskId, Refusal.TARGET_REQUIRED, "A handoff target is required.");
        }
        Held held = live.get(taskId);
        if (held == null) {
            return denied(taskId, Refusal.NOT_CLAIMED, "Task '" + taskId + "' is not currently claimed.");
        }
        Claim claim = held.claim();
        if (!claim.owner().equals(h.agent())) {
            return notOwner(claim, h.agent(), IS_OWNED_BY);
        }
        if (recipient.equals(claim.owner())) {
            return denied(taskId, Refusal.ALREADY_OWNER, "Task '" + taskId + "' is already owned by " + recipient + ".");
        }
        if (h.epoch() != null && h.epoch() != claim.epoch()) {
            return staleEpoch(claim, h.epoch());
        }
        String principal = h.recipientPrincipal() == null || h.recipientPrincipal().isEmpty()
                ? recipient : h.recipientPrincipal();
        if (!principal.equals(claim.principal()) && charged(principal) >= limits.maxClaimsPerPrincipal()) {
            return denied(taskId, Refusal.QUOTA_EXCEEDED, "Handoff refused: " + recipient
                    + " is at its principal claim quota (maximum " + limits.maxClaimsPerPrincipal() + " claims).");
        }
        Optional<ScopeIndex.Holding> conflict = index.firstConflict(claim.scope(), recipient, held.holding());
        if (conflict.isPresent()) {
            return new Decision(scopeConflict(taskId, conflict.get()), List.of());
        }
        String note = PythonWhitespace.isBlank(h.note()) ? claim.note() : PythonWhitespace.strip(h.note());
        Claim moved = claim.withOwnership(recipient, principal, t, t + limits.defaultTtlSeconds(),
                epochCounter + 1, note);
        return granted(new ClaimSnapshotEvent(t, ClaimSnapshotEvent.Kind.HANDOFF, moved),
                new Reply.Granted(moved, claim.owner(),
                        "Task '" + taskId + "' handed from " + claim.owner() + " to " + recipient + "."));
    }

    private Decision decideCheckpoint(CheckpointCommand k, double t) {
        String taskId = strip(k.taskId());
        if (taskId.isEmpty()) {
            return denied(taskId, Refusal.TASK_ID_REQUIRED, "A task id is required to save a checkpoint.");
        }
        Held held = live.get(taskId);
        if (held == null) {
            return denied(taskId, Refusal.NOT_FOUND, "Task '" + taskId + "' not found.");
        }
        Optional<Decision> fenced = fence(held.claim(), k.agent(), k.epoch(), OWNED_BY);
        if (fenced.isPresent()) {
            return fenced.get();
        }
        Claim saved = held.claim().withCheckpoint(k.checkpoint() == null ? "" : k.checkpoint());
        return granted(new ClaimSnapshotEvent(t, ClaimSnapshotEvent.Kind.CHECKPOINT, saved),
                new Reply.Granted(saved, null, "Checkpoint saved for task '" + taskId + "'."));
    }

    /**
     * Ownership then epoch: a stale epoch from a non-owner gets the ownership refusal, worded
     * {@code ownedBy} ({@link #IS_OWNED_BY} or {@link #OWNED_BY}, per verb).
     */
    private Optional<Decision> fence(Claim claim, String agent, Long epoch, String ownedBy) {
        if (!claim.owner().equals(agent)) {
            return Optional.of(notOwner(claim, agent, ownedBy));
        }
        if (epoch != null && epoch != claim.epoch()) {
            return Optional.of(staleEpoch(claim, epoch));
        }
        return Optional.empty();
    }

    /** A9's non-owner text for {@code release} (and our {@code handoff}): {@code Task 'T' is owned by A, not B.} */
    private static final String IS_OWNED_BY = "' is owned by ";
    /**
     * The recorded reference's non-owner text for {@code checkpoint} ({@code checkpoint_denied})
     * and {@code task_update} ({@code error}): {@code Task 'T' owned by A, not B.}, without "is"
     * (shared/transcripts/reference-v2.jsonl); tools match on these texts.
     */
    private static final String OWNED_BY = "' owned by ";

    /** The non-owner refusal, worded per verb as the reference words it. */
    private static Decision notOwner(Claim claim, String agent, String ownedBy) {
        return new Decision(new Reply.Denied(claim.taskId(), Refusal.NOT_OWNER,
                "Task '" + claim.taskId() + ownedBy + claim.owner() + ", not " + agent + ".", claim.owner(),
                null), List.of());
    }

    private static Decision staleEpoch(Claim claim, long supplied) {
        return denied(claim.taskId(), Refusal.STALE_EPOCH, "Task '" + claim.taskId() + "' epoch is stale (current "
                + claim.epoch() + ").");
    }

    private static Reply.Denied scopeConflict(String taskId, ScopeIndex.Holding other) {
        return new Reply.Denied(taskId, Refusal.SCOPE_CONFLICT, "Task '" + taskId + "' file scope conflicts with '"
                + other.taskId() + "' held by " + other.owner() + ".", other.owner(), other.taskId());
    }

    private static Decision claimDenied(double t, String agent, String taskId, Scope scope, Reply.Denied reply) {
        return new Decision(reply, List.of(DenialEvidence.of(t, agent, taskId, scope, reply.refusal().name())));
    }

    private static Decision denied(String taskId, Refusal refusal, String message) {
        return new Decision(new Reply.Denied(taskId, refusal, message), List.of());
    }

    private static Decision granted(CoordinationEvent event, Reply.Granted reply) {
        return new Decision(reply, List.of(event));
    }

    private static String strip(String s) {
        return s == null ? "" : PythonWhitespace.strip(s);
    }

    // ---------------------------------------------------------------------------------------
    // Apply

    /**
     * Applies one event: the only way claim state changes. Expires what is due at the event's
     * timestamp first, exactly as the live decision did. Events of other families are ignored.
     */
    public void apply(CoordinationEvent event) {
        if (event instanceof ClaimSnapshotEvent s) {
            advanceTo(s.ts());
            put(s.claim());
        } else if (event instanceof ClaimReleasedEvent r) {
            advanceTo(r.ts());
            Held held = live.get(r.taskId());
            if (held != null) {
                record(() -> insert(held.claim(), held.holding().order()));
                remove(held);
            }
            dropRetained(r.taskId());
        }
        // claim_denial and idempotency events are not registry state (INV-RR-3).
    }

    private void put(Claim claim) {
        Held previous = live.get(claim.taskId());
        long order;
        if (previous != null) {
            order = previous.holding().order();
            record(() -> {
                remove(live.get(claim.taskId()));
                insert(previous.claim(), order);
            });
            if (sameHolding(previous.claim, claim)) {
                replaceKeepingHolding(previous, claim, order);
            } else {
                remove(previous);
                insert(claim, order);
            }
        } else {
            order = ++orderCounter;
            record(() -> {
                remove(live.get(claim.taskId()));
                orderCounter = order - 1; // a rolled-back claim leaves no gap in the numbering
            });
            insert(claim, order);
        }
        dropRetained(claim.taskId());
        if (claim.epoch() > epochCounter) {
            long before = epochCounter;
            record(() -> epochCounter = before);
            epochCounter = claim.epoch();
        }
    }

    /** True when the index and the quota see no difference between the two: same owner, principal and scope. */
    private static boolean sameHolding(Claim before, Claim after) {
        return before.owner().equals(after.owner()) && before.principal().equals(after.principal())
                && before.worktree().equals(after.worktree()) && before.paths().equals(after.paths())
                && java.util.Objects.equals(before.pathIdentity(), after.pathIdentity());
    }

    /**
     * Replaces a live claim by a snapshot of it that keeps its owner, principal and scope (a task
     * update, a checkpoint, a renewal): the scope-index entry and the quota charge stay as they
     * are, since removing and re-adding them would leave the index and the charges as they were;
     * the old expiry entry goes stale and the new lease is pushed, as for any replacement.
     */
    private void replaceKeepingHolding(Held previous, Claim claim, long order) {
        previous.live = false;
        if (!previous.claim.checkpoint().isEmpty()) {
            checkpointed--;
        }
        Held held = new Held(claim, previous.entry, previous.charge);
        live.put(claim.taskId(), held);
        if (!claim.checkpoint().isEmpty()) {
            checkpointed++;
        }
        schedule(held, order);
    }

    private void insert(Claim claim, long order) {
        ScopeIndex.Holding holding = new ScopeIndex.Holding(claim.taskId(), claim.owner(), order, claim.scope());
        Charge charge = chargedByPrincipal.get(claim.principal());
        if (charge == null) {
            charge = new Charge();
            chargedByPrincipal.put(claim.principal(), charge);
        } else if (charge.count == 0) {
            emptyCharges--;
        }
        charge.count++;
        Held held = new Held(claim, index.index(holding), charge);
        live.put(claim.taskId(), held);
        if (!claim.checkpoint().isEmpty()) {
            checkpointed++;
        }
        schedule(held, order);
    }

    /** Pushes a live claim's lease onto the expiry heap, rebuilding the heap when stale entries dominate. */
    private void schedule(Held held, long order) {
        expiry.push(held.claim.leaseExpiresAt(), order, held);
        if (expiry.size() > 2 * live.size() + 16) {
            expiry.clear();
            for (Held h : live.values()) {
                expiry.push(h.claim.leaseExpiresAt(), h.holding().order(), h);
            }
        }
    }

    private void remove(Held held) {
        if (held == null) {
            return;
        }
        held.live = false;
        live.remove(held.claim.taskId());
        if (!held.claim.checkpoint().isEmpty()) {
            checkpointed--;
        }
        index.remove(held.entry);
        if (--held.charge.count == 0 && ++emptyCharges > (chargedByPrincipal.size() >> 1) + 16) {
            chargedByPrincipal.values().removeIf(c -> c.count == 0);
            emptyCharges = 0;
        }
    }

    private void dropRetained(String taskId) {
        RetainedCheckpoints.Slot dropped = retainedCheckpoints.drop(taskId);
        if (dropped != null) {
            // Back at its original place, not the young end: eviction order stays a replay's.
            record(() -> retainedCheckpoints.reinstate(taskId, dropped));
        }
    }

    private String retainedOrEmpty(String taskId) {
        String checkpoint = retainedCheckpoints.get(taskId);
        return checkpoint == null ? "" : checkpoint;
    }

    /**
     * Advances the registry's clock to {@code at} (never backwards) and expires every lease
     * whose expiry is at or before it; a non-empty checkpoint is retained for the next claimant.
     * Expiry is a function of time, so a rolled-back batch does not undo it.
     *
     * @return the registry's time after the call
     */
    public double advanceTo(double at) {
        if (at > now) {
            now = at;
        }
        if (!expiry.hasDue(now)) {
            return now;
        }
        if (expiry.allDue(now)) {
            expireEverything();
            return now;
        }
        int polled = 0;
        while (expiry.hasDue(now)) {
            if (polled++ == ONE_BY_ONE_BEFORE_SCAN && expireMostInBulk()) {
                return now;
            }
            Held held = expiry.poll();
            // A heap entry is due exactly at its claim's expiry; a replaced or released claim's
            // entry is stale and skipped.
            if (held.live) {
                remove(held);
                retain(held.claim);
            }
        }
        return now;
    }

    /**
     * When at least half of the live leases are due at {@link #now}, expires all of them at once
     * and returns true; otherwise changes nothing and returns false. Removing a lease from the
     * live map, the scope index and its charge costs a few dozen random memory accesses, so with
     * most of them due it is cheaper to rebuild those from the survivors than to unlink the
     * rest. The outcome is that of expiring them one by one in heap order: the due set is the
     * same (a key at or before now; the one-by-one loop never reaches a NaN key here, since a key
     * after now exists when not everything is due), and the order, which only shows in the order
     * checkpoints are retained, is restored by sorting the checkpointed ones by (expiry, insertion).
     */
    private boolean expireMostInBulk() {
        int survivorCount = expiry.countNotDue(now, held -> held.live);
        if (survivorCount > live.size() - survivorCount) {
            return false;
        }
        List<Held> survivors = new ArrayList<>(survivorCount);
        List<Held> saved = new ArrayList<>();
        double t = now;
        // A due entry is read only when some live claim carries a checkpoint: the expired records
        // are dropped with the heap, the map and the index, and nothing reads their live flag again.
        boolean anyCheckpoint = checkpointed > 0;
        expiry.forEach((expiresAt, order, held) -> {
            if (expiresAt <= t) {
                if (anyCheckpoint && held.live && !held.claim.checkpoint().isEmpty()) {
                    saved.add(held);
                }
            } else if (held.live) { // not a released or replaced claim's stale entry
                survivors.add(held);
            }
        });
        saved.sort(ClaimRegistry::heapOrder);
        for (Held held : saved) {
            retain(held.claim);
        }
        // Rebuild around the survivors in insertion order, so the index lists holdings in the
        // order they were added, as it did before.
        survivors.sort((a, b) -> Long.compare(a.holding().order(), b.holding().order()));
        int capacity = Math.max(16, (int) (survivors.size() / 0.75f) + 1);
        Map<String, Held> kept = new HashMap<>(capacity);
        // every live claim of a principal shares the one charge its map entry holds
        Map<String, Charge> charges = new HashMap<>(capacity);
        index.clear();
        expiry.clear();
        checkpointed = 0;
        for (Held held : survivors) {
            held.charge.count = 0;
        }
        for (Held held : survivors) {
            kept.put(held.claim.taskId(), held);
            held.entry = index.index(held.holding());
            held.charge.count++;
            charges.putIfAbsent(held.claim.principal(), held.charge);
            if (!held.claim.checkpoint().isEmpty()) {
                checkpointed++;
            }
            expiry.push(held.claim.leaseExpiresAt(), held.holding().order(), held);
        }
        live = kept;
        chargedByPrincipal = charges;
        emptyCharges = 0;
        return true;
    }

    /** The order the expiry heap yields leases in: expiry instant, then insertion order. */
    private static int heapOrder(Held a, Held b) {
        int c = Double.compare(a.claim.leaseExpiresAt(), b.claim.leaseExpiresAt());
        return c != 0 ? c : Long.compare(a.holding().order(), b.holding().order());
    }

    /**
     * Every entry in the heap is due, so every live lease expires (each live claim has exactly
     * one heap entry). The outcome is that of expiring them one by one in heap order, (expiry,
     * insertion order), which only shows in the order checkpoints are retained: so only the
     * checkpointed claims are sorted, and the rest is dropped wholesale instead of unlinked
     * lease by lease.
     */
    private void expireEverything() {
        if (checkpointed > 0) {
            List<Held> saved = new ArrayList<>(checkpointed);
            for (Held held : live.values()) {
                if (!held.claim.checkpoint().isEmpty()) {
                    saved.add(held);
                }
            }
            saved.sort(ClaimRegistry::heapOrder);
            for (Held held : saved) {
                retain(held.claim);
            }
        }
        // The dropped Held records are unreachable from here on: the heap that could name them
        // is cleared with them, and undo steps look claims up by task id.
        live.clear();
        index.clear();
        chargedByPrincipal.clear();
        emptyCharges = 0;
        checkpointed = 0;
        expiry.clear();
    }

    /** Keeps an expired claim's non-empty checkpoint for the next claimant, dropping the oldest. */
    private void retain(Claim claim) {
        if (!claim.checkpoint().isEmpty()) {
            retainedCheckpoints.retain(claim.taskId(), claim.checkpoint());
        }
    }

    // ---------------------------------------------------------------------------------------
    // State snapshots

    /** Everything this registry holds, as data (on the owning thread, outside a batch). */
    public StateImage.Claims image() {
        List<StateImage.Held> held = new ArrayList<>(live.size());
        for (Held h : live.values()) {
            held.add(new StateImage.Held(h.claim, h.holding().order()));
        }
        held.sort(Comparator.comparingLong(StateImage.Held::order));
        List<StateImage.Retained> kept = new ArrayList<>(retainedCheckpoints.size());
        retainedCheckpoints.forEach((task, checkpoint) -> kept.add(new StateImage.Retained(task, checkpoint)));
        return new StateImage.Claims(now, epochCounter, orderCounter, held, kept);
    }

    /**
     * Loads an image into this empty registry: the same indexes, charges, expiry heap and
     * counters as the registry it was taken from. The retention bound in force is re-applied
     * (INV-RR-2); nothing expires here, the caller advances the clock afterwards.
     */
    public void restore(StateImage.Claims image) {
        Restore restore = restoreInPieces(image.live().size());
        for (StateImage.Held h : image.live()) {
            restore.add(h.claim(), h.order());
        }
        restore.finish(image.now(), image.epochCounter(), image.orderCounter(), image.retained());
    }

    /**
     * Starts loading an image into this empty registry one live claim at a time, so that a
     * start-up can load the claims while it is still decoding them: {@link Restore#add} each
     * live claim in image order, then {@link Restore#finish}. The end state is the one
     * {@link #restore(StateImage.Claims)} gives. The live map is sized for {@code expectedLive}
     * up front, so loading 100,000 claims never rehashes it.
     */
    public Restore restoreInPieces(int expectedLive) {
        if (!live.isEmpty() || orderCounter != 0 || !retainedCheckpoints.isEmpty()) {
            throw new IllegalStateException("restore needs an empty registry");
        }
        if (expectedLive > 0) {
            live = new HashMap<>(Math.max(16, (int) Math.min(1 << 30, expectedLive / 0.75 + 1)));
        }
        return new Restore();
    }

    /** A restore in progress (see {@link #restoreInPieces}); used by one thread at a time. */
    public final class Restore {
        private boolean finished;

        private Restore() {
        }

        /** Loads one live claim of the image, with its insertion order. */
        public void add(Claim claim, long order) {
            if (finished) {
                throw new IllegalStateException("this restore is finished");
            }
            insert(claim, order);
        }

        /** Loads the rest of the image: its clock, counters and retained checkpoints. */
        public void finish(double imageNow, long imageEpochCounter, long imageOrderCounter,
                           List<StateImage.Retained> retained) {
            if (finished) {
                throw new IllegalStateException("this restore is finished");
            }
            finished = true;
            for (StateImage.Retained r : retained) {
                retainedCheckpoints.retain(r.taskId(), r.checkpoint());
            }
            now = imageNow;
            epochCounter = imageEpochCounter;
            orderCounter = imageOrderCounter;
        }
    }

    // ---------------------------------------------------------------------------------------
    // Batches: undo what a failed journal append must not leave behind (INV-JA-2)

    private void record(Runnable step) {
        undo.record(step);
    }

    // ---------------------------------------------------------------------------------------
    // Reads (each expires first, like every decision)

    /** Live claims at {@code at}, sorted by task id. */
    public List<Claim> snapshot(double at) {
        advanceTo(at);
        List<Claim> claims = new ArrayList<>(live.size());
        for (Held held : live.values()) {
            claims.add(held.claim());
        }
        claims.sort(Comparator.comparing(Claim::taskId));
        return claims;
    }

    /**
     * The live claims as of the last expiry, unsorted, without running expiry: one pass over the
     * registry for periodic readers that filter by lease end themselves (the writer pauses only
     * for the copy).
     */
    public List<Claim> liveUnsorted() {
        List<Claim> claims = new ArrayList<>(live.size());
        for (Held held : live.values()) {
            claims.add(held.claim());
        }
        return claims;
    }

    /**
     * The live claims at {@code at}, unsorted: expires first, like every read, then one pass. For
     * a reader that orders them itself on its own thread (scoped delivery's start-up seed), so
     * that the writer does not spend a sort of every live claim on it.
     */
    public List<Claim> liveAt(double at) {
        advanceTo(at);
        return liveUnsorted();
    }

    /** The live claim on {@code taskId} at {@code at}, if any. */
    public Optional<Claim> liveClaim(String taskId, double at) {
        advanceTo(at);
        Held held = live.get(taskId);
        return held == null ? Optional.empty() : Optional.of(held.claim());
    }

    /** Live claims currently charged to {@code principal} (as of the last expiry). */
    public int charged(String principal) {
        Charge charge = chargedByPrincipal.get(principal);
        return charge == null ? 0 : charge.count;
    }

    /** The checkpoint retained for a task whose lease lapsed, if any. */
    public Optional<String> retainedCheckpoint(String taskId) {
        return Optional.ofNullable(retainedCheckpoints.get(taskId));
    }

    /**
     * Raises the epoch counter to {@code epoch} when it is below (a rebuild's floor from journal
     * rows it skipped, INV-EF-1); never lowers it. Not undoable: called only during a rebuild,
     * outside any batch.
     */
    public void raiseEpochFloor(long epoch) {
        if (epoch > epochCounter) {
            epochCounter = epoch;
        }
    }

    /** The highest epoch issued (or replayed) so far. */
    public long epochCounter() {
        return epochCounter;
    }

    /** Number of live claims at {@code at} (expiring first, like every read), without copying or sorting them. */
    public int liveCount(double at) {
        advanceTo(at);
        return live.size();
    }

    /** Number of live claims as of the last expiry. */
    public int liveCount() {
        return live.size();
    }

    /** The registry's time: the latest instant it has been advanced to. */
    public double now() {
        return now;
    }

    /** Entries in the expiry heap, live and stale; bounded by 2 × live + 16 after each insert. */
    int expiryQueueSize() {
        return expiry.size();
    }
}
