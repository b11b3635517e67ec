package dev.synapsehub.mesh;

import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Raft election settings a node runs with. A leader that steps down (no majority heard within
 * the election timeout) may stand again after the election timeout, not after Ratis' default 10 s:
 * with two survivors of a leader kill the other cannot be elected without its vote, and the 10 s
 * wait stalled the mesh about 11 s after each such step-down in the leader-kill benchmark.
 */
class MeshElectionSettingsTest {
    @Test
    void aLeaderThatStepsDownMayStandAgainAfterTheElectionTimeoutNotTenSeconds() {
        MeshConfig config = new MeshConfig("n1", List.of(new MeshPeer("n1", "127.0.0.1", 1),
                new MeshPeer("n2", "127.0.0.1", 2), new MeshPeer("n3", "127.0.0.1", 3)), Path.of("unused"),
                Duration.ofSeconds(5), Duration.ofMillis(400), Duration.ofMillis(800));
        RaftProperties p = MeshNode.properties(config);
        assertThat(RaftServerConfigKeys.LeaderElection.leaderStepDownWaitTime(p).toLong(TimeUnit.MILLISECONDS))
                .isEqualTo(800);
        assertThat(RaftServerConfigKeys.Rpc.timeoutMin(p).toLong(TimeUnit.MILLISECONDS)).isEqualTo(400);
        assertThat(RaftServerConfigKeys.Rpc.timeoutMax(p).toLong(TimeUnit.MILLISECONDS)).isEqualTo(800);
        assertThat(RaftServerConfigKeys.LeaderElection.LEADER_STEP_DOWN_WAIT_TIME_DEFAULT.toLong(TimeUnit.SECONDS))
                .as("Ratis' own default, which this overrides").isEqualTo(10);
    }
}
