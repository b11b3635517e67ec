package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A node whose clock runs ahead of the leader's takes fresh decisions for old ones and does not
 * announce them to its connections (docs/mesh.md): that is counted, so it is not silent.
 */
class MeshUnannouncedTest {
    private static final double SKEW = 20.0; // node n<i>'s clock runs i × 20 s ahead of the real one

    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void close() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aNodeWhoseClockIsAheadOfTheLeadersCountsTheRecordsItDoesNotAnnounce() throws Exception {
        cluster = new TestCluster(dir, 3, false, SKEW);
        MeshNode leader = cluster.awaitLeader();
        Outcome o = leader.actor().submit(Mutation.of(MeshReplicationTest.claim("p/a", "U1"))).get(30, TimeUnit.SECONDS);
        assertThat(o).isInstanceOf(Outcome.Decided.class);
        cluster.awaitApplied(leader.status().appliedSeq());
        int leaderIndex = index(leader);
        for (MeshNode n : cluster.running()) {
            if (n == leader) {
                continue;
            }
            boolean ahead = (index(n) - leaderIndex) * SKEW > 6.6; // beyond 2 × commit timeout (3 s) + election timeout
            if (ahead) {
                TestCluster.await(n.nodeId() + " counts what it did not announce", () -> n.unannouncedRecords() > 0);
            } else {
                assertThat(n.unannouncedRecords()).as(n.nodeId() + " is behind the leader's clock: it announces")
                        .isZero();
            }
        }
    }

    private static int index(MeshNode n) {
        return Integer.parseInt(n.nodeId().substring(1));
    }
}
