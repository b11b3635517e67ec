package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

class ClaimFlowTest {
    private TestHub hub;

    @BeforeEach
    void start() throws Exception {
        hub = TestHub.open();
    }

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    @Test
    void claimIsBroadcastAndScopeConflictIsPrivate() throws Exception {
        HubClient alpha = hub.agent("p/alpha");
        HubClient beta = hub.agent("p/beta");
        alpha.await(f -> "p/beta".equals(f.path("agent").asText()), WAIT);
        ObjectNode claim = alpha.frame("claim");
        claim.put("task_id", "T1").put("note", "first").put("ttl_seconds", 60.0).put("worktree", "wt");
        claim.putArray("paths").add("src/a.py");
        alpha.send(claim);
        ObjectNode granted = beta.awaitType("claim_granted", WAIT);
        assertThat(granted.path("owner").asText()).isEqualTo("p/alpha");
        assertThat(granted.path("paths").get(0).asText()).isEqualTo("src/a.py");
        assertThat(alpha.awaitType("claim_granted", WAIT).path("epoch").asLong()).isEqualTo(granted.path("epoch").asLong());

        ObjectNode other = beta.frame("claim");
        other.put("task_id", "T2").put("worktree", "wt");
        other.putArray("paths").add("src");
        beta.send(other);
        ObjectNode denied = beta.awaitType("claim_denied", WAIT);
        assertThat(denied.path("reason_code").asText()).isEqualTo("SCOPE_CONFLICT");
        assertThat(denied.path("target").asText()).isEqualTo("p/beta");
        TestHub.assertQuiet(alpha);
    }

    @Test
    void observersGetALingeringBroadcastAtTheLatestWhenTheHubStops() throws Exception {
        try (TestHub lingering = new TestHub(HubConfig.builder().broadcastLinger(java.time.Duration.ofSeconds(1)))) {
            HubClient alpha = lingering.agent("p/alpha");
            HubClient beta = lingering.agent("p/beta");
            ObjectNode claim = alpha.frame("claim");
            claim.put("task_id", "T1").put("worktree", "wt");
            claim.putArray("paths").add("src/a.py");
            alpha.send(claim);
            alpha.awaitType("claim_granted", WAIT); // the requester at once, beta a second later
            lingering.server.close(); // long before the linger is over
            assertThat(beta.awaitType("claim_granted", WAIT).path("owner").asText()).isEqualTo("p/alpha");
        }
    }
}
