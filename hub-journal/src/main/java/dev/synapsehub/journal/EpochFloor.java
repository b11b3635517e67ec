package dev.synapsehub.journal;

import java.nio.charset.StandardCharsets;

/**
 * The epoch a damaged claim-family row still shows: a replay skips a row that does not decode,
 * but the epoch it stamped was issued, so the state's epoch counter must not fall below it
 * (INV-EF-1: epochs are never reused). Only the {@code "epoch"} member's digits are read, by one
 * forward pass over the raw bytes; nothing else of the row is trusted.
 */
final class EpochFloor {
    /** Past this many digits a value is not an epoch this hub can issue after (a long has 19). */
    private static final int MAX_DIGITS = 18;
    private static final byte[] MEMBER = "\"epoch\"".getBytes(StandardCharsets.US_ASCII);

    private EpochFloor() {
    }

    /** True for the kinds whose payload is a claim record, which carries an epoch. */
    static boolean carriesEpoch(String kind) {
        return EventCodec.isClaimSnapshotKind(kind);
    }

    /**
     * The highest epoch an {@code "epoch"} member of {@code payload} shows as plain digits (an
     * unsigned integer, ended by a JSON delimiter or by the end of a truncated payload); 0 when
     * none can be read. The highest, not the first: a higher floor only skips numbers, a lower
     * one could hand out an epoch twice. Inside a JSON string a quote is escaped, so text in a
     * string value cannot pose as the member.
     */
    static long read(byte[] payload) {
        if (payload == null) {
            return 0;
        }
        long highest = 0;
        int i = indexOf(payload, 0);
        while (i >= 0) {
            int p = skipSpace(payload, i + MEMBER.length);
            if (p < payload.length && payload[p] == ':') {
                highest = Math.max(highest, digits(payload, skipSpace(payload, p + 1)));
            }
            i = indexOf(payload, i + MEMBER.length);
        }
        return highest;
    }

    /** As {@link #read(byte[])}, for a payload SQLite holds as text. */
    static long read(String payload) {
        return payload == null ? 0 : read(payload.getBytes(StandardCharsets.UTF_8));
    }

    /** The unsigned integer at {@code from}, or 0 when there is none or it is not a plain integer. */
    private static long digits(byte[] b, int from) {
        long value = 0;
        int p = from;
        while (p < b.length && b[p] >= '0' && b[p] <= '9') {
            if (p - from == MAX_DIGITS) {
                return 0;
            }
            value = value * 10 + (b[p] - '0');
            p++;
        }
        if (p == from) {
            return 0;
        }
        // "2.5", "1e30": not an epoch; reading the digits before them could give a lower floor than meant
        if (p < b.length && (b[p] == '.' || b[p] == 'e' || b[p] == 'E')) {
            return 0;
        }
        return value;
    }

    private static int skipSpace(byte[] b, int from) {
        int p = from;
        while (p < b.length && (b[p] == ' ' || b[p] == '\t' || b[p] == '\n' || b[p] == '\r')) {
            p++;
        }
        return p;
    }

    /** The next start of {@code "epoch"} at or after {@code from}, -1 when none. */
    private static int indexOf(byte[] b, int from) {
        outer:
        for (int i = from; i <= b.length - MEMBER.length; i++) {
            for (int k = 0; k < MEMBER.length; k++) {
                if (b[i + k] != MEMBER[k]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
