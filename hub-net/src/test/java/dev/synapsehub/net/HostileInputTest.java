package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A generated corpus of malformed and hostile frames: no crash, no state change (state
 * snapshot before/after), and each connection either still answers or was closed with the
 * documented code.
 */
class HostileInputTest {
    private static final String ME = "p/victim";

    /** One corpus entry: raw bytes, binary or text, and the close code it may cause (0 = none). */
    private record Entry(String label, byte[] bytes, boolean binary, int closeCode) {
    }

    private static Entry text(String label, String s) {
        return new Entry(label, s.getBytes(StandardCharsets.UTF_8), false, 0);
    }

    private static List<Entry> corpus(long signedAt) {
        List<Entry> c = new ArrayList<>();
        String base = "{\"sender\":\"" + ME + "\",\"target\":\"System\",";
        c.add(text("not json", "hello"));
        c.add(text("truncated", base + "\"type\":\"claim\""));
        c.add(text("NaN", base + "\"type\":\"claim\",\"task_id\":\"X\",\"ttl_seconds\":NaN}"));
        c.add(text("Infinity", base + "\"type\":\"claim\",\"task_id\":\"X\",\"epoch\":-Infinity}"));
        c.add(text("1e400", base + "\"type\":\"release\",\"task_id\":\"T\",\"epoch\":1e400}"));
        c.add(text("long int", base + "\"type\":\"release\",\"task_id\":\"T\",\"epoch\":" + "7".repeat(5000) + "}"));
        c.add(text("deep", base + "\"type\":\"claim\",\"x\":" + "[".repeat(200) + "]".repeat(200) + "}"));
        c.add(new Entry("invalid utf-8 binary", new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xc3, (byte) 0x28, '"', '}'},
                true, 0));
        c.add(new Entry("invalid utf-8 text", new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xed, (byte) 0xa0,
                (byte) 0x80, '"', '}'}, false, 0));
        c.add(text("array", "[1,2,3]"));
        c.add(text("number", "42"));
        c.add(text("null", "null"));
        c.add(text("string", "\"claim\""));
        c.add(text("type number", base + "\"type\":5}"));
        c.add(text("target array", "{\"sender\":\"" + ME + "\",\"target\":[1],\"type\":\"claim\"}"));
        c.add(text("channel object", base + "\"type\":\"claim\",\"channel\":{}}"));
        c.add(text("unknown verb", base + "\"type\":\"drop_tables\"}"));
        c.add(text("delivery_receipt inbound", base + "\"type\":\"delivery_receipt\"}"));
        c.add(text("epoch string", base + "\"type\":\"release\",\"task_id\":\"T\",\"epoch\":\"1\"}"));
        c.add(text("epoch bool", base + "\"type\":\"checkpoint\",\"task_id\":\"T\",\"epoch\":true}"));
        c.add(text("epoch fraction", base + "\"type\":\"task_update\",\"task_id\":\"T\",\"epoch\":1.5}"));
        c.add(text("expected_version array", base + "\"type\":\"task_update\",\"task_id\":\"T\",\"expected_version\":[0]}"));
        c.add(text("paths string", base + "\"type\":\"claim\",\"task_id\":\"Y\",\"paths\":\"src\"}"));
        c.add(text("paths mixed", base + "\"type\":\"claim\",\"task_id\":\"Y\",\"paths\":[\"a\",7]}"));
        c.add(text("task_id object", base + "\"type\":\"release\",\"task_id\":{\"$ne\":1}}"));
        c.add(text("idem_key number", base + "\"type\":\"claim\",\"task_id\":\"Y\",\"idem_key\":1}"));
        // hostile but well-formed claims by another agent: widened to the whole worktree, so they conflict
        c.add(text("hostile paths", base.replace(ME, "p/other") + "\"type\":\"claim\",\"task_id\":\"Z\","
                + "\"worktree\":\"wt\",\"paths\":[\"../../etc/passwd\",\"/abs\",\"a\\u0000b\"]}"));
        c.add(text("stale signed release", base + "\"type\":\"release\",\"task_id\":\"T\",\"auth\":{\"alg\":"
                + "\"hmac-sha256\",\"kid\":\"k1\",\"nonce\":\"n\",\"sequence\":1,\"timestamp\":" + (signedAt - 3600)
                + ",\"value\":\"00\"}}"));
        c.add(text("signed non-finite-ish timestamp", base + "\"type\":\"release\",\"task_id\":\"T\",\"auth\":{"
                + "\"alg\":\"hmac-sha256\",\"kid\":\"k1\",\"nonce\":\"n\",\"sequence\":1,\"timestamp\":\"nan\","
                + "\"value\":\"00\"}}"));
        c.add(text("unsigned release", base + "\"type\":\"release\",\"task_id\":\"T\"}"));
        c.add(new Entry("oversize", ("{\"payload\":\"" + "x".repeat(70_000) + "\"}").getBytes(StandardCharsets.UTF_8),
                false, 1009));
        c.add(text("name switch", "{\"sender\":\"p/someone-else\",\"type\":\"who_request\"}"));
        Random random = new Random(42);
        for (int i = 0; i < 40; i++) {
            byte[] junk = new byte[1 + random.nextInt(200)];
            random.nextBytes(junk);
            c.add(new Entry("random bytes " + i, junk, random.nextBoolean(), 0));
        }
        return c;
    }

    @Test
    void corpusChangesNothingAndKeepsOrClosesConnectionsAsDocumented() throws Exception {
        MessageAuthKey key = MessageAuthKey.parse("k1:s3cret:" + ME);
        try (TestHub hub = new TestHub(HubConfig.builder().maxFrameBytes(64 * 1024)
                .messageAuthKeys(List.of(key)).requireMessageAuth(true))) {
            HubClient owner = hub.agent("p/owner");
            ObjectNode claim = owner.frame("claim");
            claim.put("task_id", "T").put("worktree", "wt");
            claim.putArray("paths").add("src");
            owner.send(ClaimVerbsTest.sign(claim, "k1", "s3cret", "seed", System.currentTimeMillis() / 1000.0));
            // the owner is not bound to the key: refused, so grant it through a signer that is
            owner.awaitType("error", WAIT);
            HubClient victim = hub.agent(ME);
            ObjectNode real = victim.frame("claim");
            real.put("task_id", "T").put("worktree", "wt");
            real.putArray("paths").add("src");
            victim.send(ClaimVerbsTest.sign(real, "k1", "s3cret", "seed-2", System.currentTimeMillis() / 1000.0));
            victim.awaitType("claim_granted", WAIT);
            JsonNode before = claims(victim);

            HubClient other = hub.agent("p/other");
            for (Entry e : corpus(System.currentTimeMillis() / 1000)) {
                HubClient target = e.label().startsWith("hostile paths") ? other : victim;
                if (e.binary()) {
                    target.sendBinary(e.bytes());
                } else {
                    target.channelWriteText(e.bytes());
                }
                if (e.closeCode() != 0 || e.label().equals("name switch")) {
                    int expected = e.closeCode() != 0 ? e.closeCode() : 4009;
                    assertThat(target.awaitClose(WAIT).code()).as(e.label()).isEqualTo(expected);
                    Thread.sleep(100);
                    victim = hub.agent(ME);
                    continue;
                }
                target.send(target.frame("who_request"));
                target.awaitType("who_snapshot", WAIT);
                assertThat(target.isOpen()).as(e.label()).isTrue();
            }
            assertThat(claims(victim)).isEqualTo(before);
            assertThat(hub.server.services().metrics().faults.get()).isZero();
        }
    }

    private static JsonNode claims(HubClient c) throws Exception {
        JsonNode claims = TestHub.state(c).path("snapshot").path("active_claims").deepCopy();
        for (JsonNode claim : claims) {
            ((ObjectNode) claim).remove(List.of("lease_expires_at", "claimed_at"));
        }
        return claims;
    }
}
