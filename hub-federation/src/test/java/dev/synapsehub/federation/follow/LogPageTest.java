package dev.synapsehub.federation.follow;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The follower reads a log page with a streaming parser ({@link LogPage}); it must check, fold and
 * fingerprint every page exactly as the tree-based reading it replaced (kept below as the
 * reference, verbatim): same refusal (kind and message), same folded claims, same fingerprints.
 */
class LogPageTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Set<String> SNAPSHOT_KINDS = Set.of("claim", "task_update", "checkpoint", "handoff");

    // ---- the reference: the tree-based page handling PeerFollower had before LogPage ----

    private static String treeOutcome(byte[] frame, long after, int asked) {
        JsonNode snapshot;
        try {
            snapshot = MAPPER.readTree(frame);
        } catch (IOException e) {
            return "refused: not JSON";
        }
        JsonNode end = snapshot.get("log_end_seq");
        JsonNode list = snapshot.get("events");
        if (end == null || !end.isIntegralNumber()) {
            return "fail no_log_end";
        }
        if (list == null || !list.isArray()) {
            return "fail malformed: 'events' is not a list";
        }
        if (list.size() > asked) {
            return "fail oversized_page " + list.size() + " > " + asked;
        }
        long logEnd = end.longValue();
        Map<String, ObservedClaim> delta = new LinkedHashMap<>();
        List<String> fingerprints = new ArrayList<>();
        long expected = after + 1;
        for (JsonNode e : list) {
            long seq;
            try {
                seq = treeChecked(e, expected++);
            } catch (PeerFollower.PollFailure f) {
                return "fail " + f.kind + ": " + f.getMessage();
            }
            treeFoldInto(delta, e, seq);
            fingerprints.add(PeerFollower.fingerprint(e));
        }
        return "ok end=" + logEnd + " delta=" + delta + " fingerprints=" + fingerprints;
    }

    private static long treeChecked(JsonNode e, long expected) throws PeerFollower.PollFailure {
        JsonNode seq = e.get("seq");
        if (seq == null || !seq.isIntegralNumber()) {
            throw new PeerFollower.PollFailure("malformed", "malformed event: no integer seq (expected seq " + expected + ")");
        }
        if (seq.longValue() != expected) {
            throw new PeerFollower.PollFailure("gap", "events not contiguous: expected seq " + expected + ", got " + seq.longValue());
        }
        JsonNode ts = e.get("ts");
        JsonNode kind = e.get("kind");
        JsonNode payload = e.get("payload");
        if (ts == null || !ts.isNumber() || kind == null || !kind.isTextual()
                || !(payload == null || payload.isNull() || payload.isObject())) {
            throw new PeerFollower.PollFailure("malformed", "malformed event at seq " + expected
                    + ": needs ts number, kind string, payload object");
        }
        return expected;
    }

    private static void treeFoldInto(Map<String, ObservedClaim> delta, JsonNode e, long seq) {
        String kind = e.get("kind").textValue();
        JsonNode p = e.get("payload");
        if (p == null || !p.isObject()) {
            return;
        }
        String task = p.path("task_id").asText("");
        if (task.isEmpty()) {
            return;
        }
        if ("release".equals(kind)) {
            delta.put(task, null);
        } else if (SNAPSHOT_KINDS.contains(kind)) {
            String owner = p.path("owner").asText("");
            if (!owner.isEmpty()) {
                delta.put(task, new ObservedClaim("hub-f", task, owner, ObservedClaim.namespaceOf(owner),
                        p.path("lease_expires_at").asDouble(0), p.path("epoch").asLong(0), p.path("status").asText(""),
                        seq, kind));
            }
        }
    }

    // ---- the same steps over LogPage, as PeerFollower.poll takes them ----

    private static String streamOutcome(byte[] frame, long after, int asked) throws IOException {
        LogPage page;
        try {
            page = LogPage.DECODER.decode(frame);
        } catch (IOException e) {
            return "refused: not JSON";
        }
        List<LogPage.Event> list = page.events();
        if (!page.logEndKnown()) {
            return "fail no_log_end";
        }
        if (list == null) {
            return "fail malformed: 'events' is not a list";
        }
        if (list.size() > asked) {
            return "fail oversized_page " + list.size() + " > " + asked;
        }
        PollDelta delta = new PollDelta();
        List<String> fingerprints = new ArrayList<>();
        long expected = after + 1;
        for (LogPage.Event e : list) {
            long seq;
            try {
                seq = PeerFollower.checked(e, expected++);
            } catch (PeerFollower.PollFailure f) {
                return "fail " + f.kind + ": " + f.getMessage();
            }
            delta.fold(e);
            fingerprints.add(page.fingerprint(e));
        }
        return "ok end=" + page.logEnd() + " delta=" + delta.claims("hub-f") + " fingerprints=" + fingerprints;
    }

    // ---- varied pages ----

    private static final String[] STRINGS = {
        "\"proj/x\"", "\"\"", "\"T-1\"", "\"ünïcødé/名前\"", "\"emoji 😀/ok\"", "\"a\\\"b\\\\c\\n\\t\\/d\"",
        "\"\\u00e9t\\u00E9/\\ud83d\\ude00\"", "\"team\\/sub\"", "\"noslash\"", "\"a/b/c\"", "\"\\u0000nul/x\"",
        "\"claimed\"", "\"claim\"", "\"release\"",
    };
    private static final String[] NUMBERS = {
        "0", "-1", "42", "9223372036854775807", "-9223372036854775808", "12345678901234567890123", "1.5", "-0.0",
        "1e3", "1.7E9", "2e-5", "1700000000.123456789", "1700000000", "3.0",
    };
    private static final String[] KINDS = {"claim", "task_update", "checkpoint", "handoff", "release", "note", "", "Claim"};

    private static String any(Random r, int depth) {
        int pick = r.nextInt(depth > 2 ? 4 : 7);
        return switch (pick) {
            case 0 -> STRINGS[r.nextInt(STRINGS.length)];
            case 1 -> NUMBERS[r.nextInt(NUMBERS.length)];
            case 2 -> "null";
            case 3 -> r.nextBoolean() ? "true" : "false";
            case 4 -> "{" + ws(r) + "\"task_id\":" + any(r, depth + 1) + ",\"owner\":" + any(r, depth + 1)
                    + ",\"deep\":{\"status\":[1,\"x\",{\"epoch\":7}]}}";
            case 5 -> "[" + any(r, depth + 1) + "," + ws(r) + any(r, depth + 1) + "]";
            default -> "{}";
        };
    }

    private static String ws(Random r) {
        return switch (r.nextInt(6)) {
            case 0 -> " ";
            case 1 -> "\n  ";
            case 2 -> "\t";
            default -> "";
        };
    }

    /** Mostly well-formed values, sometimes anything at all. */
    private static String usually(Random r, String good) {
        return r.nextInt(30) == 0 ? any(r, 0) : good;
    }

    private static String payload(Random r, long seq) {
        List<String> fields = new ArrayList<>();
        fields.add("\"task_id\":" + usually(r, r.nextInt(8) == 0 ? STRINGS[r.nextInt(STRINGS.length)] : "\"T-" + (seq % 7) + "\""));
        fields.add("\"owner\":" + usually(r, r.nextInt(4) == 0 ? STRINGS[r.nextInt(STRINGS.length)] : "\"proj/agent-" + seq % 3 + "\""));
        fields.add("\"lease_expires_at\":" + usually(r, NUMBERS[r.nextInt(NUMBERS.length)]));
        fields.add("\"epoch\":" + usually(r, NUMBERS[r.nextInt(NUMBERS.length)]));
        fields.add("\"status\":" + usually(r, STRINGS[r.nextInt(STRINGS.length)]));
        if (r.nextBoolean()) {
            fields.add("\"detail\":" + any(r, 1)); // nested, with keys that must not be taken for the payload's
        }
        if (r.nextInt(6) == 0) {
            fields.add("\"owner\":" + STRINGS[r.nextInt(STRINGS.length)]); // a repeated key: the last counts
        }
        if (r.nextInt(6) == 0) { // a repeated lease (a float then not, or the reverse): the last counts
            fields.add("\"lease_expires_at\":" + usually(r, NUMBERS[r.nextInt(NUMBERS.length)]));
        }
        if (r.nextInt(10) == 0) {
            fields.remove(r.nextInt(fields.size()));
        }
        java.util.Collections.shuffle(fields, r);
        return "{" + ws(r) + String.join("," + ws(r), fields) + "}";
    }

    private static String event(Random r, long seq) {
        if (r.nextInt(200) == 0) {
            return any(r, 0); // not an object at all
        }
        List<String> fields = new ArrayList<>();
        long written = r.nextInt(150) == 0 ? seq + 1 : seq;
        fields.add("\"seq\":" + (r.nextInt(150) == 0 ? any(r, 0) : Long.toString(written)));
        fields.add("\"ts\":" + usually(r, NUMBERS[r.nextInt(NUMBERS.length)]));
        fields.add("\"kind\":" + usually(r, "\"" + KINDS[r.nextInt(KINDS.length)] + "\""));
        int shape = r.nextInt(40);
        if (shape == 0) {
            fields.add("\"payload\":null");
        } else if (shape == 1) {
            fields.add("\"payload\":" + any(r, 0));
        } else if (shape != 2) {
            fields.add("\"payload\":" + payload(r, seq));
        }
        if (r.nextInt(20) == 0) {
            fields.add("\"seq\":" + seq); // a repeated seq: the last counts
        }
        if (r.nextInt(4) == 0) {
            fields.add("\"extra\":" + any(r, 0));
        }
        java.util.Collections.shuffle(fields, r);
        return "{" + String.join("," + ws(r), fields) + ws(r) + "}";
    }

    static String page(Random r, long after, int count) {
        List<String> events = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            events.add(event(r, after + 1 + i));
        }
        List<String> fields = new ArrayList<>();
        fields.add("\"type\":\"multihub_log_snapshot\"");
        fields.add("\"sender\":\"hub-f\"");
        fields.add("\"payload\":{\"events\":[1],\"log_end_seq\":\"no\"}");
        int ev = r.nextInt(60);
        fields.add("\"events\":" + (ev == 0 ? any(r, 0) : "[" + ws(r) + String.join("," + ws(r), events) + ws(r) + "]"));
        if (ev == 1) {
            fields.add("\"events\":[]"); // a repeated key: the last counts
        }
        int end = r.nextInt(60);
        fields.add(end == 0 ? "\"next_cursor\":0" : "\"log_end_seq\":" + (end == 1 ? any(r, 0) : Long.toString(after + count + r.nextInt(3))));
        if (r.nextInt(30) == 0) {
            fields.add("\"log_end_seq\":" + NUMBERS[r.nextInt(NUMBERS.length)]);
        }
        java.util.Collections.shuffle(fields, r);
        return ws(r) + "{" + ws(r) + String.join("," + ws(r), fields) + ws(r) + "}" + ws(r);
    }

    @Test
    void theStreamingFoldOfAPageEqualsTheTreeFold() throws IOException {
        Random r = new Random(12);
        Map<String, Integer> outcomes = new LinkedHashMap<>();
        for (int i = 0; i < 600; i++) {
            long after = r.nextInt(5) == 0 ? 0 : r.nextInt(1_000_000);
            int count = r.nextInt(12) == 0 ? 0 : 1 + r.nextInt(25);
            byte[] frame = page(r, after, count).getBytes(StandardCharsets.UTF_8);
            int asked = Math.max(0, count - 1 + r.nextInt(4));
            String tree = treeOutcome(frame, after, asked);
            assertThat(tree).doesNotStartWith("refused"); // the generator writes JSON
            assertThat(streamOutcome(frame, after, asked)).as("page %d: %s", i, new String(frame, StandardCharsets.UTF_8))
                    .isEqualTo(tree);
            String[] words = tree.split(" ");
            outcomes.merge(words[0].equals("ok") ? "ok" : words[0] + " " + words[1], 1, Integer::sum);
        }
        // the pages varied enough to exercise every outcome
        assertThat(outcomes.keySet()).contains("ok", "fail no_log_end", "fail malformed:", "fail oversized_page",
                "fail gap:");
        assertThat(outcomes.get("ok")).isGreaterThan(100);
    }

    @Test
    void aFoldedPageKeepsUnicodeEscapesNumbersAndTheLastRepeatedKey() throws IOException {
        String text = "{\"type\":\"multihub_log_snapshot\",\"events\":["
                + "{\"seq\":8,\"ts\":1.5e9,\"kind\":\"claim\",\"payload\":{\"task_id\":\"t\\u00e9-\\ud83d\\ude00\","
                + "\"owner\":\"old/x\",\"lease_expires_at\":1700000000.25,\"epoch\":12345678901234567890123,"
                + "\"status\":null,\"meta\":{\"owner\":\"nested/no\"},\"owner\":\"名前/agent\"}},"
                + "{\"kind\":\"release\",\"payload\":{\"task_id\":\"other\"},\"ts\":2,\"seq\":9}],"
                + "\"log_end_seq\":12}";
        byte[] frame = text.getBytes(StandardCharsets.UTF_8);
        assertThat(streamOutcome(frame, 7, 5)).isEqualTo(treeOutcome(frame, 7, 5));

        LogPage page = LogPage.DECODER.decode(frame);
        assertThat(LogPage.DECODER.type(page)).isEqualTo("multihub_log_snapshot");
        assertThat(page.logEnd()).isEqualTo(12);
        PollDelta folded = new PollDelta();
        folded.fold(page.events().get(0));
        folded.fold(page.events().get(1));
        Map<String, ObservedClaim> delta = folded.claims("hub-f");
        ObservedClaim claim = delta.get("té-😀");
        assertThat(claim.owner()).isEqualTo("名前/agent");
        assertThat(claim.leaseExpiresAt()).isEqualTo(1700000000.25);
        assertThat(claim.epoch()).isEqualTo(new java.math.BigInteger("12345678901234567890123").longValue());
        assertThat(claim.status()).isEmpty();
        assertThat(delta).containsEntry("other", null);
        // the fingerprint is of the event's content, not its spelling: same as the tree's
        assertThat(page.fingerprint(page.events().get(0)))
                .isEqualTo(PeerFollower.fingerprint(MAPPER.readTree(frame).get("events").get(0)));
    }

    @Test
    void malformedPagesAreRefused() throws IOException {
        String[] broken = {
            "{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":3,\"events\":[{\"seq\":1,\"ts\":1,\"kind\":\"claim\"",
            "{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":3,\"events\":[{\"seq\":1,,\"ts\":1}]}",
            "{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":3,\"events\":[{seq:1}]}",
            "{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":3,\"events\":[{\"seq\":1,\"kind\":\"bad \\q escape\"}]}",
            "{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":3,\"events\":[{\"seq\":01}]}",
            "{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":NaN,\"events\":[]}",
            "{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":3,\"events\":[{\"seq\":1,\"payload\":{\"task_id\":\"x\"]}]}",
            "{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":3,\"events\":[{\"seq\":1,\"ts\":1,\"kind\":\"claim\"}}",
        };
        for (String text : broken) {
            byte[] frame = text.getBytes(StandardCharsets.UTF_8);
            assertThatThrownBy(() -> LogPage.DECODER.decode(frame)).as(text).isInstanceOf(IOException.class);
            assertThat(treeOutcome(frame, 0, 10)).as(text).isEqualTo("refused: not JSON");
        }
        // well-formed JSON that is not a well-formed page: refused with the same kind and words as before
        String[][] refused = {
            {"{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":null,\"events\":[]}", "fail no_log_end"},
            {"{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":2.0,\"events\":[]}", "fail no_log_end"},
            {"{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":2,\"events\":{}}", "fail malformed: 'events' is not a list"},
            {"{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":2,\"events\":[{\"seq\":1,\"ts\":1,\"kind\":\"claim\"},"
                    + "{\"seq\":2,\"ts\":1,\"kind\":\"claim\",\"payload\":[]}]}",
                "fail malformed: malformed event at seq 2: needs ts number, kind string, payload object"},
            {"{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":2,\"events\":[{\"seq\":\"1\",\"ts\":1,\"kind\":\"claim\"}]}",
                "fail malformed: malformed event: no integer seq (expected seq 1)"},
            {"{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":2,\"events\":[[1]]}",
                "fail malformed: malformed event: no integer seq (expected seq 1)"},
            {"{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":3,\"events\":[{\"seq\":2,\"ts\":1,\"kind\":\"claim\"}]}",
                "fail gap: events not contiguous: expected seq 1, got 2"},
            {"{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":3,\"events\":[{\"seq\":1,\"ts\":\"1\",\"kind\":\"claim\"}]}",
                "fail malformed: malformed event at seq 1: needs ts number, kind string, payload object"},
            {"{\"type\":\"multihub_log_snapshot\",\"log_end_seq\":3,\"events\":[{\"seq\":1,\"ts\":1,\"kind\":\"a\"},"
                    + "{\"seq\":2,\"ts\":1,\"kind\":\"a\"},{\"seq\":3,\"ts\":1,\"kind\":\"a\"}]}", "fail oversized_page 3 > 2"},
        };
        for (String[] c : refused) {
            byte[] frame = c[0].getBytes(StandardCharsets.UTF_8);
            assertThat(streamOutcome(frame, 0, 2)).as(c[0]).isEqualTo(c[1]).isEqualTo(treeOutcome(frame, 0, 2));
        }
    }
}
