package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.command.ChannelCommand;
import dev.synapsehub.core.event.ChannelEvent;
import dev.synapsehub.core.event.ChatEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Private channels on a mesh (wire contract A1; docs/mesh.md, "Identity pins and private
 * channels on a mesh"): created, joined and left through any node (strong writes decided by
 * the leader), a member's channel chat reaches the members bound to every node and nobody else,
 * and every node keeps the same channel history, also after a restart and a snapshot install;
 * without a quorum a channel change is a queued intent, reconciled when the quorum returns.
 */
class MeshChannelTest {
    static final Duration WAIT = Duration.ofSeconds(30);

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

    private HubClient agent(String node, String name) throws Exception {
        HubClient c = HubClient.connect(cluster.uri(node), WAIT);
        clients.add(c);
        c.register(name, null, WAIT);
        // bound once its own presence arrives (the welcome of an open hub comes before binding)
        c.await(f -> "presence_update".equals(f.path("type").asText()) && name.equals(f.path("agent").asText()), WAIT);
        return c;
    }

    private static JsonNode verb(HubClient c, String type, String channel, String invitee) throws Exception {
        ObjectNode f = c.frame(type);
        f.put("channel", channel);
        if (invitee != null) {
            f.put("invitee", invitee);
        }
        c.send(f);
        return c.awaitType("channel_result", WAIT);
    }

    private static void assertOk(JsonNode result, String payload) {
        assertThat(result.path("payload").asText()).isEqualTo(payload);
        assertThat(result.path("ok").asBoolean()).as(payload).isTrue();
    }

    private static void say(HubClient c, String channel, String text) {
        ObjectNode f = c.frame("chat");
        f.put("target", "all");
        if (channel != null) {
            f.put("channel", channel);
        }
        f.put("payload", text);
        c.send(f);
    }

    private static ObjectNode heard(HubClient c, String text) throws Exception {
        return c.await(f -> "chat".equals(f.path("type").asText()) && text.equals(f.path("payload").asText()), WAIT);
    }

    /**
     * Waits for the public {@code marker} chat sent after {@code secret}: both commit in that
     * order and each node publishes in commit order, so a socket that got the marker without
     * the secret never gets it.
     */
    private static void neverHeard(HubClient c, String secret, String marker) throws Exception {
        heard(c, marker);
        assertThat(c.received()).as(c.name() + " must not get " + secret)
                .noneMatch(f -> secret.equals(f.path("payload").asText()));
    }

    private static List<String> history(HubClient c, String channel) throws Exception {
        ObjectNode f = c.frame("channel_history_request");
        f.put("channel", channel);
        c.send(f);
        JsonNode h = c.awaitType("channel_history", WAIT);
        List<String> out = new ArrayList<>();
        h.path("messages").forEach(m -> out.add(m.path("msg_id").asText() + ":" + m.path("payload").asText()));
        return out;
    }

