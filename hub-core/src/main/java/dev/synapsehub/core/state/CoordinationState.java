package dev.synapsehub.core.state;

import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.board.BoardLimits;
import dev.synapsehub.core.card.CardRegistry;
import dev.synapsehub.core.command.CardCommand;
import dev.synapsehub.core.channel.ChannelRegistry;
import dev.synapsehub.core.command.IdentityPinCommand;
import dev.synapsehub.core.identity.IdentityPinRegistry;
import dev.synapsehub.core.command.ChannelCommand;
import dev.synapsehub.core.command.ChatCommand;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.board.BoardRegistry;
import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.AuditRecordCommand;
import dev.synapsehub.core.command.BoardCommand;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.reply.AuditRecordedReply;
import dev.synapsehub.core.board.NoteKind;
import dev.synapsehub.core.command.ClaimFamilyCommand;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.LedgerProgressCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.reply.ProgressNoteReply;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.MessagingCommand;
import dev.synapsehub.core.command.ResourceOfferCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.IdempotencyRecordedEvent;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.MessagingLimits;
import dev.synapsehub.core.messaging.MessagingRegistry;
import dev.synapsehub.core.resource.ResourceLimits;
import dev.synapsehub.core.resource.ResourceRegistry;
import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

/**
 * Everything the hub is authoritative for, behind one {@link #apply} path used live and on
 * replay (INV-RR-1 by construction). Owned by one thread: the actor's.
 *
 * <p>The state mirrors the journal's numbering: every applied event takes the next sequence
 * number ({@link #lastSeq()}), because mailbox facts (watermarks, acks, receipts) are in journal
 * seqs. Replay adopts the journal's own seqs, so a log with gaps still lines up; the journal
 * must number a live batch consecutively from its last seq (see {@link Journal#append}).
 */
public final class CoordinationState {
    /** Default number of idempotency keys retained. */
    public static final int DEFAULT_IDEMPOTENCY_CAPACITY = 100_000;

    /**
     * The one undo log every registry records into while a batch is open: a rollback undoes the
     * whole state in one pass, newest change first, whichever registry made it (INV-JA-2).
     */
    private final UndoLog undo = new UndoLog();
    // not final: replaceWith swaps in registries restored from an image (a mesh snapshot install)
    private ClaimRegistry claims;
    private IdempotencyLedger idempotency;
    private BoardRegistry board;
    private ResourceRegistry resources;
    private MessagingRegistry messaging;
    private ChannelRegistry channels;
    private CardRegistry cards;
    private volatile IdentityPinRegistry pins = new IdentityPinRegistry(undo); // read by the edge (committed view)
    private dev.synapsehub.core.memory.FindingQuota findings = new dev.synapsehub.core.memory.FindingQuota(undo);
    private volatile dev.synapsehub.core.governance.NamespaceGovernance governance = // read by the edge (committed view)
            new dev.synapsehub.core.governance.NamespaceGovernance(undo);
    private java.util.Map<String, String> governedOwners = java.util.Map.of();
    private final RegistryLimits limits;
    private final int idempotencyCapacity;
    private final BoardLimits boardLimits;
    private final ResourceLimits resourceLimits;
    private final MessagingLimits messagingLimits;
    private long lastSeq;

    /** A state with the given bounds for every registry. */
    public CoordinationState(RegistryLimits limits, int idempotencyCapacity, BoardLimits boardLimits,
            ResourceLimits resourceLimits, MessagingLimits messagingLimits) {
        this.limits = limits;
        this.idempotencyCapacity = idempotencyCapacity;
        this.boardLimits = boardLimits;
        this.resourceLimits = resourceLimits;
        this.messagingLimits = messagingLimits;
        this.claims = new ClaimRegistry(limits, undo);
        this.idempotency = new IdempotencyLedger(idempotencyCapacity, undo);
        this.board = new BoardRegistry(boardLimits, undo);
        this.resources = new ResourceRegistry(resourceLimits, undo);
        this.messaging = new MessagingRegistry(messagingLimits, undo);
        this.channels = new ChannelRegistry(messagingLimits.maxHistory(), undo);
        this.cards = new CardRegistry(undo);
    }

    /** A state with the given claim bounds and idempotency retention, other registries at defaults. */
    public CoordinationState(RegistryLimits limits, int idempotencyCapacity) {
        this(limits, idempotencyCapacity, BoardLimits.DEFAULTS, ResourceLimits.DEFAULTS, MessagingLimits.DEFAULTS);
    }

