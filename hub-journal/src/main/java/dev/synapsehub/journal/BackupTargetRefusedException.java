package dev.synapsehub.journal;

/**
 * A backup target that is not a new file in an existing directory (it exists, is the journal
 * itself, or its directory does not): a matter of the command line; nothing was written.
 */
public final class BackupTargetRefusedException extends JournalRefusedException {
    public BackupTargetRefusedException(String message) {
        super(message);
    }
}
