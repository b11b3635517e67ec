package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pins the exact text of the two hub-to-hub verdict frames every answering site builds through
 * {@link PeerVerdictFrames}: the envelope of contract §4.2, then the members of A5.1
 * ({@code operator_relay_result}) and §11.3 ({@code multihub_claim_result}), names, JSON types and order.
 */
class PeerVerdictFramesTest {
    private final WireJson json = new WireJson(64);
    private final HubFrames frames = new HubFrames(json, "hub-b");

    @Test
    void relayResultCarriesTheRequestsIdentityAsSentAndTheVerdict() {
        ObjectNode f = PeerVerdictFrames.relayResult(frames, relayRequest("hub-a", " t1 "), "hub-b", false, true,
                "recorded; awaiting approval by a second operator", 1700000000.5);

        assertThat(frames.write(f)).isEqualTo("{\"sender\":\"SynapseHub\",\"target\":\"hub-a\","
                + "\"type\":\"operator_relay_result\",\"payload\":\"Operator relay result\","
                + "\"timestamp\":1700000000.5,\"hub_id\":\"hub-b\",\"applied\":false,\"action\":\"release\","
                + "\"namespace\":\"proj\",\"task_id\":\" t1 \",\"owner_hub_id\":\"hub-b\","
                + "\"detail\":\"recorded; awaiting approval by a second operator\",\"pending\":true}");
    }

    @Test
    void relayResultNamesTheOwnerThatDecidedNotTheHubThatAnswers() {
        ObjectNode f = PeerVerdictFrames.relayResult(frames, relayRequest("alice", "t1"), "hub-c", true, false,
                "released", 2.0);

        assertThat(f.path("hub_id").textValue()).isEqualTo("hub-b");
        assertThat(f.path("owner_hub_id").textValue()).isEqualTo("hub-c");
        assertThat(f.path("applied").isBoolean()).isTrue();
        assertThat(f.path("pending").isBoolean()).isTrue();
    }

    @Test
    void refusedClaimResultCarriesANullGrantAndTheDetailAsPayload() {
        ObjectNode f = PeerVerdictFrames.claimResult(frames, "hub-a", false, "t1", "proj", "hub-b",
                "peer not authorised to forward claims", null, 1700000000.25);

        assertThat(frames.write(f)).isEqualTo("{\"sender\":\"SynapseHub\",\"target\":\"hub-a\","
                + "\"type\":\"multihub_claim_result\",\"payload\":\"peer not authorised to forward claims\","
                + "\"timestamp\":1700000000.25,\"hub_id\":\"hub-b\",\"granted\":false,\"task_id\":\"t1\","
                + "\"namespace\":\"proj\",\"owner_hub_id\":\"hub-b\","
                + "\"detail\":\"peer not authorised to forward claims\",\"grant\":null}");
    }

    @Test
    void grantedClaimResultCarriesTheGrantObject() {
        ObjectNode grant = json.object();
        grant.put("type", "claim_granted");
        grant.put("task_id", "t1");
        grant.put("owner", "proj/q1");

        ObjectNode f = PeerVerdictFrames.claimResult(frames, "hub-a", true, "t1", "proj", "hub-b", "", grant, 3.0);

        assertThat(frames.write(f)).isEqualTo("{\"sender\":\"SynapseHub\",\"target\":\"hub-a\","
                + "\"type\":\"multihub_claim_result\",\"payload\":\"\",\"timestamp\":3.0,\"hub_id\":\"hub-b\","
                + "\"granted\":true,\"task_id\":\"t1\",\"namespace\":\"proj\",\"owner_hub_id\":\"hub-b\","
                + "\"detail\":\"\",\"grant\":{\"type\":\"claim_granted\",\"task_id\":\"t1\",\"owner\":\"proj/q1\"}}");
    }

    private Request relayRequest(String sender, String taskId) {
        ObjectNode request = json.object();
        request.put("type", "operator_relay_request");
        request.put("action", "release");
        request.put("namespace", "proj");
        request.put("task_id", taskId);
        return new Request(null, sender, "operator_relay_request", "all", request);
    }
}
