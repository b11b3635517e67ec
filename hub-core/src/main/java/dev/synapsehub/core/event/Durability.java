package dev.synapsehub.core.event;

/** How hard an event must be committed (INV-JA-4). */
public enum Durability {
    /** Survives an OS crash: SQLite {@code synchronous=FULL}. Claim family and audit. */
    FULL,
    /** Survives an application crash: {@code synchronous=NORMAL}. Chat and progress. */
    NORMAL
}
