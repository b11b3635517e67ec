package dev.synapsehub.journal;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.GitContext;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.scope.PathIdentity;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The parser-free claim reader of replay ({@link CanonicalClaimDecoder}) against the text path
 * ({@link PayloadReader}), which stays the authority: on everything the encoder writes, on
 * mutated and hostile payloads (bad UTF-8, nulls, wrong types, escapes, numbers at the edges),
 * whatever the fast reader accepts must decode to the same event through the text path, and
 * what it refuses must be left to that path.
 */
class CanonicalClaimDecoderTest {
    private final EventCodec codec = new EventCodec();

    /** Outcome of the text path: the event, or "corrupt". */
    private Object textPath(String kind, double ts, byte[] utf8) {
        try {
            Optional<CoordinationEvent> e = codec.decode(kind, ts, new String(utf8, StandardCharsets.UTF_8));
            return e.isPresent() ? e.get() : "unknown";
        } catch (EventCodec.CorruptPayloadException e) {
            return "corrupt";
        }
    }

    /** Outcome of the byte path replay uses (fast reader first). */
    private Object bytePath(String kind, double ts, byte[] utf8) {
        try {
            Optional<CoordinationEvent> e = codec.decode(kind, ts, utf8);
            return e.isPresent() ? e.get() : "unknown";
        } catch (EventCodec.CorruptPayloadException e) {
            return "corrupt";
        }
    }

    private static final String[] PIECES = {"a", "Z", "0", " ", "\t", "\n", "\u0000", "\u001f", "\u007f", "\"", "\\",
        "/", "\u00e9", "\u4e2d", "\uD83D\uDE00", "\uD800", "\uDFFF", "\u2028", "\u00a0", "{", "}", "[", "]", ":", ",",
        "null", "\\u0041", "\u3000"};

    private static String text(Random r, int maxPieces) {
        if (r.nextInt(10) == 0) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        int n = 1 + r.nextInt(maxPieces);
        for (int k = 0; k < n; k++) {
            sb.append(r.nextInt(3) == 0 ? PIECES[r.nextInt(PIECES.length)] : "x" + r.nextInt(1000));
        }
        return sb.toString();
    }

    private static double number(Random r) {
        return switch (r.nextInt(9)) {
            case 0 -> 0.0;
            case 1 -> -0.0;
            case 2 -> r.nextInt(2_000_000_000);
            case 3 -> 1.7e9 + r.nextDouble() * 1e8;
            case 4 -> Math.round(r.nextDouble() * 1e6) / 1000.0;
            case 5 -> -r.nextDouble() * 1e12;
            case 6 -> Double.longBitsToDouble(r.nextLong() & 0x7fefffffffffffffL); // any finite positive
            case 7 -> r.nextBoolean() ? Double.MIN_VALUE : Double.MAX_VALUE;
            default -> 9.0e15 + r.nextInt(1000);
        };
    }

    private static long integer(Random r) {
        return switch (r.nextInt(12)) {
            case 0 -> 0;
            case 1 -> 1;
            case 2 -> -1 - r.nextInt(5);
            case 3 -> Long.MAX_VALUE - r.nextInt(3);
            case 4 -> 999_999_999_999_999_999L + r.nextInt(2);
            default -> 1 + r.nextInt(1_000_000);
        };
    }

    private static Claim claim(Random r) {
        List<String> paths = new ArrayList<>();
        for (int k = r.nextInt(4); k > 0; k--) {
            paths.add(text(r, 3));
        }
        GitContext git = r.nextBoolean() ? null : new GitContext(r.nextBoolean() ? null : text(r, 2),
                r.nextBoolean() ? null : text(r, 2), r.nextBoolean() ? null : text(r, 2));
        String owner = r.nextInt(20) == 0 ? " " : "agent-" + text(r, 2);
        ClaimStatus[] statuses = ClaimStatus.values();
        return new Claim(r.nextInt(20) == 0 ? "\u3000" : "task-" + text(r, 3), owner,
                r.nextBoolean() ? owner : text(r, 2), text(r, 5), number(r), number(r),
                statuses[r.nextInt(statuses.length)], text(r, 2), text(r, 2), paths, integer(r), integer(r),
                text(r, 4), git);
    }

