package dev.synapsehub.journal;

/** One journal row as stored (contract §12.2): its seq, time, kind and compact JSON payload, undecoded. */
public record StoredEvent(long seq, double ts, String kind, String payload) {
}