    /** A state with the spec defaults. */
    public CoordinationState() {
        this(RegistryLimits.DEFAULTS, DEFAULT_IDEMPOTENCY_CAPACITY);
    }

    /**
     * Decides a command against the current state without changing it (beyond time-driven
     * expiry). The hub time used is {@code now} raised to the state's clock, which never goes back.
     */
    public Decision decide(Command command, double now) {
        if (command instanceof dev.synapsehub.core.command.ClaimCommand c) {
            Reply.Denied partitioned = governance.refusal(c.agent(), c.taskId());
            if (partitioned != null) { // INV-CR-4 where the claim is decided: time moves, nothing else does
                claims.advanceTo(now);
                return new Decision(partitioned, List.of());
            }
        }
        if (command instanceof ClaimFamilyCommand c) {
            return withHubNote(c, claims.decide(c, now));
        }
        double t = claims.advanceTo(now);
        if (command instanceof BoardCommand b) {
            return board.decide(b, t);
        } else if (command instanceof ResourceOfferCommand r) {
            return resources.decide(r, t);
        } else if (command instanceof ChannelCommand ch) {
            return channels.decide(ch, t);
        } else if (command instanceof CardCommand card) {
            return cards.decide(card, t);
        } else if (command instanceof dev.synapsehub.core.command.CardRemoveCommand remove) {
            return cards.decide(remove, t);
        } else if (command instanceof IdentityPinCommand p) {
            return pins.decide(p, t, lastSeq);
        } else if (command instanceof ChatCommand c && !PythonWhitespace.isBlank(c.channel())) {
            String id = PythonWhitespace.strip(c.channel());
            if (!channels.isMember(id, c.agent())) {
                return new Decision(new Reply.Denied("", Refusal.NOT_A_MEMBER, "not a member of channel '" + id + "'"),
                        List.of());
            }
            return messaging.decideChannelChat(c, t, lastSeq, channels.members(id));
        } else if (command instanceof MessagingCommand m) {
            return messaging.decide(m, t, lastSeq);
        } else if (command instanceof dev.synapsehub.core.command.OperatorReleaseCommand o) {
            return decideOperatorRelease(o, t);
        } else if (command instanceof dev.synapsehub.core.command.MemoryCommand m) {
            return findings.decide(m, t, lastSeq + 1);
        } else if (command instanceof AuditRecordCommand a) {
            return new Decision(new AuditRecordedReply(a.kind(), lastSeq + 1), // the record is the decision's only event
                    List.of(new AuditRecordEvent(t, a.kind(), a.payloadJson())));
        }
        throw new IllegalArgumentException("unknown command " + command.getClass().getName());
    }

    /**
     * An operator relay's release. With an {@code approver} (two-person, decided here so that
     * approvals taken by different mesh nodes meet in one replicated place): the first principal
     * is recorded and the reply is {@link Refusal#AWAITING_SECOND_OPERATOR}; the same one again
     * changes nothing; a distinct one consumes the approval and the release is decided (consumed
     * even if the release is then refused, as a single hub's in-memory approval is).
     */
    private Decision decideOperatorRelease(dev.synapsehub.core.command.OperatorReleaseCommand o, double t) {
        List<CoordinationEvent> events = new ArrayList<>();
        if (o.approver() != null) {
            String key = RelayApprovals.key("release", o.namespace(), PythonWhitespace.strip(o.taskId()));
            java.util.Optional<String> first = RelayApprovals.first(idempotency, key);
            if (first.isEmpty()) {
                return new Decision(new Reply.Denied(o.taskId(), Refusal.AWAITING_SECOND_OPERATOR,
                        "recorded; awaiting approval by a second operator"),
                        List.of(RelayApprovals.recorded(t, key, o.approver())));
            }
            if (first.get().equals(o.approver())) {
                return new Decision(new Reply.Denied(o.taskId(), Refusal.AWAITING_SECOND_OPERATOR,
                        "already recorded by this verified principal; awaiting a distinct principal"), List.of());
            }
            events.add(RelayApprovals.consumed(t, key, o.approver()));
        }
        Decision d = claims.decideForcedRelease(o.taskId(), o.namespace(), t);
        if (!d.reply().granted()) {
            return events.isEmpty() ? d : new Decision(d.reply(), events);
        }
        events.addAll(d.events());
        // audit-only on replay (INV-RR-3): the release event is what frees the task
        events.add(new AuditRecordEvent(t, "operator_relay", o.auditPayloadJson()));
        return new Decision(d.reply(), events);
    }

