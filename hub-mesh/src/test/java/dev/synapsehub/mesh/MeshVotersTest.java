package dev.synapsehub.mesh;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A running node's voter count and quorum follow the Raft configuration it holds now, not the
 * peers it was started with: after {@code mesh add-node} the three founding nodes report four
 * voters and quorum 3; after {@code mesh remove-node} the node started with four peers reports
 * three voters and quorum 2 (status, /metrics).
 */
class MeshVotersTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** The node's /metrics figures, as MeshFace writes them. */
    private static String metrics(MeshNode node) {
        StringBuilder out = new StringBuilder();
        new MeshFace(node).appendMetrics(out);
        return out.toString();
    }

    private static boolean reports(MeshNode node, int voters, int quorum) {
        String m = metrics(node);
        return node.voters().count() == voters && !node.voters().changing() && node.status().quorum() == quorum
                && m.contains("\nsynapse_mesh_voters " + voters + "\n") && m.contains("\nsynapse_mesh_quorum " + quorum + "\n")
                && m.contains("\nsynapse_mesh_membership_changing 0\n");
    }

    @Test
    void voterCountAndQuorumFollowAddNodeAndRemoveNode() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        List<MeshPeer> three = List.copyOf(leader.config().peers());
        for (MeshNode n : cluster.running()) {
            TestCluster.await(n.nodeId() + " reports 3 voters, quorum 2", () -> reports(n, 3, 2));
            assertThat(n.voters().current()).containsExactly("n1", "n2", "n3");
        }

        MeshPeer added = cluster.addPeer("n4");
        cluster.start("n4");
        MeshMembership.addNode(three, added, TIMEOUT);
        for (MeshNode n : cluster.running()) {
            // the founding nodes were started with three peers: only the configuration says four
            TestCluster.await(n.nodeId() + " reports 4 voters, quorum 3", () -> reports(n, 4, 3));
            assertThat(n.voters().current()).containsExactly("n1", "n2", "n3", "n4");
        }
        // mesh status asked with the founding list still counts the voters the mesh has
        List<MeshProbe.PeerReport> stale = MeshProbe.probe(three, Duration.ofSeconds(5));
        assertThat(stale).allMatch(r -> r.voters().equals(List.of("n1", "n2", "n3", "n4")));
        assertThat(MeshProbe.currentVoters(stale, three)).containsExactly("n1", "n2", "n3", "n4");

        List<MeshPeer> four = new ArrayList<>(three);
        four.add(added);
        String removed = three.stream().map(MeshPeer::id).filter(id -> !id.equals(leader.nodeId())).findFirst()
                .orElseThrow();
        MeshMembership.removeNode(four, removed, TIMEOUT);
        cluster.stop(removed);
        cluster.removePeer(removed);
        MeshNode fourth = cluster.node("n4");
        assertThat(fourth.config().peers()).as("n4 was started with four peers").hasSize(4);
        for (MeshNode n : cluster.running()) {
            TestCluster.await(n.nodeId() + " reports 3 voters, quorum 2", () -> reports(n, 3, 2));
            assertThat(n.voters().current()).doesNotContain(removed).contains("n4").hasSize(3);
        }
        List<MeshProbe.PeerReport> after = MeshProbe.probe(four, Duration.ofSeconds(5));
        assertThat(MeshProbe.currentVoters(after, four)).as("the removed, stopped node answers nothing")
                .hasSize(3).doesNotContain(removed).contains("n4");
    }

    private static MeshProbe.PeerReport answered(String id, String leader, List<String> voters) {
        return new MeshProbe.PeerReport(id, "127.0.0.1:1", null, "FOLLOWER", leader, 1, 1, 1, 1, -1, true, voters);
    }

    @Test
    void theVotersMostAnswersNameWinTheLeaderBreaksATieAndNoAnswerFallsBackToTheListAsked() {
        List<MeshPeer> asked = List.of(new MeshPeer("n2", "127.0.0.1", 2), new MeshPeer("n1", "127.0.0.1", 1));
        MeshProbe.PeerReport down = new MeshProbe.PeerReport("n1", "127.0.0.1:1", "unreachable", null, null, -1, -1, -1,
                -1, -1, false, List.of());
        assertThat(MeshProbe.currentVoters(List.of(down), asked)).containsExactly("n1", "n2");
        List<String> old = List.of("n1", "n2", "n3");
        List<String> grown = List.of("n1", "n2", "n3", "n4");
        assertThat(MeshProbe.currentVoters(List.of(answered("n1", "n2", old), answered("n2", "n2", grown)), asked))
                .as("a tie: the leader's view").isEqualTo(grown);
        assertThat(MeshProbe.currentVoters(List.of(answered("n1", "n3", old), answered("n2", "n3", old),
                answered("n4", "n3", grown)), asked)).isEqualTo(old);
    }
}