    @Test
    void aChannelMadeThroughAnyNodeCarriesChatToItsMembersOnEveryNodeAndToNobodyElse() throws Exception {
        assertThat(WriteClass.of(new ChannelEvent(1, ChannelCommand.Op.JOIN, "ops", "bob", null, null)))
                .as("membership is a strong write").isEqualTo(WriteClass.STRONG);
        assertThat(WriteClass.of(new ChatEvent(1, 1, "ann", "all", "ops", false, List.of(), "{}")))
                .as("channel chat is append-only, like other chats").isEqualTo(WriteClass.APPEND_ONLY);
        cluster = new TestCluster(dir, 3, true);
        MeshNode leader = cluster.awaitLeader();
        String a = cluster.follower(leader).nodeId();
        String l = leader.nodeId();
        String b = cluster.running().stream().map(MeshNode::nodeId).filter(id -> !id.equals(a) && !id.equals(l))
                .findFirst().orElseThrow();
        HubClient ann = agent(a, "ann"); // the owner, on a follower
        HubClient bob = agent(b, "bob"); // a member on the other follower
        HubClient cat = agent(l, "cat"); // a member on the leader, who leaves later
        HubClient eve = agent(b, "eve"); // never invited, beside bob
        HubClient dan = agent(l, "dan"); // invited, never joins

        assertOk(verb(ann, "channel_create", "ops", null), "created channel 'ops'");
        for (String who : List.of("bob", "cat", "dan")) {
            assertOk(verb(ann, "channel_invite", "ops", who), "invited '" + who + "' to 'ops'");
        }
        JsonNode joined = verb(bob, "channel_join", "ops", null);
        assertOk(joined, "joined 'ops'");
        assertThat(joined.path("members").toString()).isEqualTo("[\"ann\",\"bob\"]");
        assertThat(verb(bob, "channel_join", "ops", null).path("payload").asText())
                .as("decided on the leader's state, whichever node asks").isEqualTo("already a member of 'ops'");
        assertThat(verb(cat, "channel_join", "ops", null).path("members").toString())
                .isEqualTo("[\"ann\",\"bob\",\"cat\"]");
        assertThat(verb(eve, "channel_join", "ops", null).path("payload").asText())
                .isEqualTo("cannot join 'ops': no such channel or you were not invited");

        say(ann, "ops", "m1");
        say(ann, null, "after-m1");
        assertThat(heard(bob, "m1").path("channel").asText()).isEqualTo("ops");
        assertThat(heard(cat, "m1").path("sender").asText()).isEqualTo("ann");
        neverHeard(eve, "m1", "after-m1");
        neverHeard(dan, "m1", "after-m1");

        say(bob, "ops", "m2"); // from the other follower
        heard(ann, "m2");
        heard(cat, "m2");

        say(eve, "ops", "intruder"); // a non-member is refused and nothing is delivered
        JsonNode refused = eve.await(f -> "error".equals(f.path("type").asText()), WAIT);
        assertThat(refused.path("payload").asText()).isEqualTo("not a member of channel 'ops'");
        assertThat(refused.path("channel").asText()).isEqualTo("ops");

        assertOk(verb(cat, "channel_leave", "ops", null), "left 'ops'");
        say(ann, "ops", "m3");
        say(ann, null, "after-m3");
        heard(bob, "m3");
        neverHeard(cat, "m3", "after-m3");
        neverHeard(bob, "intruder", "after-m3");

        // History is each node's applied state, and a read is answered by the node it reaches
        // without waiting for writes in flight (staleness is allowed, seed 001 §12): ann's node
        // holds m3 once it applied it, which its echo of the later after-m3 to ann proves.
        heard(ann, "after-m3");
        List<String> expected = history(ann, "ops");
        assertThat(expected).hasSize(3);
        assertThat(expected.stream().map(m -> m.substring(m.indexOf(':') + 1)).toList())
                .containsExactly("m1", "m2", "m3");
        assertThat(history(bob, "ops")).as("the same history on another node").isEqualTo(expected);
        eve.send(eve.frame("channel_history_request").put("channel", "ops"));
        assertThat(eve.awaitType("channel_result", WAIT).path("payload").asText())
                .isEqualTo("not a member of channel 'ops'");
        cat.send(cat.frame("channel_list_request"));
        assertThat(cat.awaitType("channel_list", WAIT).path("channels").toString()).isEqualTo("[]");

        cluster.stop(b);
        cluster.start(b);
        long seq = leader.status().appliedSeq();
        TestCluster.await("the restarted node caught up", () -> cluster.node(b).status().appliedSeq() >= seq);
        HubClient bobAgain = agent(b, "bob");
        assertThat(history(bobAgain, "ops")).as("after a restart").isEqualTo(expected);
        say(ann, "ops", "m4");
        heard(bobAgain, "m4");
    }

