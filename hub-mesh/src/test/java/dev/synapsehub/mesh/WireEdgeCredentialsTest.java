package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.protocol.RequestContext;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Seed 001 §15: credentials are not replicated as ordinary data; forwarded and replicated frames drop them. */
class WireEdgeCredentialsTest {
    @Test
    void aForwardedOrReplicatedRequestFrameLeavesOutAuthSignatureAndToken() {
        ObjectNode frame = MeshJson.MAPPER.createObjectNode();
        frame.put("type", "claim").put("task_id", "T1").put("token", "connect-secret")
                .put("signature", "hmac-secret").putObject("auth").put("key_id", "k1").put("sig", "sig-secret");
        JsonNode described = new WireEdge().describe(new RequestContext("claim", "alice", null, frame));
        JsonNode replicated = described.get("frame");
        assertThat(replicated.path("task_id").asText()).isEqualTo("T1");
        assertThat(replicated.has("token")).isFalse();
        assertThat(replicated.has("signature")).isFalse();
        assertThat(replicated.has("auth")).isFalse();
        assertThat(described.toString()).doesNotContain("secret");
        assertThat(frame.has("token")).as("the request itself is untouched").isTrue();
    }
}
