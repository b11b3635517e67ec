package dev.synapsehub.journal;

/** A stored state snapshot that cannot be used: incomplete, failing its checksum, or undecodable. */
public final class CorruptSnapshotException extends Exception {
    public CorruptSnapshotException(String message) {
        super(message);
    }

    public CorruptSnapshotException(String message, Throwable cause) {
        super(message, cause);
    }
}