    /**
     * A granted handoff, or a release with evidence, posts a hub-authored progress note. It is
     * decided here with the change itself, so the two are one decision, journaled in one batch
     * and published together in commit order (contract §5.7, §A11 R3).
     */
    private Decision withHubNote(ClaimFamilyCommand command, Decision decision) {
        if (!(decision.reply() instanceof Reply.Granted granted)) {
            return decision;
        }
        LedgerProgressCommand note;
        if (command instanceof HandoffCommand h) {
            String text = "handed off to " + granted.claim().owner()
                    + (PythonWhitespace.isBlank(h.note()) ? "" : ": " + PythonWhitespace.strip(h.note()));
            note = new LedgerProgressCommand(h.agent(), granted.claim().taskId(), NoteKind.NOTE.wire(), text);
        } else if (command instanceof ReleaseCommand r && r.assessment() != null) {
            note = new LedgerProgressCommand(r.agent(), granted.claim().taskId(), NoteKind.ASSESSMENT.wire(),
                    r.assessment());
        } else {
            return decision;
        }
        Decision posted = board.decide(note, claims.now());
        if (!(posted.reply() instanceof ProgressNoteReply p)) {
            throw new IllegalStateException("the board refused a hub note: " + posted.reply());
        }
        List<CoordinationEvent> events = new ArrayList<>(decision.events());
        events.addAll(posted.events());
        return new Decision(granted.withNote(p.note()), events);
    }

    /** The one path by which state changes; the event takes the next journal seq. */
    public void apply(CoordinationEvent event) {
        long seq = ++lastSeq;
        undo.record(() -> lastSeq = seq - 1);
        // live, the decision that made this event first advanced the hub clock to its time (a no-op here
        // then); a replay does the same for every family, so it ends on the clock a snapshot images (INV-RR-1)
        claims.advanceTo(event.ts());
        claims.apply(event);
        messaging.apply(event, seq);
        board.apply(event);
        resources.apply(event);
        channels.apply(event);
        cards.apply(event);
        pins.apply(event);
        findings.apply(event);
        governance.apply(event);
        if (event instanceof IdempotencyRecordedEvent recorded) {
            idempotency.apply(recorded);
        }
    }

    /**
     * Rebuilds this (fresh) state from the journal, then expires what is past due at
     * {@code now} (INV-RR-1). Bounds are re-applied by the same apply path (INV-RR-2).
     *
     * @param progress told the number of events replayed so far, every 10,000 events
     * @return the number of events replayed
     */
    public long replay(Journal journal, double now, LongConsumer progress) throws JournalException {
        long[] count = {0};
        journal.replay(journaled -> {
            apply(journaled);
            if (++count[0] % 10_000 == 0) {
                progress.accept(count[0]);
            }
        });
        raiseEpochFloor(journal.replayEpochFloor());
        settle(now, journal.lastSeq());
        return count[0];
    }

    /**
     * Raises the epoch counter to {@code epoch} when it is below: an epoch a rebuild could not
     * apply (a skipped, damaged journal row) was still issued, and must never be issued again
     * (INV-EF-1). Call it on the owning thread during a rebuild, before the state serves.
     */
    public void raiseEpochFloor(long epoch) {
        claims.raiseEpochFloor(epoch);
    }

    /**
     * Ends a rebuild (replay, or a restored image plus the journal tail): expires what is past
     * due at {@code now} (INV-RR-1) and takes up the numbering at the journal's last seq, which
     * may lie past the last event applied (skipped rows).
     */
    public void settle(double now, long journalLastSeq) {
        claims.advanceTo(now);
        resources.advanceTo(now);
        lastSeq = Math.max(lastSeq, journalLastSeq);
    }

    /**
     * Everything this state holds, as data: call it on the owning thread between batches (the
     * actor, at a commit boundary), so the image holds committed state only. Cheap: the parts
     * are immutable records, so it copies references, not claims.
     */
    public StateImage image() {
        return new StateImage(lastSeq, claims.image(), idempotency.image(), board.image(), resources.image(),
                messaging.image(), channels.image(), cards.image(), pins.image(), findings.image(), governance.image());
    }

