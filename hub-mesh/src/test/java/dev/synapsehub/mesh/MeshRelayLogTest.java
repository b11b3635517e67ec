package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --relay-log} on a mesh (wire contract A5.2; docs/mesh.md, "The relay log on a mesh"):
 * each node mirrors what it fans out to its own sockets, so a broadcast decided through one node
 * has a line in every node's log (the same message id and hub id), a channel chat too, presence
 * only where the agent is connected, and private replies nowhere.
 */
class MeshRelayLogTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

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

    private Path log(String node) {
        return dir.resolve("relay-" + node + ".ndjson");
    }

    private HubClient agent(String node, String name) throws Exception {
        HubClient c = HubClient.connect(cluster.uri(node), WAIT);
        clients.add(c);
        c.register(name, null, WAIT);
        c.await(f -> "presence_update".equals(f.path("type").asText()) && name.equals(f.path("agent").asText()), WAIT);
        return c;
    }

    private List<JsonNode> lines(String node) {
        try {
            if (!Files.exists(log(node))) {
                return List.of();
            }
            List<JsonNode> out = new ArrayList<>();
            for (String line : Files.readAllLines(log(node))) {
                if (!line.isBlank()) {
                    out.add(JSON.readTree(line));
                }
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits for node {@code node}'s log to hold a line matching {@code line}; returns it. */
    private JsonNode awaitLine(String node, String what, Predicate<JsonNode> line) throws InterruptedException {
        JsonNode[] found = new JsonNode[1];
        TestCluster.await(node + "'s relay log holds " + what, () -> {
            found[0] = lines(node).stream().filter(line).findFirst().orElse(null);
            return found[0] != null;
        });
        return found[0];
    }

    private static Predicate<JsonNode> chat(String text) {
        return l -> "chat".equals(l.path("ty").asText()) && text.equals(l.path("p").asText());
    }

    @Test
    void everyNodeMirrorsWhatItFansOutToItsOwnSockets() throws Exception {
        cluster = TestCluster.serving(dir, 3, MeshCompaction.DEFAULTS, new TestCluster.Serving() {
            @Override
            public dev.synapsehub.net.HubConfig.Builder hub(String id, Path db, dev.synapsehub.net.HubConfig.Builder b) {
                return b;
            }

            @Override
            public Path relayLog(String id) {
                return log(id);
            }
        });
        MeshNode leader = cluster.awaitLeader();
        String a = cluster.follower(leader).nodeId();
        String l = leader.nodeId();
        String b = cluster.running().stream().map(MeshNode::nodeId).filter(id -> !id.equals(a) && !id.equals(l))
                .findFirst().orElseThrow();
        HubClient ann = agent(a, "ann");
        HubClient bob = agent(b, "bob");

        ObjectNode claim = ann.frame("claim");
        claim.put("task_id", "T1");
        claim.put("worktree", "T1");
        ann.send(claim);
        ann.await(f -> "claim_granted".equals(f.path("type").asText()), WAIT);
        ObjectNode hello = ann.frame("chat");
        hello.put("target", "all");
        hello.put("payload", "hello");
        ann.send(hello);
        bob.await(f -> "hello".equals(f.path("payload").asText()), WAIT);

        long msgId = -1;
        for (String node : List.of(a, l, b)) {
            JsonNode granted = awaitLine(node, "the grant", x -> "claim_granted".equals(x.path("ty").asText()));
            assertThat(granted.path("s").asText()).isEqualTo("SynapseHub");
            assertThat(granted.path("h").asText()).as("one hub id").isEqualTo(cluster.hubId());
            JsonNode chat = awaitLine(node, "the chat", chat("hello"));
            assertThat(chat.path("v").asInt()).isEqualTo(2);
            assertThat(chat.path("s").asText()).isEqualTo("ann");
            assertThat(chat.path("h").asText()).isEqualTo(cluster.hubId());
            if (msgId < 0) {
                msgId = chat.path("i").asLong();
            }
            assertThat(chat.path("i").asLong()).as("the message id the leader stamped, on " + node).isEqualTo(msgId);
        }
        assertThat(msgId).isPositive();

        // a channel chat: one line per node (contract A5.2: per channel chat), with its channel id
        for (String[] v : List.of(new String[] {"channel_create", null}, new String[] {"channel_invite", "bob"})) {
            ObjectNode f = ann.frame(v[0]).put("channel", "ops");
            if (v[1] != null) {
                f.put("invitee", v[1]);
            }
            ann.send(f);
            assertThat(ann.awaitType("channel_result", WAIT).path("ok").asBoolean()).isTrue();
        }
        bob.send(bob.frame("channel_join").put("channel", "ops"));
        assertThat(bob.awaitType("channel_result", WAIT).path("ok").asBoolean()).isTrue();
        ObjectNode secret = ann.frame("chat");
        secret.put("channel", "ops");
        secret.put("payload", "in-ops");
        ann.send(secret);
        bob.await(f -> "in-ops".equals(f.path("payload").asText()), WAIT);
        for (String node : List.of(a, l, b)) {
            assertThat(awaitLine(node, "the channel chat", chat("in-ops")).path("c").asText()).isEqualTo("ops");
        }

        // presence is node-local, so is its line; private replies have none anywhere
        ann.send(ann.frame("state_request"));
        ann.awaitType("state_snapshot", WAIT);
        ObjectNode marker = ann.frame("chat");
        marker.put("target", "all");
        marker.put("payload", "marker");
        ann.send(marker);
        for (String node : List.of(a, l, b)) {
            awaitLine(node, "the marker", chat("marker"));
            List<JsonNode> all = lines(node);
            assertThat(all).as(node).noneMatch(x -> x.path("ty").asText().endsWith("_snapshot")
                    || "channel_result".equals(x.path("ty").asText()));
            boolean bobJoinedHere = all.stream().anyMatch(x -> "presence_update".equals(x.path("ty").asText())
                    && x.toString().contains("\"bob\""));
            assertThat(bobJoinedHere).as("bob's presence line on " + node).isEqualTo(node.equals(b));
        }
    }
}
