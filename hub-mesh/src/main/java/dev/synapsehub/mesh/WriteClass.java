package dev.synapsehub.mesh;

import dev.synapsehub.core.event.CoordinationEvent;

import java.util.Collection;
import java.util.Locale;

/**
 * The write classes of seed 001 §5, and which class each event kind belongs to (§4): claim
 * changes, board tasks, resource offers, private channel membership and identity pins are
 * {@link #STRONG}; chat (channel chat included), progress notes, audit (a pin reclaim's records)
 * and mailbox bookkeeping are {@link #APPEND_ONLY}; presence is {@link #LOCAL} and never replicated.
 */
public enum WriteClass {
    /** Coordinator fence plus quorum commit before anyone sees it. */
    STRONG,
    /** Immutable events, deduplicated by record id, origin order kept. */
    APPEND_ONLY,
    /** Accepted locally while the quorum is away, replayed later (not produced yet). */
    QUEUED,
    /** Never replicated: presence, heartbeats, connection state. */
    LOCAL;

    /** The contract's spelling: {@code strong}, {@code append-only}, {@code queued}, {@code local}. */
    public String wire() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** Parses {@link #wire()}. */
    public static WriteClass fromWire(String s) {
        for (WriteClass c : values()) {
            if (c.wire().equals(s)) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown write class '" + s + "'");
    }

    /** The class of one event. */
    public static WriteClass of(CoordinationEvent event) {
        return switch (event.kind()) {
            case "claim", "task_update", "checkpoint", "handoff", "release", "idempotency", "ledger_task", "resource",
                    // who may read a private channel, and which key a name is bound to: decided once, by the leader
                    "channel", "identity_pin" -> STRONG;
            default -> APPEND_ONLY; // chat, ledger_progress, claim_denial and identity_pin_reclaim (audit), receipts,
                                    // watermarks, dead letters
        };
    }

    /** The class of a batch: strong when any of its events is. */
    public static WriteClass of(Collection<? extends CoordinationEvent> events) {
        for (CoordinationEvent e : events) {
            if (of(e) == STRONG) {
                return STRONG;
            }
        }
        return APPEND_ONLY;
    }
}
