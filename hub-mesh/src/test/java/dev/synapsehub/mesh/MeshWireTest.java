package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;

/** Slice 2: agents speak the unchanged wire protocol to any node; the mesh is one hub to them. */
class MeshWireTest {
    static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;
    private TestCluster cluster;
    private final List<HubClient> clients = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        clients.forEach(HubClient::close);
        if (cluster != null) {
            cluster.close();
        }
    }

    HubClient agent(String node, String name) throws Exception {
        HubClient c = HubClient.connect(cluster.uri(node), WAIT);
        clients.add(c);
        c.register(name, null, WAIT);
        return c;
    }

    static ObjectNode claim(HubClient c, String task) {
        ObjectNode f = c.frame("claim");
        f.put("task_id", task);
        f.put("worktree", task); // a scope of its own: claims of different tasks never conflict here
        return f;
    }

    static ObjectNode awaitType(HubClient c, String type, String task) throws TimeoutException {
        return c.await(f -> type.equals(f.path("type").asText()) && task.equals(f.path("task_id").asText()), WAIT);
    }

    @Test
    void aGrantMadeThroughOneNodeReachesAgentsOnTheOthersAndBindsThemToo() throws Exception {
        cluster = new TestCluster(dir, 3, true);
        MeshNode leader = cluster.awaitLeader();
        String a = cluster.follower(leader).nodeId();
        String b = leader.nodeId();
        String c = cluster.running().stream().map(MeshNode::nodeId).filter(id -> !id.equals(a) && !id.equals(b))
                .findFirst().orElseThrow();
        HubClient ann = agent(a, "ann");
        HubClient bob = agent(b, "bob");
        HubClient cat = agent(c, "cat");
        ObjectNode catJoined = cat.await(f -> "presence_update".equals(f.path("type").asText())
                && "cat".equals(f.path("agent").asText()), WAIT);
        assertThat(catJoined.path("online_agents").toString()).as("presence is node-local")
                .contains("cat").doesNotContain("ann").doesNotContain("bob");

        ann.send(claim(ann, "T1"));
        ObjectNode granted = awaitType(ann, "claim_granted", "T1");
        assertThat(granted.path("owner").asText()).isEqualTo("ann");
        for (HubClient other : List.of(bob, cat)) {
            ObjectNode seen = awaitType(other, "claim_granted", "T1");
            assertThat(seen.path("owner").asText()).isEqualTo("ann");
            assertThat(seen.path("epoch").asLong()).isEqualTo(granted.path("epoch").asLong());
            assertThat(seen.path("hub_id").asText()).as("one hub id").isEqualTo(cluster.hubId());
        }
        assertThat(granted.path("hub_id").asText()).isEqualTo(cluster.hubId());

        cat.send(claim(cat, "T1"));
        ObjectNode denied = awaitType(cat, "claim_denied", "T1");
        assertThat(denied.path("reason_code").asText()).isEqualTo("LEASE_LIVE");

        ObjectNode release = ann.frame("release");
        release.put("task_id", "T1");
        release.put("epoch", granted.path("epoch").asLong());
        ann.send(release);
        awaitType(ann, "release_granted", "T1");
        awaitType(bob, "release_granted", "T1");
        awaitType(cat, "release_granted", "T1");
        cat.send(claim(cat, "T1"));
        assertThat(awaitType(cat, "claim_granted", "T1").path("epoch").asLong())
                .isGreaterThan(granted.path("epoch").asLong());
    }

    @Test
    void aKeyedClaimRetriedOnAnotherNodeGetsTheFirstAnswerVerbatim() throws Exception {
        cluster = new TestCluster(dir, 3, true);
        MeshNode leader = cluster.awaitLeader();
        String first = cluster.follower(leader).nodeId();
        HubClient dan = agent(first, "dan");
        ObjectNode keyed = claim(dan, "K1");
        keyed.put("idem_key", "k-1");
        dan.send(keyed);
        ObjectNode answer = awaitType(dan, "claim_granted", "K1");
        dan.close();

        HubClient again = agent(leader.nodeId(), "dan");
        ObjectNode retry = claim(again, "K1");
        retry.put("idem_key", "k-1");
        again.send(retry);
        assertThat(awaitType(again, "claim_granted", "K1")).isEqualTo(answer);
    }

    @Test
    void stateOnAnyNodeShowsClaimsMadeThroughTheOthers() throws Exception {
        cluster = new TestCluster(dir, 3, true);
        MeshNode leader = cluster.awaitLeader();
        HubClient eve = agent(leader.nodeId(), "eve");
        HubClient fay = agent(cluster.follower(leader).nodeId(), "fay");
        eve.send(claim(eve, "S1"));
        awaitType(eve, "claim_granted", "S1");
        fay.send(claim(fay, "S2"));
        awaitType(fay, "claim_granted", "S2");
        awaitType(eve, "claim_granted", "S2");

        fay.send(fay.frame("state_request"));
        ObjectNode state = fay.awaitType("state_snapshot", WAIT);
        assertThat(state.toString()).contains("\"S1\"").contains("\"S2\"");
    }
}