    /**
     * Loads an image into this fresh state: afterwards it holds what the imaged state held, and
     * applying the journal's events after {@link StateImage#lastSeq()} rebuilds what a full
     * replay rebuilds. The bounds of this state are re-applied (INV-RR-2).
     */
    public void restore(StateImage image) {
        if (lastSeq != 0) {
            throw new IllegalStateException("restore needs a fresh state");
        }
        claims.restore(image.claims());
        restoreRegistriesButClaims(image);
        lastSeq = image.lastSeq();
    }

    /**
     * Start-up's restore in two independent parts, for a caller that loads the claims while it
     * is still decoding them: the claims through the returned {@link ClaimRegistry.Restore}
     * (on one thread), everything else and the seq through {@link #restoreAllButClaims(StateImage)}
     * (on another; that image's claims part is ignored). Both must complete, and the caller must
     * wait for the claims' thread, before any other thread sees this state. The end state is the
     * one {@link #restore(StateImage)} gives for the same image.
     *
     * @param expectedLive the number of live claims the image holds (sizes the registry once)
     */
    public ClaimRegistry.Restore restoreClaimsInPieces(int expectedLive) {
        // no check of lastSeq here: the other half sets it, possibly first, on another thread;
        // the registry itself refuses unless it is empty
        return claims.restoreInPieces(expectedLive);
    }

    /**
     * The other half of {@link #restoreClaimsInPieces}: every registry but the claims, and the
     * seq, from {@code image} (whose claims part is not read).
     */
    public void restoreAllButClaims(StateImage image) {
        if (lastSeq != 0) {
            throw new IllegalStateException("restore needs a fresh state");
        }
        restoreRegistriesButClaims(image);
        lastSeq = image.lastSeq();
    }

    /** Every registry but the claims, which {@link #restore(StateImage, java.util.concurrent.Executor)} loads apart. */
    private void restoreRegistriesButClaims(StateImage image) {
        idempotency.restore(image.idempotency());
        board.restore(image.board());
        resources.restore(image.resources());
        messaging.restore(image.messaging());
        channels.restore(image.channels());
        cards.restore(image.cards());
        pins.restore(image.pins());
        findings.restore(image.findingCounts());
        governance.restore(image.governance());
    }

    /**
     * As {@link #restore(StateImage)}, with the claims (most of a large image) loaded by
     * {@code claimsRunner} while the calling thread loads the rest: for start-up, before any
     * other thread can see this state. The registries share nothing, and waiting for the claims
     * orders their writes before this returns. A part that is refused throws as
     * {@link #restore(StateImage)} does (the claims' failure first); the state is then unusable.
     * When {@code claimsRunner} cannot start the work, everything is loaded on the calling thread.
     */
    public void restore(StateImage image, java.util.concurrent.Executor claimsRunner) {
        if (lastSeq != 0) {
            throw new IllegalStateException("restore needs a fresh state");
        }
        java.util.concurrent.CompletableFuture<Void> claimsDone;
        try {
            claimsDone = java.util.concurrent.CompletableFuture.runAsync(() -> claims.restore(image.claims()), claimsRunner);
        } catch (java.util.concurrent.RejectedExecutionException | OutOfMemoryError e) {
            // no second thread to be had (a runner refusing, or "unable to create native thread"):
            // a start-up is slower on one thread, never refused for that
            restore(image);
            return;
        }
        Throwable rest = null;
        try {
            restoreRegistriesButClaims(image);
        } catch (RuntimeException | Error e) { // held until the claims' thread is done: it writes this state
            rest = e;
        }
        try {
            claimsDone.join();
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw e;
        }
        if (rest instanceof RuntimeException r) {
            throw r;
        }
        if (rest instanceof Error err) {
            throw err;
        }
        lastSeq = image.lastSeq();
    }

