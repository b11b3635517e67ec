package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.mesh.History.Scope;
import dev.synapsehub.mesh.HistoryChecker.LogEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Slice 3: agents on every node under durable load while the leader is killed again and again.
 * No acknowledged write is lost, no claim is granted twice, the survivors' agents keep working,
 * and the recorded history obeys the single-hub rules. {@code -Pnightly} kills more often.
 */
class MeshFailoverTest {
    private static final int KILLS = Integer.getInteger("mesh.kills", 2);
    static final List<LoadAgent.TaskSpec> TASKS = List.of(
            new LoadAgent.TaskSpec("A", new Scope("w", List.of("src/a"))),
            new LoadAgent.TaskSpec("AB", new Scope("w", List.of("src/a/b"))), // overlaps A
            new LoadAgent.TaskSpec("C", new Scope("w", List.of("src/c"))),
            new LoadAgent.TaskSpec("W", new Scope("w", List.of())), // the whole worktree: overlaps every w task
            new LoadAgent.TaskSpec("X", new Scope("x", List.of())),
            new LoadAgent.TaskSpec("Y", new Scope("y", List.of("lib"))));

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
    void killingTheLeaderUnderLoadLosesNothingAndGrantsNothingTwice() throws Exception {
        cluster = new TestCluster(dir, 3, true);
        cluster.awaitLeader();
        History history = new History();
        for (int i = 0; i < 6; i++) {
            agents.add(new LoadAgent("agent" + i, i / 2, this::liveUris, TASKS, history, 17L * i + 1, 100_000));
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
        for (int k = 0; k < KILLS; k++) {
            MeshNode leader = cluster.awaitLeader();
            String killed = leader.nodeId();
            cluster.stop(killed);
            long killedAt = System.nanoTime();
            MeshNode next = cluster.awaitLeader();
            assertThat(next.nodeId()).isNotEqualTo(killed);
            TestCluster.await("agents on the survivors keep working after kill " + (k + 1),
                    () -> history.grantedAfter(killedAt) >= 20);
            cluster.start(killed);
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
        System.out.printf("mesh failover: %d kills, %d operations, %d granted, %d unknown outcomes%n", KILLS,
                ops.size(), granted, unknown);
        assertThat(granted).isGreaterThan(40);
        MeshNode reference = cluster.awaitLeader();
        long seq = reference.status().appliedSeq();
        cluster.awaitApplied(seq);
        assertConsistentWithOneHub(ops, reference);
        List<LogEvent> log = claimLog(reference);
        assertThat(HistoryChecker.lost(ops, log)).isEmpty();
        List<Claim> live = claims(reference);
        for (MeshNode n : cluster.running()) {
            assertThat(claims(n)).as("node " + n.nodeId() + " holds the same claims").isEqualTo(live);
        }
    }

    @Test
    void fiveNodesCommitWithTwoDownAndGrantNothingWithThreeDown() throws Exception {
        cluster = new TestCluster(dir, 5);
        MeshNode leader = cluster.awaitLeader();
        assertThat(leader.config().quorum()).isEqualTo(3);
        assertThat(granted(leader, "ann", "F1")).isTrue();
        cluster.stop(leader.nodeId()); // the leader and one more: three of five remain
        cluster.stop(cluster.follower(cluster.running().get(0)).nodeId());
        MeshNode next = cluster.awaitLeader();
        assertThat(granted(cluster.follower(next), "bob", "F2")).isTrue();
        assertThat(claims(next)).extracting(Claim::taskId).containsExactlyInAnyOrder("F1", "F2");

        cluster.stop(cluster.follower(next).nodeId()); // two of five: no quorum
        Outcome outcome = next.actor()
                .submit(Mutation.of(MeshReplicationTest.claim("cat", "F3")))
                .get(30, TimeUnit.SECONDS);
        assertThat(outcome).isInstanceOf(Outcome.Refused.class);
        assertThat(claims(next)).extracting(Claim::taskId).doesNotContain("F3");
    }

    @Test
    void aNodeThatCannotApplyACommittedRecordLeavesTheGroupSoItCanNeverLeadWithoutDeciding() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        MeshNode broken = cluster.follower(leader);
        broken.tapApply(() -> {
            throw new IllegalStateException("injected: this node cannot apply");
        });
        assertThat(granted(leader, "p/a", "A1")).isTrue(); // committed with the third node; the broken one fails it
        TestCluster.await("the broken node stops deciding", () -> broken.site().failure() != null);
        assertThatThrownBy(() -> broken.reads().barrier().get(30, TimeUnit.SECONDS))
                .as("a linearizable read on it is refused, never served from its frozen state")
                .hasCauseInstanceOf(dev.synapsehub.core.actor.ActorRefusedException.class);

        // left in its group it could be made leader (or win an election) and then decide nothing: every write queued
        try {
            MeshAdmin.transferLeader(cluster.peers(), broken.nodeId(), java.time.Duration.ofSeconds(5));
        } catch (MeshAdmin.MeshAdminException refused) {
            // expected: it has left, so it cannot take the lead
        }
        MeshNode[] deciding = new MeshNode[1];
        TestCluster.await("a node that decides leads", () -> {
            for (MeshNode n : cluster.running()) {
                if (n != broken && n.status().leading() && n.site().decidesHere()) {
                    deciding[0] = n;
                    return true;
                }
            }
            return false;
        });
        assertThat(broken.status().leading()).isFalse();
        // the refused transfer can leave the leader stepping down for the rest of Ratis' transfer timeout,
        // its writes queued meanwhile; once that passes it decides (a node that never could would queue all)
        List<Outcome> tried = new java.util.ArrayList<>();
        String decided = null;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (decided == null && System.nanoTime() - until < 0) {
            String task = "B" + (tried.size() + 1);
            Outcome o = outcome(deciding[0], "p/b", task);
            tried.add(o);
            if (granted(o)) {
                decided = task;
            } else {
                TimeUnit.MILLISECONDS.sleep(200); // a pause between tries, not a wait for an outcome
            }
        }
        assertThat(decided).as("a claim on the deciding node is decided, not queued: " + tried).isNotNull();
        assertThat(claims(deciding[0])).extracting(Claim::taskId).contains("A1", decided);
    }

    private static boolean granted(MeshNode via, String agent, String task) throws Exception {
        return granted(outcome(via, agent, task));
    }

    private static boolean granted(Outcome o) {
        return o instanceof Outcome.Decided d && d.reply().granted();
    }

    private static Outcome outcome(MeshNode via, String agent, String task) throws Exception {
        return via.actor().submit(Mutation.of(MeshReplicationTest.claim(agent, task))).get(30, TimeUnit.SECONDS);
    }

    static List<Claim> claims(MeshNode n) throws Exception {
        return n.actor().read(s -> s.claims().snapshot(s.claims().now())).get(10, TimeUnit.SECONDS);
    }

    /**
     * No two owners, epochs only grow, no overlapping scopes; a violation's message carries the
     * lines about it (and the whole history goes to a file).
     */
    static void assertConsistentWithOneHub(List<History.Op> ops, MeshNode reference) throws Exception {
        List<String> violations = HistoryChecker.violations(ops);
        if (!violations.isEmpty()) {
            assertThat(violations).as(FailoverDump.write(ops, reference, violations)).isEmpty();
        }
    }

    /** The claim-family events of a node's journal copy, in commit order. */
    static List<LogEvent> claimLog(MeshNode n) throws Exception {
        List<JournaledEvent> events = n.actor().read(s -> {
            try {
                return n.journal().readAfter(0, Integer.MAX_VALUE, Set.of("claim", "handoff", "release"));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get(30, TimeUnit.SECONDS);
        List<LogEvent> out = new ArrayList<>();
        for (JournaledEvent je : events) {
            if (je.event() instanceof ClaimSnapshotEvent s) {
                out.add(new LogEvent(s.kind(), s.claim().taskId(), s.claim().owner(), s.claim().epoch()));
            } else if (je.event() instanceof ClaimReleasedEvent r) {
                out.add(new LogEvent("release", r.taskId(), "", 0));
            }
        }
        return out;
    }
}
