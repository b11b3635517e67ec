package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.AuditRecordCommand;
import dev.synapsehub.core.governance.NamespaceGovernance;
import dev.synapsehub.core.governance.Partition;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * With --multihub-watch, the unresolved partitions and quarantines are part of the replicated
 * state (issue 12/13): every node applies them from the committed records, a snapshot carries
 * them, and a claim in a governed namespace left partitioned is refused where the leader's actor
 * decides it, whichever node it came through and whether or not that node has applied the
 * record yet. The records are written here as the cluster watch writes them (the leader's actor
 * journals each as an audit record); the watch itself is pinned by hub-cli's
 * {@code MeshWatchCliTest} and hub-federation's {@code ClusterWatchTest}.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class MeshGovernanceTest {
    private static final Map<String, String> OWNERS = Map.of("proj", "hub-m");
    private static final String PARTITION = "{\"namespace\":\"proj\",\"local_hub_id\":\"hub-m\","
            + "\"owner_hub_id\":\"hub-m\",\"contesting_hubs\":[\"hub-b\"],\"outcome\":\"partitioned\","
            + "\"transition\":\"entered\"}";
    private static final String HEAL = "{\"namespace\":\"proj\",\"local_hub_id\":\"hub-m\",\"owner_hub_id\":\"hub-m\","
            + "\"previous_contesting_hubs\":[\"hub-b\"],\"outcome\":\"local\",\"observation_refreshed\":true}";
    private static final String EQUIVOCATION = "{\"peer_id\":\"hub-b\",\"peer_id_sha256\":\"x\",\"peer_id_truncated\":false,"
            + "\"seq\":7,\"accepted_fingerprint\":\"sha256:aa\",\"conflicting_fingerprint\":\"sha256:bb\","
            + "\"detected_at\":1.5,\"status\":\"quarantined\"}";

    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aPartitionRecordedOnTheLeaderRefusesAClaimThroughAFollowerAtOnceAndAHealGrantsAgain() throws Exception {
        cluster = TestCluster.governing(dir, 3, MeshCompaction.DEFAULTS, OWNERS);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        assertThat(decided(follower, "proj/ann", "P-0").granted()).as("nothing contests proj yet").isTrue();

        record(leader, "multihub_partition", PARTITION);
        // at once, through the follower: it may not have applied the record yet, the leader has
        Reply refused = decided(follower, "proj/bob", "P-1");
        assertThat(refused).isInstanceOf(Reply.Denied.class);
        Reply.Denied denied = (Reply.Denied) refused;
        assertThat(denied.refusal()).isEqualTo(Refusal.PARTITIONED);
        assertThat(denied.holder()).as("the owner hub, for the ownership refusal").isEqualTo("hub-m");
        assertThat(decided(leader, "proj/cy", "P-2")).isInstanceOf(Reply.Denied.class);
        assertThat(decided(follower, "lab/dee", "L-1").granted()).as("a namespace the cluster does not govern")
                .isTrue();
        for (MeshNode n : cluster.running()) {
            TestCluster.await(n.nodeId() + " applied the partition", () -> partitions(n).containsKey("proj"));
        }

        record(leader, "multihub_heal", HEAL);
        assertThat(decided(follower, "proj/bob", "P-3").granted()).as("healed").isTrue();
        for (MeshNode n : cluster.running()) {
            TestCluster.await(n.nodeId() + " applied the heal", () -> partitions(n).isEmpty());
        }
    }

    @Test
    void aNewLeaderAfterTheLeaderStopsKeepsThePartitionAndRefuses() throws Exception {
        cluster = TestCluster.governing(dir, 3, MeshCompaction.DEFAULTS, OWNERS);
        MeshNode leader = cluster.awaitLeader();
        record(leader, "multihub_partition", PARTITION);
        cluster.stop(leader.nodeId());

        MeshNode next = cluster.awaitLeader();
        assertThat(next.nodeId()).isNotEqualTo(leader.nodeId());
        for (MeshNode n : cluster.running()) {
            Reply r = decided(n, "proj/eve-" + n.nodeId(), "N-" + n.nodeId());
            assertThat(r).as("through " + n.nodeId()).isInstanceOf(Reply.Denied.class);
            assertThat(((Reply.Denied) r).refusal()).isEqualTo(Refusal.PARTITIONED);
        }
    }

    @Test
    void aNodeThatInstalledASnapshotHoldsThePartitionAndTheQuarantineAndRefusesOnceItLeads() throws Exception {
        cluster = TestCluster.governing(dir, 3, new MeshCompaction(8, 8 << 10), OWNERS);
        MeshNode leader = cluster.awaitLeader();
        MeshNode lagging = cluster.follower(leader);
        String id = lagging.nodeId();
        assertThat(decided(leader, "proj/ann", "S-0").granted()).isTrue();
        cluster.awaitApplied(leader.status().appliedSeq());
        long downAt = lagging.status().appliedIndex();
        cluster.stop(id);

        record(leader, "multihub_partition", PARTITION);
        record(leader, "multihub_equivocation", EQUIVOCATION);
        long seq = 0;
        for (int i = 0; i < 40; i++) { // enough records for the leader to compact past both
            seq = grant(leader, "lab/filler", "F-" + i);
        }
        TestCluster.await("the leader compacted past the lagging node", () ->
                leader.snapshotStatus().logStartIndex() > downAt + 3);
        MeshNode back = cluster.start(id);
        long through = seq;
        TestCluster.await("the lagging node catches up", () -> back.status().appliedSeq() >= through);
        assertThat(back.snapshotStatus().loadedIndex()).as("it installed the leader's snapshot")
                .isGreaterThan(downAt + 3);
        assertThat(partitions(back)).containsOnlyKeys("proj");
        assertThat(partitions(back).get("proj").contestingHubs()).containsExactly("hub-b");
        assertThat(governance(back).quarantines()).containsOnlyKeys("hub-b");
        assertThat(back.actor().committedQuarantines()).as("the edge's view (/health)").containsExactly("hub-b");

        MeshAdmin.transferLeader(cluster.peers(), id, Duration.ofSeconds(60));
        TestCluster.await(id + " decides", () -> back.status().leading() && back.site().decidesHere());
        for (MeshNode n : cluster.running()) {
            Reply r = decided(n, "proj/gus-" + n.nodeId(), "G-" + n.nodeId());
            assertThat(r).as("through " + n.nodeId() + ", decided by " + id).isInstanceOf(Reply.Denied.class);
            assertThat(((Reply.Denied) r).refusal()).isEqualTo(Refusal.PARTITIONED);
        }
    }

    private static void record(MeshNode node, String kind, String payload) throws Exception {
        Outcome o = submit(node, Mutation.of(new AuditRecordCommand("hub-m", kind, payload)));
        assertThat(o).as(kind).isInstanceOf(Outcome.Decided.class);
    }

    /** The reply to a claim of {@code task} by {@code agent} through {@code node} (asked again while undecided). */
    private static Reply decided(MeshNode node, String agent, String task) throws Exception {
        TestEdge.Verb verb = new TestEdge.Verb("claim");
        Idempotency key = new Idempotency(Idempotency.key(agent, "claim", task), "digest-" + task,
                TestEdge.renderer(verb));
        Outcome o = null;
        for (int attempt = 0; attempt < 10 && !(o instanceof Outcome.Decided); attempt++) {
            o = submit(node, new Mutation(claim(agent, task), key, verb));
            assertThat(o).as("a retry that finds the first answer: not expected of a fresh task")
                    .isNotInstanceOf(Outcome.Replayed.class);
        }
        assertThat(o).as(agent + " " + task).isInstanceOf(Outcome.Decided.class);
        return ((Outcome.Decided) o).reply();
    }

    private static long grant(MeshNode node, String agent, String task) throws Exception {
        Outcome o = null;
        for (int attempt = 0; attempt < 10 && !(o instanceof Outcome.Decided); attempt++) {
            o = submit(node, Mutation.of(claim(agent, task)));
        }
        assertThat(o).as(task).isInstanceOf(Outcome.Decided.class);
        assertThat(((Outcome.Decided) o).reply().granted()).as(task).isTrue();
        return OutcomeCodec.lastSeq(o);
    }

    private static NamespaceGovernance.Image governance(MeshNode node) throws Exception {
        return node.actor().read(s -> s.governance().image()).get(10, TimeUnit.SECONDS);
    }

    private static Map<String, Partition> partitions(MeshNode node) {
        try {
            Map<String, Partition> out = new java.util.TreeMap<>();
            List<Partition> list = governance(node).partitions();
            list.forEach(p -> out.put(p.namespace(), p));
            return out;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