    private static boolean member(MeshNode node, String channel, String agent) {
        try {
            return node.actor().read(s -> s.channels().isMember(channel, agent)).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static ObjectNode reconciled(HubClient c) throws Exception {
        return c.await(f -> "intent_reconciled".equals(f.path("type").asText()), Duration.ofSeconds(60));
    }

    @Test
    void channelChangesWithoutAQuorumAreQueuedGrantNothingAndAreReconciledWhenItReturns() throws Exception {
        cluster = new TestCluster(dir, 3, true);
        MeshNode leader = cluster.awaitLeader();
        MeshNode taker = cluster.follower(leader);
        HubClient ann = agent(taker.nodeId(), "ann");
        HubClient bob = agent(taker.nodeId(), "bob");
        assertOk(verb(ann, "channel_create", "ops", null), "created channel 'ops'");
        assertOk(verb(ann, "channel_invite", "ops", "bob"), "invited 'bob' to 'ops'");
        List<String> others = cluster.running().stream().map(MeshNode::nodeId)
                .filter(id -> !id.equals(taker.nodeId())).toList();
        for (String id : others) {
            cluster.stop(id);
        }

        bob.send(bob.frame("channel_join").put("channel", "ops"));
        ObjectNode queued = bob.await(f -> "error".equals(f.path("type").asText()), WAIT);
        assertThat(queued.path("error_code").asText()).isEqualTo("queued");
        String joinIntent = taker.intents().queue().queued().get(0).intentId();
        assertThat(queued.path("payload").asText()).contains(joinIntent).contains("grants nothing");
        ann.send(ann.frame("channel_create").put("channel", "ops")); // exists: a conflict once replayed
        assertThat(ann.await(f -> "error".equals(f.path("type").asText()), WAIT).path("error_code").asText())
                .isEqualTo("queued");
        assertThat(member(taker, "ops", "bob")).as("a queued join grants nothing").isFalse();
        assertThat(taker.intents().queue().queued()).extracting(QueuedIntent::entityType)
                .containsExactly("channel_join", "channel_create");

        for (String id : others) {
            cluster.start(id);
        }
        ObjectNode joined = reconciled(bob);
        assertThat(joined.path("intent_id").asText()).isEqualTo(joinIntent);
        assertThat(joined.path("outcome").asText()).isEqualTo("applied");
        assertThat(joined.path("entity_type").asText()).isEqualTo("channel_join");
        assertThat(joined.path("task_id").asText()).as("the entity id: the channel").isEqualTo("ops");
        ObjectNode created = reconciled(ann);
        assertThat(created.path("outcome").asText()).isEqualTo("conflict_requires_merge");
        assertThat(created.path("detail").asText()).isEqualTo("channel_result: channel 'ops' already exists");
        TestCluster.await("bob is a member on every node",
                () -> cluster.running().stream().allMatch(n -> member(n, "ops", "bob")));
        say(ann, "ops", "welcome");
        heard(bob, "welcome");
    }

    @Test
    void aChannelMadeWhileANodeWasDownReachesItBySnapshotInstallWithItsHistory() throws Exception {
        cluster = new TestCluster(dir, 3, true, 0, new MeshCompaction(8, 8 << 10)); // compacts after a few dozen
        String lagging = cluster.follower(cluster.awaitLeader()).nodeId();
        long downAt = cluster.node(lagging).status().appliedIndex();
        cluster.stop(lagging); // it may have become the leader meanwhile: wait for the election to settle
        MeshNode leader = cluster.awaitLeader();
        TestCluster.await("both running nodes know the leader", () -> cluster.running().stream()
                .allMatch(n -> leader.nodeId().equals(n.status().leaderId())));
        HubClient ann = agent(leader.nodeId(), "ann");

        assertOk(verb(ann, "channel_create", "ops", null), "created channel 'ops'");
        assertOk(verb(ann, "channel_invite", "ops", "bob"), "invited 'bob' to 'ops'");
        for (int i = 0; i < 60 && leader.snapshotStatus().logStartIndex() <= downAt + 1; i++) {
            say(ann, "ops", "c" + i); // no other member is bound: recorded in the history only
            say(ann, null, "p" + i);
            heard(ann, "p" + i); // the sender's echo of its public chat: both committed
        }
        TestCluster.await("the leader compacted past the lagging node",
                () -> leader.snapshotStatus().logStartIndex() > downAt + 1);
        List<String> expected = history(ann, "ops");
        assertThat(expected).isNotEmpty();

        MeshNode back = cluster.start(lagging);
        long seq = leader.status().appliedSeq();
        TestCluster.await("the lagging node catches up", () -> back.status().appliedSeq() >= seq);
        assertThat(back.snapshotStatus().loadedIndex()).as("it installed the leader's snapshot")
                .isGreaterThan(downAt + 1);
        HubClient bob = agent(lagging, "bob");
        assertOk(verb(bob, "channel_join", "ops", null), "joined 'ops'");
        assertThat(history(bob, "ops")).as("the history the snapshot carried").isEqualTo(expected);
        say(ann, "ops", "hello bob");
        heard(bob, "hello bob");
    }
}