    /**
     * Replaces everything this state holds with {@code image}, whatever it held before (a mesh
     * node installing a snapshot from its leader). The image is loaded into fresh registries with
     * this state's bounds (INV-RR-2) before anything here changes, so an image a registry refuses
     * leaves this state as it was. Not undoable: a batch open now goes on over the new registries.
     */
    public void replaceWith(StateImage image) {
        // Loaded with the open batch set aside, so restoring records nothing into it; a refused
        // image takes the batch back as it was.
        UndoLog.Suspended batch = undo.suspend();
        ClaimRegistry c = new ClaimRegistry(limits, undo);
        IdempotencyLedger i = new IdempotencyLedger(idempotencyCapacity, undo);
        BoardRegistry b = new BoardRegistry(boardLimits, undo);
        ResourceRegistry r = new ResourceRegistry(resourceLimits, undo);
        MessagingRegistry m = new MessagingRegistry(messagingLimits, undo);
        ChannelRegistry ch = new ChannelRegistry(messagingLimits.maxHistory(), undo);
        CardRegistry cr = new CardRegistry(undo);
        IdentityPinRegistry p = new IdentityPinRegistry(undo);
        dev.synapsehub.core.memory.FindingQuota f = new dev.synapsehub.core.memory.FindingQuota(undo);
        dev.synapsehub.core.governance.NamespaceGovernance g = new dev.synapsehub.core.governance.NamespaceGovernance(undo);
        g.govern(governedOwners);
        try {
            c.restore(image.claims());
            i.restore(image.idempotency());
            b.restore(image.board());
            r.restore(image.resources());
            m.restore(image.messaging());
            ch.restore(image.channels());
            cr.restore(image.cards());
            p.restore(image.pins());
            f.restore(image.findingCounts());
            g.restore(image.governance());
        } catch (RuntimeException refused) {
            undo.resume(batch);
            throw refused;
        }
        claims = c;
        idempotency = i;
        board = b;
        resources = r;
        messaging = m;
        channels = ch;
        cards = cr;
        pins = p;
        findings = f;
        governance = g;
        lastSeq = image.lastSeq();
        if (batch.wasOpen()) {
            undo.begin(); // the old registries' undo steps are dropped with them
        }
    }

    /** Applies a journaled event under its own seq (replay; gaps in the log are skipped over). */
    public void apply(JournaledEvent journaled) {
        if (journaled.seq() - 1 > lastSeq) {
            long before = lastSeq;
            undo.record(() -> lastSeq = before);
            lastSeq = journaled.seq() - 1;
        }
        apply(journaled.event());
    }

    /** The journal seq of the last applied event (0 before any). */
    public long lastSeq() {
        return lastSeq;
    }

    /**
     * Realigns the numbering with the journal after a commit that numbered differently; only
     * a journal breaking its contract needs this, and the actor logs it.
     */
    public void resyncSeq(long journalLastSeq) {
        lastSeq = journalLastSeq;
    }

    /** Starts recording undo steps (a batch about to be journaled). */
    public void beginBatch() {
        undo.begin();
    }

    /** The batch committed: keep its effects. */
    public void commitBatch() {
        undo.commit();
    }

    /**
     * The batch failed to commit: undo its effects (INV-JA-2), every registry's in one pass,
     * newest change first.
     */
    public void rollbackBatch() {
        undo.rollback();
    }

    /** The claim registry. */
    public ClaimRegistry claims() {
        return claims;
    }

    /** The idempotency ledger. */
    public IdempotencyLedger idempotency() {
        return idempotency;
    }

    /** Chat history, dead letters, mailbox watermarks and pending receipts. */
    public MessagingRegistry messaging() {
        return messaging;
    }

    /**
     * Governs claims in the namespaces of {@code owners} (namespace to owner hub): a claim in one
     * the applied federation records leave partitioned is refused here (INV-CR-4). A mesh node
     * that watches other hubs sets it at start, so its leader's actor refuses against every
     * committed partition record; a single hub leaves it off (its resolver refuses at the edge).
     */
    public void governClaims(java.util.Map<String, String> owners) {
        governedOwners = java.util.Map.copyOf(owners);
        governance.govern(governedOwners);
    }

    /** Unresolved namespace partitions and quarantined peers (federation records, applied). */
    public dev.synapsehub.core.governance.NamespaceGovernance governance() {
        return governance;
    }

    /** Participant memory: admitted findings per name (contract A12 PM5). */
    public dev.synapsehub.core.memory.FindingQuota findings() {
        return findings;
    }

    /** Private channels and their histories. */
    public ChannelRegistry channels() {
        return channels;
    }

    /** Persistent capability cards. */
    public CardRegistry cards() {
        return cards;
    }

    /** Identity pins (contract A2). */
    public IdentityPinRegistry pins() {
        return pins;
    }

    /** The resource offers. */
    public ResourceRegistry resources() {
        return resources;
    }

    /** The shared task board. */
    public BoardRegistry board() {
        return board;
    }
}
