package dev.synapsehub.mesh;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.mesh.HistoryChecker.LogEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Five nodes, agents on each under a keyed load (every request carries an idem_key), and the
 * leader killed twice without bringing it back in between: the three survivors are still a
 * quorum and keep granting. No acknowledged write is lost, no claim is granted twice, and after
 * both return every node holds the same claims.
 */
class MeshFiveNodeFailoverTest {
    @TempDir
    Path dir;
    private TestCluster cluster;
    private final List<LoadAgent> agents = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        agents.forEach(LoadAgent::stop);
        for (Thread t : threads) {
            t.join(30_000);
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private List<URI> liveUris() {
        List<URI> out = new ArrayList<>();
        for (MeshNode n : cluster.running()) {
            out.add(cluster.uri(n.nodeId()));
        }
        return out;
    }

    @Test
    void killingTwoLeadersOfFiveUnderKeyedLoadLosesNothingAndGrantsNothingTwice() throws Exception {
        cluster = new TestCluster(dir, 5, true);
        cluster.awaitLeader();
        History history = new History();
        for (int i = 0; i < 10; i++) {
            agents.add(new LoadAgent("agent" + i, i / 2, this::liveUris, MeshFailoverTest.TASKS, history, 31L * i + 7,
                    100_000));
        }
        for (int i = 0; i < agents.size(); i += 2) {
            agents.get(i).partner(agents.get(i + 1)); // the same node at first: handoffs need the recipient there
        }
        for (LoadAgent a : agents) {
            Thread t = new Thread(a, a.name);
            threads.add(t);
            t.start();
        }
        long warm = System.nanoTime();
        TestCluster.await("load under way", () -> history.grantedAfter(warm) >= 20);
        List<String> killed = new ArrayList<>();
        for (int k = 0; k < 2; k++) {
            MeshNode leader = cluster.awaitLeader();
            long term = leader.status().term();
            killed.add(leader.nodeId());
            cluster.stop(leader.nodeId());
            long killedAt = System.nanoTime();
            MeshNode next = cluster.awaitLeader();
            assertThat(killed).doesNotContain(next.nodeId());
            assertThat(next.status().term()).as("the next leader leads a later term").isGreaterThan(term);
            TestCluster.await("agents on the survivors keep working after kill " + (k + 1),
                    () -> history.grantedAfter(killedAt) >= 20);
        }
        assertThat(cluster.running()).as("three of five: still a quorum").hasSize(3);
        for (String id : killed) {
            cluster.start(id);
        }
        agents.forEach(LoadAgent::stop);
        for (Thread t : threads) {
            t.join(30_000);
            assertThat(t.isAlive()).isFalse();
        }
        for (LoadAgent a : agents) {
            assertThat(a.failure()).as(a.name).isNull();
        }

        List<History.Op> ops = history.ops();
        long granted = ops.stream().filter(History.Op::granted).count();
        long unknown = ops.stream().filter(o -> o.result() == History.Result.UNKNOWN).count();
        System.out.printf("mesh five-node failover: 2 kills, %d operations, %d granted, %d unknown outcomes%n",
                ops.size(), granted, unknown);
        assertThat(granted).isGreaterThan(40);
        MeshNode reference = cluster.awaitLeader();
        long seq = reference.status().appliedSeq();
        cluster.awaitApplied(seq);
        MeshFailoverTest.assertConsistentWithOneHub(ops, reference);
        List<LogEvent> log = MeshFailoverTest.claimLog(reference);
        assertThat(HistoryChecker.lost(ops, log)).as("every acknowledged grant and release is in the log").isEmpty();
        List<Claim> live = MeshFailoverTest.claims(reference);
        assertThat(cluster.running()).hasSize(5);
        for (MeshNode n : cluster.running()) {
            assertThat(MeshFailoverTest.claims(n)).as("node " + n.nodeId() + " holds the same claims").isEqualTo(live);
        }
    }
}
