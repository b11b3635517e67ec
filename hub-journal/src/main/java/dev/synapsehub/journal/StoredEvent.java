package dev.synapsehub.journal;

import java.nio.charset.StandardCharsets;

/**
 * One journal row as stored (contract §12.2): its seq, time, kind and compact JSON payload,
 * undecoded. The payload is kept as the UTF-8 bytes SQLite holds ({@code null} for a NULL
 * column), so serving a peer's log copies them to the frame without a {@code String} per row;
 * the array is not copied and must not be changed.
 */
public record StoredEvent(long seq, double ts, String kind, byte[] payloadUtf8) {
    /** The payload as text (ill-formed UTF-8 replaced by U+FFFD, as a text column read would), or null. */
    public String payload() {
        return payloadUtf8 == null ? null : new String(payloadUtf8, StandardCharsets.UTF_8);
    }
}
