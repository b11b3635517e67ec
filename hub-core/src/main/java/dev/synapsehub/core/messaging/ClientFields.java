package dev.synapsehub.core.messaging;

import dev.synapsehub.core.PythonWhitespace;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;

/** Coercion of the advisory client members of a chat (INV-CK-1, INV-DG-1), as pure functions. */
public final class ClientFields {
    /** Longest kept {@code client_msg_id}, in UTF-8 bytes. */
    public static final int MAX_CLIENT_MSG_ID_BYTES = 256;

    private ClientFields() {
    }

    /**
     * The advisory {@code client_timestamp} from the client's {@code timestamp}: kept only if it
     * is a finite, non-zero number; anything else (null, zero, NaN, ±∞, a value too large for a
     * double) is discarded as null. The edge passes null for non-numbers (strings, booleans, …).
     */
    public static Double clientTimestamp(Number raw) {
        if (raw == null) {
            return null;
        }
        double v;
        if (raw instanceof BigInteger b) {
            v = b.doubleValue();
        } else if (raw instanceof BigDecimal d) {
            v = d.doubleValue();
        } else {
            v = raw.doubleValue();
        }
        return Double.isFinite(v) && v != 0.0 ? v : null;
    }

    /**
     * The kept {@code client_msg_id}: trimmed, 1–256 UTF-8 bytes, no character below U+0020 and
     * no U+007F; otherwise null (silently removed, the chat still delivered).
     */
    public static String clientMsgId(String raw) {
        if (raw == null) {
            return null;
        }
        String s = PythonWhitespace.strip(raw);
        if (s.isEmpty() || s.getBytes(StandardCharsets.UTF_8).length > MAX_CLIENT_MSG_ID_BYTES) {
            return null;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7F) {
                return null;
            }
        }
        return s;
    }
}
