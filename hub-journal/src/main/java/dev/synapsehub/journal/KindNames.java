package dev.synapsehub.journal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The {@code kind} column's text from the bytes SQLite holds, one {@code String} per distinct
 * kind. A journal has a handful of kinds, and reading the column with {@code getString} cost a
 * fifth of a stored row's read: sqlite-jdbc wraps the text in a direct buffer and decodes it per
 * row (docs/benchmarks.md, "Cold catch-up, sixth pass"). The bytes are compared whole, so an
 * unusual kind (ill-formed UTF-8, a NUL inside) reads as {@code getString} would: decoded by
 * {@code new String(bytes, UTF_8)}, as sqlite-jdbc does. Not thread-safe: one per reading thread.
 */
final class KindNames {
    private static final int SLOTS = 16; // past this many distinct kinds, the oldest is replaced

    private final byte[][] bytes = new byte[SLOTS][];
    private final String[] names = new String[SLOTS];
    private int next;

    /** The text of {@code utf8} ({@code getBytes} of the column), null for a NULL column. */
    String of(byte[] utf8) {
        if (utf8 == null) {
            return null;
        }
        for (int i = 0; i < SLOTS && bytes[i] != null; i++) {
            if (Arrays.equals(bytes[i], utf8)) {
                return names[i];
            }
        }
        String name = new String(utf8, StandardCharsets.UTF_8);
        bytes[next] = utf8;
        names[next] = name;
        next = (next + 1) % SLOTS;
        return name;
    }
}
