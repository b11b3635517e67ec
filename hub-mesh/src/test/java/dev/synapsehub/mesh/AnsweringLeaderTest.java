package dev.synapsehub.mesh;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A membership change goes to an agreed leader that answers: a just-stopped one is waited out. */
class AnsweringLeaderTest {
    private static MeshProbe.PeerReport up(String id, String leader) {
        return new MeshProbe.PeerReport(id, "127.0.0.1:1", null, leader == null ? "CANDIDATE" : "FOLLOWER", leader, 2,
                5, 5, 5, -1, true, List.of("n1", "n2", "n3"));
    }

    private static MeshProbe.PeerReport down(String id) {
        return new MeshProbe.PeerReport(id, "127.0.0.1:1", "UNAVAILABLE: io exception", null, null, 0, -1, -1, -1, -1,
                false, List.of());
    }

    @Test
    void aLeaderTheOthersStillNameButThatDoesNotAnswerIsWaitedOutUntilTheyElectAnother() throws Exception {
        Deque<List<MeshProbe.PeerReport>> rounds = new ArrayDeque<>(List.of(
                List.of(up("n1", "n3"), up("n2", "n3"), down("n3")), // n3 just stopped: still named
                List.of(up("n1", null), up("n2", null), down("n3")), // the election
                List.of(up("n1", "n1"), up("n2", "n1"), down("n3"))));
        String leader = MeshMembership.answeringLeader(within -> rounds.size() > 1 ? rounds.poll() : rounds.peek(), 2,
                Duration.ofSeconds(10), Duration.ofMillis(1));
        assertThat(leader).isEqualTo("n1");
        assertThat(rounds).hasSize(1);
    }

    @Test
    void aNamedLeaderThatNeverAnswersIsReportedAsSuchAtTheTimeout() {
        List<MeshProbe.PeerReport> stuck = List.of(up("n1", "n3"), up("n2", "n3"), down("n3"));
        assertThatThrownBy(() -> MeshMembership.answeringLeader(within -> stuck, 2, Duration.ofMillis(50),
                Duration.ofMillis(5)))
                .isInstanceOf(MeshAdmin.MeshAdminException.class)
                .hasMessageContaining("the voters name n3 as leader, but it does not answer")
                .hasMessageContaining("nothing was changed");
    }

    @Test
    void withNoLeaderAgreedTheChangeIsRefusedAsBefore() {
        List<MeshProbe.PeerReport> split = List.of(up("n1", null), up("n2", null), down("n3"));
        assertThatThrownBy(() -> MeshMembership.answeringLeader(within -> split, 2, Duration.ofMillis(50),
                Duration.ofMillis(5)))
                .isInstanceOf(MeshAdmin.MeshAdminException.class)
                .hasMessage("no leader is agreed by a majority of the voters; nothing was changed");
    }

    @Test
    void aLeaderOutsideTheVotersGivenIsTakenAsNamedForTheConfigurationCheckToRefuseTheList() throws Exception {
        int[] asked = {0};
        String leader = MeshMembership.answeringLeader(within -> {
            asked[0]++;
            return List.of(up("n1", "n3"), up("n2", "n3")); // --mesh-peers n1,n2 while n3 runs and leads
        }, 2, Duration.ofSeconds(10), Duration.ofMillis(1));
        assertThat(leader).isEqualTo("n3");
        assertThat(asked[0]).isEqualTo(1);
    }

    @Test
    void anAnsweringAgreedLeaderIsTakenAtOnce() throws Exception {
        int[] asked = {0};
        String leader = MeshMembership.answeringLeader(within -> {
            asked[0]++;
            return List.of(up("n1", "n2"), up("n2", "n2"), up("n3", "n2"));
        }, 2, Duration.ofSeconds(10), Duration.ofMillis(1));
        assertThat(leader).isEqualTo("n2");
        assertThat(asked[0]).isEqualTo(1);
    }

    @Test
    void eachRoundIsGivenWhatIsLeftOfTheTimeoutSoASilentVoterCannotStretchTheWait() {
        List<Duration> given = new java.util.ArrayList<>();
        List<MeshProbe.PeerReport> stuck = List.of(up("n1", "n3"), up("n2", "n3"), down("n3"));
        assertThatThrownBy(() -> MeshMembership.answeringLeader(within -> {
            given.add(within);
            try {
                Thread.sleep(Math.min(300, within.toMillis())); // a round spent waiting on a voter that never answers
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return stuck;
        }, 2, Duration.ofMillis(1_000), Duration.ofMillis(1))).isInstanceOf(MeshAdmin.MeshAdminException.class);
        assertThat(given).hasSizeGreaterThan(1);
        assertThat(given.get(0)).isLessThanOrEqualTo(Duration.ofMillis(1_000));
        // a round after 300 ms of waiting is given at most the 700 ms left (or the shortest round), never the whole second
        assertThat(given.subList(1, given.size())).allSatisfy(d -> assertThat(d)
                .isLessThanOrEqualTo(Duration.ofMillis(700)));
    }
}
