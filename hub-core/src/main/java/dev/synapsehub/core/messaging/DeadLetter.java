package dev.synapsehub.core.messaging;

/**
 * A dead-letter ledger entry (INV-DG-3; {@code state_snapshot.dead_letters}).
 *
 * @param lastTs hub time of the latest undelivered message (INV-CK-1)
 */
public record DeadLetter(String target, long count, double lastTs, String lastSender) {
}
