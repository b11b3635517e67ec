package dev.synapsehub.mesh;

import java.util.Locale;

/** The lifecycle state of a replicated record (seed 001 §6). */
public enum EnvelopeState {
    INTENT, COMMITTED, REJECTED, QUEUED, RECONCILED;

    /** Lower-case, as the contract spells it. */
    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@link #wire()}. */
    public static EnvelopeState fromWire(String s) {
        return valueOf(s.toUpperCase(Locale.ROOT));
    }
}