    private static final String[] SNAPSHOT_KINDS = {"claim", "task_update", "checkpoint", "handoff"};

    @Test
    void everyEncodedClaimDecodesAsTheTextPathDoes() {
        Random r = new Random(20261202L);
        int fast = 0;
        for (int n = 0; n < 5_000; n++) {
            String kind = SNAPSHOT_KINDS[r.nextInt(SNAPSHOT_KINDS.length)];
            ClaimSnapshotEvent event = new ClaimSnapshotEvent(1.5, ClaimSnapshotEvent.Kind.valueOf(kind.toUpperCase()),
                    claim(r));
            byte[] payload = codec.encode(event).getBytes(StandardCharsets.UTF_8);
            Object expected = textPath(kind, event.ts(), payload);
            Claim read = CanonicalClaimDecoder.claim(payload);
            if (read != null) {
                fast++;
                assertThat(expected).as(new String(payload, StandardCharsets.UTF_8))
                        .isEqualTo(new ClaimSnapshotEvent(event.ts(), event.change(), read));
            }
            assertThat(bytePath(kind, event.ts(), payload)).isEqualTo(expected);
            if (!"corrupt".equals(expected)) {
                assertThat(expected).isEqualTo(event);
            }
        }
        assertThat(fast).as("most generated claims are valid and take the fast path").isGreaterThan(2_000);
    }

    private static final byte[] INTERESTING = "\"\\,{}[]:09-.eEn +u/".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HOSTILE = {0x00, 0x1f, 0x7f, (byte) 0x80, (byte) 0xbf, (byte) 0xc0, (byte) 0xc3,
        (byte) 0xe2, (byte) 0xed, (byte) 0xf0, (byte) 0xf5, (byte) 0xff};

    private static byte[] mutate(Random r, byte[] in) {
        byte[] b = in.clone();
        int pos = r.nextInt(b.length);
        byte value = r.nextInt(3) == 0 ? HOSTILE[r.nextInt(HOSTILE.length)] : INTERESTING[r.nextInt(INTERESTING.length)];
        switch (r.nextInt(5)) {
            case 0 -> b[pos] = value;
            case 1 -> { // delete one byte
                byte[] out = new byte[b.length - 1];
                System.arraycopy(b, 0, out, 0, pos);
                System.arraycopy(b, pos + 1, out, pos, b.length - pos - 1);
                b = out;
            }
            case 2 -> { // insert one byte
                byte[] out = new byte[b.length + 1];
                System.arraycopy(b, 0, out, 0, pos);
                out[pos] = value;
                System.arraycopy(b, pos, out, pos + 1, b.length - pos);
                b = out;
            }
            case 3 -> b = java.util.Arrays.copyOf(b, pos); // truncated
            default -> { // a digit changed, the likeliest to stay well-formed
                for (int k = pos; k < b.length; k++) {
                    if (b[k] >= '0' && b[k] <= '9') {
                        b[k] = (byte) ('0' + r.nextInt(10));
                        break;
                    }
                }
            }
        }
        return b;
    }

    @Test
    void mutatedPayloadsAreReadAsTheTextPathReadsThem() {
        Random r = new Random(7L);
        int accepted = 0;
        for (int n = 0; n < 4_000; n++) {
            boolean release = r.nextInt(4) == 0;
            String kind = release ? "release" : SNAPSHOT_KINDS[r.nextInt(SNAPSHOT_KINDS.length)];
            Claim c = claim(r);
            CoordinationEvent event = release ? new ClaimReleasedEvent(2.0, c.taskId())
                    : new ClaimSnapshotEvent(2.0, ClaimSnapshotEvent.Kind.valueOf(kind.toUpperCase()), c);
            byte[] payload = codec.encode(event).getBytes(StandardCharsets.UTF_8);
            for (int m = 1 + r.nextInt(3); m > 0 && payload.length > 1; m--) {
                payload = mutate(r, payload);
            }
            Object expected = textPath(kind, 2.0, payload);
            String shown = new String(payload, StandardCharsets.ISO_8859_1);
            if (release) {
                String id = CanonicalClaimDecoder.releasedTaskId(payload);
                if (id != null) {
                    accepted++;
                    assertThat(expected).as(shown).isEqualTo(new ClaimReleasedEvent(2.0, id));
                }
            } else {
                Claim read = CanonicalClaimDecoder.claim(payload);
                if (read != null) {
                    accepted++;
                    assertThat(expected).as(shown).isEqualTo(
                            new ClaimSnapshotEvent(2.0, ClaimSnapshotEvent.Kind.valueOf(kind.toUpperCase()), read));
                }
            }
            assertThat(bytePath(kind, 2.0, payload)).as(shown).isEqualTo(expected);
        }
        assertThat(accepted).as("some mutants stay valid (a changed digit)").isGreaterThan(100);
    }

