package dev.synapsehub.mesh;

import java.util.Locale;

/** The explicit reconciliation outcomes of seed 001 §10, one per replayed queued intent. */
public enum ReplayOutcome {
    /** Replayed and committed. */
    APPLIED,
    /** An idempotent duplicate: the same request had already committed. */
    NOOP_ALREADY_APPLIED,
    /** A newer committed revision already exists: the intent no longer applies to anything. */
    SUPERSEDED,
    /** A semantic conflict with a committed change of someone else: the agent (or a person) must resolve it. */
    CONFLICT_REQUIRES_MERGE,
    /** The intent's fence is stale: it names a claim epoch (or lease) that has since moved on. */
    REJECTED_FENCED;

    /** As the contract spells it, e.g. {@code noop_already_applied}. */
    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@link #wire()}. */
    public static ReplayOutcome fromWire(String s) {
        return valueOf(s.toUpperCase(Locale.ROOT));
    }
}
