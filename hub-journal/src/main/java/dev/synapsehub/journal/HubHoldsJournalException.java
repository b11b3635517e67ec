package dev.synapsehub.journal;

/**
 * A running hub holds the journal's writer lock, so it is not copied offline: that hub has to
 * take the backup through its control socket, or be stopped first. Nothing was written.
 */
public final class HubHoldsJournalException extends JournalRefusedException {
    public HubHoldsJournalException(String message) {
        super(message);
    }
}