    private static final String CANONICAL = "{\"task_id\":\"t1\",\"owner\":\"alice\",\"note\":\"n\",\"claimed_at\":1000.5,"
            + "\"lease_expires_at\":99999,\"status\":\"working\",\"data_ref\":\"\",\"worktree\":\"wt\",\"paths\":[\"a\",\"b\"],"
            + "\"epoch\":77,\"version\":9,\"checkpoint\":\"c\",\"git\":null,\"quota_principal\":\"alice\"}";

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String with(String member, String value) {
        return CANONICAL.replaceFirst("\"" + member + "\":(\"[^\"]*\"|\\[[^\\]]*\\]|[^,}]+)", java.util.regex.Matcher.quoteReplacement("\"" + member + "\":" + value));
    }

    @Test
    void theCanonicalLayoutIsReadWithoutAParser() {
        Claim c = CanonicalClaimDecoder.claim(utf8(CANONICAL));
        assertThat(c).isEqualTo(new Claim("t1", "alice", "alice", "n", 1000.5, 99999, ClaimStatus.WORKING, "", "wt",
                List.of("a", "b"), 77, 9, "c", null));
        assertThat(CanonicalClaimDecoder.claim(utf8(with("git", "{\"branch\":\"b\",\"base\":null,\"auto_release_on\":\"merge\"}"))).git())
                .isEqualTo(new GitContext("b", null, "merge"));
        assertThat(CanonicalClaimDecoder.claim(utf8(with("note", "\"q\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD800\\u004a\""))).note())
                .isEqualTo("q\"\\/\b\f\n\r\t\u00e9\uD800J");
        assertThat(CanonicalClaimDecoder.claim(utf8(with("claimed_at", "-0"))).claimedAt()).isEqualTo(0.0);
        assertThat(CanonicalClaimDecoder.claim(utf8(with("claimed_at", "-0.0"))).claimedAt()).isEqualTo(-0.0);
        assertThat(CanonicalClaimDecoder.claim(utf8(with("claimed_at", "1.7648000001234567E9"))).claimedAt())
                .isEqualTo(1.7648000001234567E9);
        assertThat(CanonicalClaimDecoder.releasedTaskId(utf8("{\"task_id\":\"t\\u00e9\"}"))).isEqualTo("t\u00e9");
    }

    @Test
    void hostileRowsAreLeftToTheTextPathWhichRefusesThem() {
        List<String> hostile = List.of(
                with("note", "null"), with("owner", "null"), with("task_id", "\"  \""), with("owner", "\"\\u0020\""),
                with("quota_principal", "null"), with("paths", "[null]"), with("paths", "[\"a\",1]"), with("paths", "\"a\""),
                with("epoch", "0"), with("epoch", "\"77\""), with("epoch", "1e400"), with("version", "-1"),
                with("claimed_at", "1e400"), with("lease_expires_at", "-1e999"), with("lease_expires_at", "NaN"),
                with("status", "\"WORKING\""), with("status", "null"), with("git", "[]"), with("git", "{\"branch\":1}"),
                with("note", "\"tab\tinside\""), with("note", "\"\\x\""), with("note", "\"\\u12\""),
                with("epoch", "01"), with("claimed_at", "1."), with("claimed_at", ".5"), with("claimed_at", "+1"),
                with("epoch", "12345678901234567890123"), CANONICAL + "x", CANONICAL.substring(0, CANONICAL.length() - 1),
                "", "{}", "[]", "null", "{\"task_id\":null}");
        for (String payload : hostile) {
            assertThat(CanonicalClaimDecoder.claim(utf8(payload))).as(payload).isNull();
            assertThat(textPath("claim", 1.0, utf8(payload))).as(payload).isEqualTo("corrupt");
            assertThat(bytePath("claim", 1.0, utf8(payload))).as(payload).isEqualTo("corrupt");
        }
        for (String payload : List.of("{\"task_id\":null}", "{\"task_id\":\" \"}", "{\"task_id\":5}", "{\"task_id\":\"a\"}x",
                "{\"task_id\":\"a\",\"x\":1", "{}", "")) {
            assertThat(CanonicalClaimDecoder.releasedTaskId(utf8(payload))).as(payload).isNull();
            assertThat(bytePath("release", 1.0, utf8(payload))).as(payload).isEqualTo("corrupt");
        }
    }

