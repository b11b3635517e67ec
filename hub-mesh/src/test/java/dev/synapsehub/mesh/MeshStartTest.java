package dev.synapsehub.mesh;

import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The start probe of a node with empty storage ({@link MeshStart}) without a running mesh: what a
 * peer answers while it cannot tell, which status reports it asks about, its bound, and a stop.
 */
class MeshStartTest {
    @TempDir
    Path dir;
    /** Peers that accept a connection and never answer (a host too loaded to): each ask waits its whole timeout. */
    private final List<ServerSocket> silent = new ArrayList<>();

    @AfterEach
    void close() throws IOException {
        for (ServerSocket s : silent) {
            s.close();
        }
    }

    @Test
    void aPeerThatHasNotAppliedItsLogCannotTellAndOnlyOneThatHoldsItAnswersNone() {
        assertThat(MeshStart.appliedIndex(MeshStart.answer(0, false))).as("restarted, still replaying").isNull();
        assertThat(MeshStart.appliedIndex(MeshStart.answer(0, true))).isZero();
        assertThat(MeshStart.appliedIndex(MeshStart.answer(7, false))).as("a record it holds is known").isEqualTo(7);
    }

    @Test
    void aPeerWhoseCommitIndexOrLogIsPastTheFirstEntryIsAskedThoughItHasAppliedNothing() {
        assertThat(MeshStart.mayHoldRecords(report(-1, -1, -1))).as("nothing in its log").isFalse();
        assertThat(MeshStart.mayHoldRecords(report(0, 0, 0))).as("the first leader's configuration").isFalse();
        assertThat(MeshStart.mayHoldRecords(report(5, 0, 5))).as("restarted: log and commit back, not applied")
                .isTrue();
        assertThat(MeshStart.mayHoldRecords(report(0, 0, 3))).as("entries it has not committed yet").isTrue();
        assertThat(MeshStart.mayHoldRecords(report(3, 3, 3))).isTrue();
    }

    @Test
    void aFounderOnEmptyStorageWhosePeersAreSilentIsRefusedUnlessItIsBootstrapping() throws Exception {
        MeshConfig config = config(2);
        assertThatThrownBy(() -> MeshStart.serverGroup(config, group(config), () -> false, Duration.ofSeconds(1)))
                .isInstanceOf(MeshFoundingUnconfirmed.class)
                .hasMessageContaining("mesh node n1 holds no Raft configuration")
                .hasMessageContaining("0 of the voters [n1, n2, n3] did, 2 must")
                .hasMessageContaining("--mesh-bootstrap");
        assertThat(MeshStart.unverifiedMarker(config.storageDir())).as("a refused start writes nothing").doesNotExist();

        MeshConfig bootstrapping = config.withBootstrap(true);
        RaftGroup group = MeshStart.serverGroup(bootstrapping, group(bootstrapping), () -> false, Duration.ofSeconds(1));
        assertThat(group.getPeers()).as("the first start of a new mesh founds it").hasSize(3);
        assertThat(MeshStart.unverifiedMarker(config.storageDir())).as("checked again at its next start").exists();
    }

    @Test
    void enoughVotersMustConfirmThatOneHoldingACommitWouldBeAmongThem() {
        // a commit is on a quorum; the node asking may be one of them (its storage lost): the others holding it are
        // at least quorum - 1, so voters - quorum + 1 answers reach one of them
        assertThat(MeshStart.needed(2)).isEqualTo(1);
        assertThat(MeshStart.needed(3)).isEqualTo(2);
        assertThat(MeshStart.needed(4)).isEqualTo(2);
        assertThat(MeshStart.needed(5)).isEqualTo(3);
        assertThat(MeshStart.needed(7)).isEqualTo(4);
    }

    @Test
    void onlyAPeerEveryAnsweringVoterListNamesCountsAsConfirming() {
        // n4 was removed while it was down: it still holds the old list, and would make itself a fourth voter
        MeshProbe.PeerReport stale = new MeshProbe.PeerReport("n4", "127.0.0.1:4", null, "FOLLOWER", null, 1, 0, 0, 0,
                -1, true, List.of("n1", "n2", "n3", "n4"));
        MeshProbe.PeerReport current = new MeshProbe.PeerReport("n1", "127.0.0.1:1", null, "FOLLOWER", null, 1, 0, 0,
                0, -1, true, List.of("n1", "n2", "n3"));
        assertThat(MeshStart.confirming(List.of(stale, current))).containsExactly("n1");
        assertThat(MeshStart.confirming(List.of(current))).containsExactly("n1");
        assertThat(MeshStart.confirming(List.of(stale))).containsExactly("n4");
    }

    @Test
    void theProbeOfPeersThatNeverAnswerEndsWithinItsBound() throws Exception {
        MeshConfig config = config(4).withBootstrap(true); // four silent peers: 8 s at 2 s each without the bound
        long started = System.nanoTime();
        RaftGroup group = MeshStart.serverGroup(config, group(config), () -> false, Duration.ofSeconds(1));
        long took = Duration.ofNanos(System.nanoTime() - started).toMillis();
        assertThat(group.getPeers()).as("no peer answered: a founder starts with its peers").hasSize(5);
        assertThat(took).as("the probe's bound, with room for a loaded host").isLessThan(3_500);
        assertThat(MeshStart.PROBE_CAP).as("within the stop hook's 10 s wait, with time to close")
                .isLessThanOrEqualTo(Duration.ofSeconds(8));
    }

    @Test
    void aStopOrAnInterruptEndsTheProbeAsAStopNotAsARefusalOrAStart() throws Exception {
        MeshConfig config = config(2);
        assertThatThrownBy(() -> MeshStart.serverGroup(config, group(config), () -> true))
                .isInstanceOf(InterruptedIOException.class).isNotInstanceOf(MeshRejoinRefused.class);
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> MeshStart.serverGroup(config, group(config), () -> false))
                    .isInstanceOf(InterruptedIOException.class);
        } finally {
            Thread.interrupted();
        }
    }

    private static MeshProbe.PeerReport report(long commit, long applied, long last) {
        return new MeshProbe.PeerReport("n2", "127.0.0.1:1", null, "FOLLOWER", "n3", 1, commit, applied, last, -1,
                true, List.of("n1", "n2", "n3"));
    }

    private MeshConfig config(int others) throws IOException {
        List<MeshPeer> peers = new ArrayList<>();
        int self;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            self = free.getLocalPort();
        }
        peers.add(new MeshPeer("n1", "127.0.0.1", self));
        for (int i = 0; i < others; i++) {
            ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            silent.add(s);
            peers.add(new MeshPeer("n" + (i + 2), "127.0.0.1", s.getLocalPort()));
        }
        return MeshConfig.of("n1", peers, dir.resolve("n1.db.raft"));
    }

    private static RaftGroup group(MeshConfig config) {
        return RaftGroup.valueOf(RaftGroupId.valueOf(config.groupId()), config.peers().stream()
                .map(p -> RaftPeer.newBuilder().setId(p.id()).setAddress(p.address()).build()).toList());
    }
}
