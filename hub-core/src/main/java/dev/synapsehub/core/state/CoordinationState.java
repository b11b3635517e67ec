package dev.synapsehub.core.state;

import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.IdempotencyRecordedEvent;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;

import java.util.function.LongConsumer;

/**
 * Everything the hub is authoritative for, behind one {@link #apply} path used live and on
 * replay (INV-RR-1 by construction). Owned by one thread: the actor's.
 */
public final class CoordinationState {
    /** Default number of idempotency keys retained. */
    public static final int DEFAULT_IDEMPOTENCY_CAPACITY = 100_000;

    private final ClaimRegistry claims;
    private final IdempotencyLedger idempotency;

    /** A state with the given claim bounds and idempotency retention. */
    public CoordinationState(RegistryLimits limits, int idempotencyCapacity) {
        this.claims = new ClaimRegistry(limits);
        this.idempotency = new IdempotencyLedger(idempotencyCapacity);
    }

    /** A state with the spec defaults. */
    public CoordinationState() {
        this(RegistryLimits.DEFAULTS, DEFAULT_IDEMPOTENCY_CAPACITY);
    }

    /** Decides a command against the current state; see {@link ClaimRegistry#decide}. */
    public Decision decide(Command command, double now) {
        return claims.decide(command, now);
    }

    /** The one path by which state changes. */
    public void apply(CoordinationEvent event) {
        claims.apply(event);
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
            apply(journaled.event());
            if (++count[0] % 10_000 == 0) {
                progress.accept(count[0]);
            }
        });
        claims.advanceTo(now);
        return count[0];
    }

    /** Starts recording undo steps (a batch about to be journaled). */
    public void beginBatch() {
        claims.beginBatch();
        idempotency.beginBatch();
    }

    /** The batch committed: keep its effects. */
    public void commitBatch() {
        claims.commitBatch();
        idempotency.commitBatch();
    }

    /** The batch failed to commit: undo its effects (INV-JA-2). */
    public void rollbackBatch() {
        claims.rollbackBatch();
        idempotency.rollbackBatch();
    }

    /** The claim registry. */
    public ClaimRegistry claims() {
        return claims;
    }

    /** The idempotency ledger. */
    public IdempotencyLedger idempotency() {
        return idempotency;
    }
}
