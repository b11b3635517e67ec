package dev.synapsehub.core.event;

import dev.synapsehub.core.board.ProgressNote;

/** A progress note was posted; apply appends it and re-applies the retention caps (INV-RR-2). */
public record LedgerProgressEvent(double ts, ProgressNote note) implements CoordinationEvent {
    @Override
    public String kind() {
        return "ledger_progress";
    }

    @Override
    public Durability durability() {
        return Durability.NORMAL;
    }
}
