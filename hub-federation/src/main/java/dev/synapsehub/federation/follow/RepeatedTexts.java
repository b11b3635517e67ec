package dev.synapsehub.federation.follow;

import java.nio.charset.StandardCharsets;

/**
 * The last text seen per slot of a small table, so that an ASCII text a peer's pages repeat (a task
 * id, an owner) is read as the same {@code String} page after page: a fold keys its map by task, and
 * a repeated {@code String} has its hash kept and compares equal by identity, where a fresh one per
 * event is hashed and compared byte by byte on the watch thread (in a catch-up, every task recurs
 * once per page).
 *
 * <p>One table per follower. Pages may be read on different event-loop threads over a follower's
 * life, so nothing here relies on one thread: a slot holds a reference to an immutable
 * {@code String}, written and read whole, and a text found in a slot is used only when its
 * characters are the bytes asked for; a lost or stale slot only makes a new {@code String}.
 */
final class RepeatedTexts {
    private final String[] slots;
    private final int mask;

    /** A table of {@code slots} entries, a power of two. */
    RepeatedTexts(int slots) {
        if (slots <= 0 || Integer.bitCount(slots) != 1) {
            throw new IllegalArgumentException("slots must be a power of two: " + slots);
        }
        this.slots = new String[slots];
        this.mask = slots - 1;
    }

    /** Room for the benchmark's 10,000 tasks and their owners with few collisions. */
    static RepeatedTexts forFollower() {
        return new RepeatedTexts(1 << 14);
    }

    /** The text of {@code b[from, to)}, all bytes below 0x80 (the caller checked), as ISO-8859-1 decodes it. */
    String ascii(byte[] b, int from, int to) {
        int h = 0;
        for (int k = from; k < to; k++) {
            h = 31 * h + b[k]; // String.hashCode of these Latin-1 characters
        }
        int slot = (h ^ (h >>> 16)) & mask;
        String seen = slots[slot];
        if (seen != null && seen.hashCode() == h && same(seen, b, from, to)) {
            return seen;
        }
        String made = new String(b, from, to - from, StandardCharsets.ISO_8859_1);
        slots[slot] = made;
        return made;
    }

    private static boolean same(String s, byte[] b, int from, int to) {
        if (s.length() != to - from) {
            return false;
        }
        for (int k = 0; k < s.length(); k++) {
            if (s.charAt(k) != b[from + k]) {
                return false;
            }
        }
        return true;
    }
}
