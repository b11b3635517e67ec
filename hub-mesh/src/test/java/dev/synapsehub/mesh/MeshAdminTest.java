package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.claims;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code mesh transfer-leader}: leadership moves to the named voter, which then decides. */
class MeshAdminTest {
    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private List<MeshPeer> peers() {
        return cluster.running().get(0).config().peers();
    }

    @Test
    void leadershipMovesToTheNamedVoterWhichThenDecides() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        Outcome before = submit(leader, Mutation.of(claim("tl", "A1")));
        assertThat(((Outcome.Decided) before).reply().granted()).isTrue();
        MeshNode target = cluster.follower(leader);
        long oldTerm = leader.status().term();

        MeshAdmin.Transfer done = MeshAdmin.transferLeader(peers(), target.nodeId(), Duration.ofSeconds(20));

        assertThat(done.from()).isEqualTo(leader.nodeId());
        assertThat(done.to()).isEqualTo(target.nodeId());
        assertThat(done.term()).as("a new lease epoch").isGreaterThan(oldTerm);
        assertThat(cluster.awaitLeader()).isSameAs(target);
        Outcome after = submit(leader, Mutation.of(claim("tl", "A2"))); // the old leader now forwards
        assertThat(((Outcome.Decided) after).reply().granted()).isTrue();
        cluster.awaitApplied(OutcomeCodec.lastSeq(after));
        assertThat(claims(target)).isEqualTo(claims(leader)).hasSize(2);

        MeshAdmin.Transfer again = MeshAdmin.transferLeader(peers(), target.nodeId(), Duration.ofSeconds(20));
        assertThat(again.alreadyLeading()).isTrue();
    }

    /**
     * A hand-over to a voter that does not answer is not asked for: Ratis 3.2.2 fails it at once
     * and then keeps the leader "stepping down" for good, refusing every write (each queued as a
     * no-quorum intent) until some election happens. Asked anyway, this fails now and then.
     */
    @Test
    void aHandOverToAVoterThatDoesNotAnswerIsRefusedAndTheLeaderKeepsDeciding() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        List<MeshPeer> peers = peers();
        MeshNode down = cluster.follower(leader);
        cluster.stop(down.nodeId());
        long term = leader.status().term();

        assertThatThrownBy(() -> MeshAdmin.transferLeader(peers, down.nodeId(), Duration.ofSeconds(5)))
                .isInstanceOf(MeshAdmin.MeshAdminException.class)
                .hasMessageContaining(down.nodeId() + " cannot take the lead now (it does not answer")
                .hasMessageContaining("nothing was changed");

        for (int i = 0; i < 5; i++) { // every write decided at once, none queued behind a hand-over
            Outcome o = submit(leader, Mutation.of(claim("tl", "D" + i)));
            assertThat(o).as(String.valueOf(o)).isInstanceOf(Outcome.Decided.class);
        }
        assertThat(leader.status().leading()).isTrue();
        assertThat(leader.status().term()).isEqualTo(term);
    }

    @Test
    void anUnknownTargetOrNoAgreedLeaderIsRefusedAndNothingMoves() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        long term = leader.status().term();
        assertThatThrownBy(() -> MeshAdmin.transferLeader(peers(), "n9", Duration.ofSeconds(5)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'n9' is not one of");
        assertThat(leader.status().leading()).isTrue();
        assertThat(leader.status().term()).isEqualTo(term);

        List<MeshPeer> peers = peers();
        for (MeshNode n : cluster.running()) {
            if (n != leader) {
                cluster.stop(n.nodeId());
            }
        }
        String target = peers.stream().map(MeshPeer::id).filter(id -> !id.equals(leader.nodeId())).findFirst()
                .orElseThrow();
        assertThatThrownBy(() -> MeshAdmin.transferLeader(peers, target, Duration.ofSeconds(3)))
                .isInstanceOf(MeshAdmin.MeshAdminException.class).hasMessageContaining("nothing was changed");
    }
}
