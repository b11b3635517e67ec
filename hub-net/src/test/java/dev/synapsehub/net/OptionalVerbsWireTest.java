package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The optional verbs of contract §14 whose feature this hub does not run get the answer the
 * contract gives for a hub without it (A2.6, A3, A4, A5.1), over a real loopback socket; the
 * others are still "Unknown message type".
 */
class OptionalVerbsWireTest {
    @TempDir
    Path dir;

    @Test
    void federationOfferWithoutAnOfferConfigured() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            a.send(a.frame("federation_offer_request"));
            ObjectNode e = a.awaitType("error", WAIT);
            assertThat(e.path("payload").asText()).isEqualTo("No federation offer is configured on this hub.");
            assertThat(e.has("error_code")).isFalse();
            assertThat(e.path("target").asText()).isEqualTo("p/alpha");
        }
    }

    @Test
    void guardDenialNeedsATokenAndAJournal() throws Exception {
        try (TestHub open = TestHub.open(); TestHub journaledOpen = TestHub.journaled(dir.resolve("a.db"));
             TestHub tokenOnly = new TestHub(HubConfig.builder().token("t"))) {
            for (TestHub hub : new TestHub[] {open, journaledOpen, tokenOnly}) {
                HubClient a = hub.connect();
                a.register("p/alpha", hub == tokenOnly ? "t" : null, WAIT);
                ObjectNode g = a.frame("p/alpha", "guard_denial");
                g.put("reason_code", "GUARD_NO_CLAIM").put("provider", "shell").put("path_count", 1);
                a.send(g);
                ObjectNode e = a.awaitType("error", WAIT);
                assertThat(e.path("payload").asText())
                        .isEqualTo("guard denial evidence requires an authenticated durable hub");
                assertThat(e.path("error_code").asText()).isEqualTo("guard_evidence_unavailable");
            }
        }
    }

    @Test
    void operatorRelayIsValidatedThenNeverAuthorised() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            ObjectNode bad = a.frame("operator_relay_request");
            bad.put("action", "release").put("namespace", "ns").put("task_id", "T1").put("operator", "op");
            a.send(bad); // no origin_hub_id
            assertThat(a.awaitType("error", WAIT).path("payload").asText()).isEqualTo("Malformed operator relay request");
            ObjectNode badGlass = bad.deepCopy().put("origin_hub_id", "syn-1").put("break_glass", "yes");
            a.send(badGlass);
            assertThat(a.awaitType("error", WAIT).path("payload").asText()).isEqualTo("Malformed operator relay request");

            ObjectNode ok = bad.deepCopy().put("origin_hub_id", "syn-1").put("break_glass", true).put("reason", "stuck");
            a.send(ok);
            ObjectNode result = a.awaitType("operator_relay_result", WAIT);
            assertThat(result.path("payload").asText()).isEqualTo("Operator relay result");
            assertThat(result.path("applied").asBoolean(true)).isFalse();
            assertThat(result.path("pending").isBoolean()).isTrue();
            assertThat(result.path("pending").asBoolean(true)).isFalse();
            assertThat(result.path("detail").asText()).isEqualTo("peer_not_authorised");
            assertThat(result.path("task_id").asText()).isEqualTo("T1");
            assertThat(result.path("owner_hub_id").asText()).isEqualTo(result.path("hub_id").asText());
        }
    }

    @Test
    void identityPinReclaimRefusesInTheContractsOrder() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/op");
            String[][] cases = {
                {"{}", "pin name is required"},
                {"{\"pin_name\":\"p/x\"}", "expected key id is required"},
                {"{\"pin_name\":\"p/x\",\"expected_key_id\":\" k1 \",\"reason\":\"  \"}",
                    "a non-empty operator reason is required"},
                {"{\"pin_name\":\"p/x\",\"expected_key_id\":\"k1\",\"reason\":\"" + "r".repeat(501) + "\"}",
                    "operator reason exceeds 500 characters"},
                {"{\"pin_name\":\"p/op\",\"expected_key_id\":\"k1\",\"reason\":\"lost key\"}",
                    "an operator cannot reclaim the identity used by its own live connection"},
                {"{\"pin_name\":\"p/x\",\"expected_key_id\":\" k1 \",\"reason\":\"lost key\",\"break_glass\":true}",
                    "no identity-pin-reclaim ACL grant authorises this operator and target"},
            };
            for (String[] c : cases) {
                ObjectNode f = (ObjectNode) new com.fasterxml.jackson.databind.ObjectMapper().readTree(c[0]);
                f.put("type", "identity_pin_reclaim").put("sender", "p/op");
                a.send(f);
                ObjectNode result = a.awaitType("identity_pin_reclaim_result", WAIT);
                assertThat(result.path("payload").asText()).as(c[0]).isEqualTo(c[1]);
                assertThat(result.path("applied").asBoolean(true)).isFalse();
                assertThat(result.path("audit_seq").isNull()).isTrue();
            }
            // the last case: trimmed key id, and break_glass only from a literal true
            // (asserted on a fresh request so the order of checks above stays the subject)
            ObjectNode last = a.frame("identity_pin_reclaim");
            last.put("pin_name", " p/x ").put("expected_key_id", " k1 ").put("reason", "r").put("break_glass", "true");
            a.send(last);
            ObjectNode result = a.awaitType("identity_pin_reclaim_result", WAIT);
            assertThat(result.path("pin_name").asText()).isEqualTo("p/x");
            assertThat(result.path("expected_key_id").asText()).isEqualTo("k1");
            assertThat(result.path("break_glass").asBoolean(true)).isFalse();
        }
    }

    @Test
    void verbsWithoutAContractAnswerStayUnknown() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            // a hub without the federation module; with it: DeadLetterForwardingTest (hub-federation)
            for (String verb : new String[] {"dead_letter_forwarding"}) { // recall_log, finding: MemoryWireTest
                a.send(a.frame(verb));
                assertThat(a.awaitType("error", WAIT).path("payload").asText())
                        .isEqualTo("Unknown message type '" + verb + "'.");
            }
        }
    }
}