    @Test
    void malformedUtf8IsNeverReadHere() {
        byte[][] bad = {{(byte) 0xc3}, {(byte) 0xc0, (byte) 0xaf}, {(byte) 0xed, (byte) 0xa0, (byte) 0x80},
            {(byte) 0xff}, {(byte) 0xe2, (byte) 0x82}};
        for (byte[] b : bad) {
            String head = "{\"task_id\":\"t1\",\"owner\":\"alice\",\"note\":\"";
            String tail = CANONICAL.substring(CANONICAL.indexOf("\",\"claimed_at\""));
            byte[] payload = new byte[head.length() + b.length + tail.length()];
            System.arraycopy(utf8(head), 0, payload, 0, head.length());
            System.arraycopy(b, 0, payload, head.length(), b.length);
            System.arraycopy(utf8(tail), 0, payload, head.length() + b.length, tail.length());
            assertThat(CanonicalClaimDecoder.claim(payload)).isNull();
            assertThat(bytePath("claim", 1.0, payload)).isEqualTo(textPath("claim", 1.0, payload));
        }
        // valid raw UTF-8 (a reference log's layout) is not read here either, yet decodes through the text path
        byte[] raw = utf8(with("note", "\"caf\u00e9\""));
        assertThat(CanonicalClaimDecoder.claim(raw)).isNull();
        assertThat(((ClaimSnapshotEvent) bytePath("claim", 1.0, raw)).claim().note()).isEqualTo("caf\u00e9");
    }

    @Test
    void layoutsItDoesNotKnowStillDecodeThroughTheTextPath() {
        List<String> others = List.of(
                CANONICAL.replace(",\"note\":\"n\"", ""), // an absent optional member (reference logs)
                CANONICAL.replace("{\"task_id\"", "{ \"task_id\""), // white space
                CANONICAL + " ", // trailing white space
                with("epoch", "77.0"), // an integral float as an integer
                with("lease_expires_at", "99999999999999999999"), // a big integer as a number
                CANONICAL.replace("}", ",\"extra\":1}"), // an unknown member
                CANONICAL.replace("\"task_id\":\"t1\",", "\"task_id\":\"t0\",\"task_id\":\"t1\",")); // repeated member
        for (String payload : others) {
            assertThat(CanonicalClaimDecoder.claim(utf8(payload))).as(payload).isNull();
            Object decoded = bytePath("claim", 1.0, utf8(payload));
            assertThat(decoded).as(payload).isInstanceOf(ClaimSnapshotEvent.class).isEqualTo(textPath("claim", 1.0, utf8(payload)));
        }
    }

    @Test
    void aPathIdentityIsKeptByLeavingTheRowToTheTextPath() throws Exception {
        PathIdentity identity = new PathIdentity("/repo", "obj", "ns", true,
                List.of(new PathIdentity.Row("src/a", "/repo/src/a", "", "")));
        Claim c = new Claim("t", "o", "o", "", 1.0, 2.0, ClaimStatus.CLAIMED, "", "wt", List.of("src/a"), 1, 0, "",
                null, identity);
        ClaimSnapshotEvent event = new ClaimSnapshotEvent(1.0, ClaimSnapshotEvent.Kind.CLAIM, c);
        byte[] payload = utf8(codec.encode(event));
        assertThat(CanonicalClaimDecoder.claim(payload)).isNull();
        assertThat(codec.decode("claim", 1.0, payload)).contains(event);
    }
}
