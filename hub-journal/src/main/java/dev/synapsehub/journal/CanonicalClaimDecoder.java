package dev.synapsehub.journal;

import com.fasterxml.jackson.core.io.NumberInput;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.GitContext;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Replay's byte-level reader of the claim-family payloads exactly as {@link EventCodec} writes
 * them: the claim object's members in their written order, compact, ASCII only (the encoder
 * escapes everything else), no {@code path_identity}. It answers null for any payload not in
 * that shape or that fails a check, and the caller then decodes it with {@link PayloadReader},
 * which gives the authoritative event or corrupt-row message.
 *
 * <p>Why: a Jackson parser per row (its set-up, its symbol table, a value object per member) was
 * the largest part of a replay's CPU (docs/benchmarks.md, "Replay: the row decode"). Whatever it
 * accepts, {@link PayloadReader} reads to the same event: the members and their order are fixed,
 * strings are checked byte by byte (no raw control or non-ASCII byte, only JSON's escapes),
 * integers are at most 18 digits, and floats go through the same exact parser Jackson uses. The
 * checks of {@code EventCodec.readClaim} (ids not blank, epoch at least 1, version not negative,
 * a known status, finite numbers) are made here too, refusing rather than explaining.
 */
final class CanonicalClaimDecoder {
    /** Longer payloads go to Jackson, whose read constraints (string and number lengths) then apply. */
    static final int MAX_LENGTH = 64 * 1024;
    /** Longest float token read here; Jackson's limit is far above, so nothing it refuses passes. */
    private static final int MAX_FLOAT = 64;

    private static final byte[] TASK_ID = ascii("{\"task_id\":");
    private static final byte[] OWNER = ascii(",\"owner\":");
    private static final byte[] NOTE = ascii(",\"note\":");
    private static final byte[] CLAIMED_AT = ascii(",\"claimed_at\":");
    private static final byte[] LEASE_EXPIRES_AT = ascii(",\"lease_expires_at\":");
    private static final byte[] STATUS = ascii(",\"status\":");
    private static final byte[] DATA_REF = ascii(",\"data_ref\":");
    private static final byte[] WORKTREE = ascii(",\"worktree\":");
    private static final byte[] PATHS = ascii(",\"paths\":[");
    private static final byte[] EPOCH = ascii(",\"epoch\":");
    private static final byte[] VERSION = ascii(",\"version\":");
    private static final byte[] CHECKPOINT = ascii(",\"checkpoint\":");
    private static final byte[] GIT = ascii(",\"git\":");
    private static final byte[] BRANCH = ascii("{\"branch\":");
    private static final byte[] BASE = ascii(",\"base\":");
    private static final byte[] AUTO_RELEASE_ON = ascii(",\"auto_release_on\":");
    private static final byte[] QUOTA_PRINCIPAL = ascii(",\"quota_principal\":");
    private static final byte[] NULL = ascii("null");

    private final byte[] b;
    private int i;
    /** Scratch for escaped strings and float tokens. */
    private char[] chars;

    private CanonicalClaimDecoder(byte[] utf8) {
        this.b = utf8;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** The claim of a snapshot payload ({@code claim}, {@code task_update}, ...), or null: decode it the long way. */
    static Claim claim(byte[] utf8) {
        if (utf8 == null || utf8.length > MAX_LENGTH) {
            return null;
        }
        return new CanonicalClaimDecoder(utf8).readClaim();
    }

    /** The task id of a {@code release} payload ({@code {"task_id":...}}), or null: decode it the long way. */
    static String releasedTaskId(byte[] utf8) {
        if (utf8 == null || utf8.length > MAX_LENGTH) {
            return null;
        }
        CanonicalClaimDecoder d = new CanonicalClaimDecoder(utf8);
        if (!d.expect(TASK_ID)) {
            return null;
        }
        String taskId = d.string();
        return taskId != null && !taskId.isBlank() && d.endsWithObject() ? taskId : null;
    }

    private Claim readClaim() {
        if (!expect(TASK_ID)) {
            return null;
        }
        String taskId = string();
        if (taskId == null || taskId.isBlank() || !expect(OWNER)) {
            return null;
        }
        String owner = string();
        if (owner == null || owner.isBlank() || !expect(NOTE)) {
            return null;
        }
        String note = string();
        if (note == null || !expect(CLAIMED_AT)) {
            return null;
        }
        double claimedAt = number();
        if (Double.isNaN(claimedAt) || !expect(LEASE_EXPIRES_AT)) {
            return null;
        }
        double leaseExpiresAt = number();
        if (Double.isNaN(leaseExpiresAt) || !expect(STATUS)) {
            return null;
        }
        String statusText = string();
        Optional<ClaimStatus> status = statusText == null ? Optional.empty() : ClaimStatus.fromWire(statusText);
        if (status.isEmpty() || !expect(DATA_REF)) {
            return null;
        }
        String dataRef = string();
        if (dataRef == null || !expect(WORKTREE)) {
            return null;
        }
        String worktree = string();
        if (worktree == null || !expect(PATHS)) {
            return null;
        }
        List<String> paths = paths();
        if (paths == null || !expect(EPOCH)) {
            return null;
        }
        long epoch = integer();
        if (epoch < 1 || !expect(VERSION)) {
            return null;
        }
        long version = integer();
        if (version < 0 || !expect(CHECKPOINT)) {
            return null;
        }
        String checkpoint = string();
        if (checkpoint == null || !expect(GIT)) {
            return null;
        }
        GitContext git = null;
        if (!expect(NULL)) {
            if (!expect(BRANCH)) {
                return null;
            }
            String[] gitFields = new String[3];
            if (!nullableString(gitFields, 0) || !expect(BASE) || !nullableString(gitFields, 1)
                    || !expect(AUTO_RELEASE_ON) || !nullableString(gitFields, 2) || !expectByte('}')) {
                return null;
            }
            git = new GitContext(gitFields[0], gitFields[1], gitFields[2]);
        }
        if (!expect(QUOTA_PRINCIPAL)) {
            return null;
        }
        String principal = string();
        if (principal == null || !endsWithObject()) {
            return null;
        }
        return new Claim(taskId, owner, principal, note, claimedAt, leaseExpiresAt, status.get(), dataRef, worktree,
                paths, epoch, version, checkpoint, git, null);
    }

    private boolean endsWithObject() {
        return expectByte('}') && i == b.length;
    }

    private boolean expect(byte[] token) {
        if (b.length - i < token.length) {
            return false;
        }
        for (int k = 0; k < token.length; k++) {
            if (b[i + k] != token[k]) {
                return false;
            }
        }
        i += token.length;
        return true;
    }

    private boolean expectByte(char c) {
        if (i < b.length && b[i] == c) {
            i++;
            return true;
        }
        return false;
    }

    /**
     * A string array's items after its '[' up to and including ']'; null when not strings only.
     * Immutable, so the {@link Claim} constructor's {@code List.copyOf} keeps it as it is.
     */
    private List<String> paths() {
        if (expectByte(']')) {
            return List.of();
        }
        String[] items = new String[4];
        int n = 0;
        while (true) {
            String s = string();
            if (s == null) {
                return null;
            }
            if (n == items.length) {
                items = Arrays.copyOf(items, n * 2);
            }
            items[n++] = s;
            if (expectByte(']')) {
                return switch (n) {
                    case 1 -> List.of(items[0]);
                    case 2 -> List.of(items[0], items[1]);
                    default -> List.of(Arrays.copyOf(items, n));
                };
            }
            if (!expectByte(',')) {
                return null;
            }
        }
    }

    /** A string or null into {@code into[k]}; false when it is neither. */
    private boolean nullableString(String[] into, int k) {
        if (expect(NULL)) {
            into[k] = null;
            return true;
        }
        into[k] = string();
        return into[k] != null;
    }

    /**
     * A JSON string at the cursor, or null when there is none or it holds a raw control or
     * non-ASCII byte (JSON forbids the first; the second needs UTF-8 checks left to Jackson).
     */
    private String string() {
        if (!expectByte('"')) {
            return null;
        }
        int start = i;
        for (int k = start; k < b.length; k++) {
            int c = b[k];
            if (c == '"') {
                i = k + 1;
                // ASCII: one byte, one char; empty members (note, data_ref, checkpoint) are common
                return k == start ? "" : new String(b, start, k - start, StandardCharsets.ISO_8859_1);
            }
            if (c == '\\') {
                return escapedString(start);
            }
            if (c < 0x20) { // a control character, or (as a signed byte) not ASCII
                return null;
            }
        }
        return null;
    }

    /** The rest of a string with escapes, from its first character at {@code start}. */
    private String escapedString(int start) {
        char[] out = chars(b.length - start);
        int n = 0;
        int k = start;
        while (k < b.length) {
            int c = b[k++];
            if (c == '"') {
                i = k;
                return new String(out, 0, n);
            }
            if (c < 0x20) {
                return null;
            }
            if (c != '\\') {
                out[n++] = (char) c;
                continue;
            }
            if (k >= b.length) {
                return null;
            }
            switch (b[k++]) {
                case '"' -> out[n++] = '"';
                case '\\' -> out[n++] = '\\';
                case '/' -> out[n++] = '/';
                case 'b' -> out[n++] = '\b';
                case 'f' -> out[n++] = '\f';
                case 'n' -> out[n++] = '\n';
                case 'r' -> out[n++] = '\r';
                case 't' -> out[n++] = '\t';
                case 'u' -> {
                    if (b.length - k < 4) {
                        return null;
                    }
                    int v = 0;
                    for (int d = 0; d < 4; d++) {
                        int h = hex(b[k++]);
                        if (h < 0) {
                            return null;
                        }
                        v = (v << 4) | h;
                    }
                    out[n++] = (char) v; // a lone surrogate too, as Jackson reads it
                }
                default -> {
                    return null;
                }
            }
        }
        return null;
    }

    private static int hex(byte c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    private char[] chars(int atLeast) {
        if (chars == null || chars.length < atLeast) {
            chars = new char[Math.max(atLeast, 64)];
        }
        return chars;
    }

    /** A JSON integer of at most 18 digits, else {@link Long#MIN_VALUE} (callers refuse it as below their minimum). */
    private long integer() {
        boolean negative = expectByte('-');
        int start = i;
        long v = 0;
        while (i < b.length && b[i] >= '0' && b[i] <= '9') {
            v = v * 10 + (b[i] - '0');
            i++;
            if (i - start > 18) {
                return Long.MIN_VALUE;
            }
        }
        int digits = i - start;
        if (digits == 0 || (digits > 1 && b[start] == '0') || (i < b.length && isFloatPart(b[i]))) {
            return Long.MIN_VALUE; // no digits, a leading zero, or a float (left to Jackson)
        }
        return negative ? -v : v;
    }

    private static boolean isFloatPart(byte c) {
        return c == '.' || c == 'e' || c == 'E';
    }

    /**
     * A JSON number as a finite double, else NaN: an integer of at most 18 digits converted as
     * Jackson's {@code Number.doubleValue()} does, a float with the exact parser Jackson uses.
     */
    private double number() {
        int start = i;
        expectByte('-');
        int intStart = i;
        while (i < b.length && b[i] >= '0' && b[i] <= '9') {
            i++;
        }
        int intDigits = i - intStart;
        if (intDigits == 0 || (intDigits > 1 && b[intStart] == '0')) {
            return Double.NaN;
        }
        boolean isFloat = false;
        if (expectByte('.')) {
            isFloat = true;
            if (!digits()) {
                return Double.NaN;
            }
        }
        if (i < b.length && (b[i] == 'e' || b[i] == 'E')) {
            isFloat = true;
            i++;
            if (i < b.length && (b[i] == '+' || b[i] == '-')) {
                i++;
            }
            if (!digits()) {
                return Double.NaN;
            }
        }
        int length = i - start;
        if (!isFloat) {
            if (intDigits > 18) {
                return Double.NaN;
            }
            long v = 0;
            for (int k = intStart; k < i; k++) {
                v = v * 10 + (b[k] - '0');
            }
            return (double) (b[start] == '-' ? -v : v);
        }
        if (length > MAX_FLOAT) {
            return Double.NaN;
        }
        char[] text = chars(length);
        for (int k = 0; k < length; k++) {
            text[k] = (char) b[start + k];
        }
        double d = NumberInput.parseDouble(text, 0, length, true);
        return Double.isFinite(d) ? d : Double.NaN;
    }

    private boolean digits() {
        int start = i;
        while (i < b.length && b[i] >= '0' && b[i] <= '9') {
            i++;
        }
        return i > start;
    }
}
