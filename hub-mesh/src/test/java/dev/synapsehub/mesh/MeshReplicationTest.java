package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.event.Durability;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.journal.SqliteJournal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Slice 1: the leader decides, every node applies the same committed records. */
class MeshReplicationTest {
    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    static ClaimCommand claim(String agent, String task) {
        return new ClaimCommand(agent, agent, task, null, 600.0, task, List.of(), null);
    }

    static Outcome submit(MeshNode node, Mutation m) throws Exception {
        return node.actor().submit(m).get(20, TimeUnit.SECONDS);
    }

    static List<Claim> claims(MeshNode node) throws Exception {
        return node.actor().read(s -> s.claims().snapshot(s.claims().now())).get(10, TimeUnit.SECONDS);
    }

    @Test
    void grantsDecidedThroughAnyNodeAreAppliedIdenticallyEverywhere() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);

        Outcome viaLeader = submit(leader, Mutation.of(claim("alice", "T1")));
        Outcome viaFollower = submit(follower, Mutation.of(claim("bob", "T2")));
        assertThat(((Outcome.Decided) viaLeader).reply().granted()).isTrue();
        assertThat(((Outcome.Decided) viaFollower).reply().granted()).isTrue();
        assertThat(follower.status().forwarded()).isEqualTo(1);
        // the follower answered only after applying: its own read sees its agent's grant
        assertThat(claims(follower)).extracting(Claim::taskId).contains("T2");

        long seq = OutcomeCodec.lastSeq(viaFollower);
        cluster.awaitApplied(seq);
        List<Claim> reference = claims(leader);
        assertThat(reference).extracting(Claim::taskId).containsExactlyInAnyOrder("T1", "T2");
        for (MeshNode n : cluster.running()) {
            assertThat(claims(n)).as(n.nodeId()).isEqualTo(reference);
            assertThat(n.actor().read(s -> s.lastSeq()).get(5, TimeUnit.SECONDS)).isEqualTo(seq);
        }
    }

    @Test
    void everyNodeCopiesCommittedClaimsIntoItsJournalWithoutASecondFsync() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        long seq = OutcomeCodec.lastSeq(submit(follower, Mutation.of(claim("bob", "T2"))));
        cluster.awaitApplied(seq);
        for (MeshNode n : cluster.running()) {
            TestCluster.await(n.nodeId() + " copied seq " + seq, () -> n.journalLastSeq() >= seq);
            SqliteJournal copy = (SqliteJournal) ((MeshJournal) n.journal()).local();
            // the Raft log fsynced the record before it counted; the copy serves mailbox replay
            assertThat(copy.synchronousOfLastCommit()).as(n.nodeId()).isEqualTo(Durability.NORMAL);
            assertThat(copy.lastSeq()).as(n.nodeId()).isEqualTo(seq);
        }
    }

    @Test
    void everyOtherNodePublishesACommittedDecisionAndTheOriginDoesNot() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        MeshNode origin = cluster.follower(leader);
        Outcome granted = submit(origin, new Mutation(claim("carol", "T7"), null, new TestEdge.Verb("claim")));
        cluster.awaitApplied(OutcomeCodec.lastSeq(granted));

        for (MeshNode n : cluster.running()) {
            List<RemoteDecision> seen = cluster.edge(n.nodeId()).published;
            if (n == origin) {
                assertThat(seen).as("the origin answers its own agent").isEmpty();
                continue;
            }
            TestCluster.await(n.nodeId() + " publishes", () -> !seen.isEmpty());
            RemoteDecision d = seen.get(0);
            assertThat(d.originNodeId()).isEqualTo(origin.nodeId());
            assertThat(d.context()).isEqualTo(new TestEdge.Verb("claim"));
            assertThat(d.reply()).isEqualTo(((Outcome.Decided) granted).reply());
            assertThat(d.committed()).isEqualTo(((Outcome.Decided) granted).committed());
        }
    }

    @Test
    void aClaimKeepingItsHoldIsHandedToTheLeaderAndAnsweredAsItStandsWithNothingCommitted() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        Outcome first = submit(follower, Mutation.of(claim("erin", "T5")));
        Claim held = ((Reply.Granted) ((Outcome.Decided) first).reply()).claim();
        long seq = OutcomeCodec.lastSeq(first);
        cluster.awaitApplied(seq);

        Outcome kept = submit(follower, Mutation.of(claim("erin", "T5").keepingHeld()));

        assertThat(follower.status().forwarded()).as("decided by the leader").isEqualTo(2);
        assertThat(kept).isInstanceOf(Outcome.Decided.class);
        assertThat(((Outcome.Decided) kept).reply())
                .isEqualTo(new Reply.AlreadyHeld(held, "Task 'T5' already claimed by erin."));
        assertThat(((Outcome.Decided) kept).committed()).isEmpty();
        assertThat(leader.actor().read(s -> s.lastSeq()).get(5, TimeUnit.SECONDS)).isEqualTo(seq);
        assertThat(claims(follower)).contains(held);
    }

    @Test
    void aKeyedRetryThroughAnotherNodeReplaysTheStoredFirstAnswer() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        TestEdge.Verb verb = new TestEdge.Verb("claim");
        String key = Idempotency.key("dave", "claim", "k1");
        Idempotency idem = new Idempotency(key, "digest-1", TestEdge.renderer(verb));

        Outcome first = submit(follower, new Mutation(claim("dave", "T3"), idem, verb));
        String stored = ((Outcome.Decided) first).storedResponse();
        assertThat(stored).isEqualTo("{\"verb\":\"claim\",\"task\":\"T3\",\"granted\":true}");
        cluster.awaitApplied(OutcomeCodec.lastSeq(first));
        for (MeshNode n : cluster.running()) {
            assertThat(submit(n, new Mutation(claim("dave", "T3"), idem, verb))).as(n.nodeId())
                    .isEqualTo(new Outcome.Replayed(stored));
            assertThat(n.actor().remembers(key)).isTrue();
        }
        Idempotency changed = new Idempotency(key, "digest-2", TestEdge.renderer(verb));
        assertThat(submit(follower, new Mutation(claim("dave", "T9"), changed, verb)))
                .isEqualTo(new Outcome.IdempotencyConflict(stored));
        assertThat(claims(leader)).extracting(Claim::taskId).containsExactly("T3");
    }

    @Test
    void afterTheLeaderDiesTheSurvivorsElectAnotherAndKeepEveryCommittedGrant() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        Outcome before = submit(cluster.follower(leader), Mutation.of(claim("erin", "T1")));
        assertThat(((Outcome.Decided) before).reply().granted()).isTrue();
        String dead = leader.nodeId();
        long oldTerm = leader.status().term();
        cluster.stop(dead);

        MeshNode next = cluster.awaitLeader();
        assertThat(next.nodeId()).isNotEqualTo(dead);
        assertThat(next.status().term()).as("a new lease epoch").isGreaterThan(oldTerm);
        MeshNode survivor = cluster.follower(next);
        Outcome renewal = submit(survivor, Mutation.of(claim("erin", "T1")));
        Outcome taken = submit(survivor, Mutation.of(claim("frank", "T1")));
        assertThat(((Outcome.Decided) renewal).reply().granted()).isTrue();
        assertThat(((Outcome.Decided) taken).reply()).isInstanceOf(Reply.Denied.class);
        Outcome released = submit(next, Mutation.of(new ReleaseCommand("erin", "T1", null)));
        assertThat(((Outcome.Decided) released).reply().granted()).isTrue();
        cluster.awaitApplied(OutcomeCodec.lastSeq(released));
        assertThat(claims(next)).isEmpty();
        assertThat(claims(survivor)).isEmpty();
        assertThat(next.actor().read(s -> s.claims().epochCounter()).get(5, TimeUnit.SECONDS))
                .isEqualTo(survivor.actor().read(s -> s.claims().epochCounter()).get(5, TimeUnit.SECONDS));
    }

    @Test
    void aNodeRestartedOnItsStorageRebuildsTheSameStateFromTheLog() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        for (int i = 0; i < 5; i++) {
            submit(i % 2 == 0 ? leader : follower, Mutation.of(claim("gina", "R" + i)));
        }
        Outcome last = submit(leader, Mutation.of(new ReleaseCommand("gina", "R0", null)));
        long seq = OutcomeCodec.lastSeq(last);
        cluster.awaitApplied(seq);
        List<Claim> reference = claims(leader);
        String id = follower.nodeId();
        cluster.stop(id);

        MeshNode restarted = cluster.start(id);
        TestCluster.await("restart replay", () -> restarted.status().appliedSeq() >= seq);
        assertThat(claims(restarted)).isEqualTo(reference);
        assertThat(restarted.actor().read(s -> s.lastSeq()).get(5, TimeUnit.SECONDS)).isEqualTo(seq);
        assertThat(restarted.journalLastSeq()).as("the local copy is not written twice").isEqualTo(seq);
        assertThat(cluster.edge(id).published).as("history is not re-published to a restarted node's agents")
                .isEmpty();
        TestCluster.await("the restarted node is in touch with the leader", restarted::inTouch);
        Outcome fresh = submit(leader, Mutation.of(claim("gina", "R9")));
        TestCluster.await("a new decision is published there", () -> cluster.edge(id).published.stream()
                .anyMatch(d -> d.reply().equals(((Outcome.Decided) fresh).reply())));
    }

    @Test
    void withoutAQuorumNothingCommitsAndNothingIsGranted() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        assertThat(leader.config().quorum()).isEqualTo(2);
        for (MeshNode n : cluster.running()) {
            if (n != leader) {
                cluster.stop(n.nodeId());
            }
        }
        Outcome outcome = submit(leader, Mutation.of(claim("hank", "Q1")));
        assertThat(outcome).isInstanceOf(Outcome.Refused.class);
        assertThat(((Outcome.Refused) outcome).reason()).isIn(Outcome.Reason.QUEUED, Outcome.Reason.COMMIT_UNKNOWN,
                Outcome.Reason.BUSY, Outcome.Reason.JOURNAL_FAILED);
        assertThat(claims(leader)).isEmpty();
    }

    @Test
    void followersNeverReadTheirOwnClocksTheLeadersTimeIsInTheRecords() throws Exception {
        cluster = new TestCluster(dir, 3, false, 1000); // n1 +1000 s, n2 +2000 s, n3 +3000 s
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        double before = System.currentTimeMillis() / 1000.0 + 1000 * Integer.parseInt(leader.nodeId().substring(1));
        Outcome granted = submit(follower, Mutation.of(claim("ivy", "C1")));
        cluster.awaitApplied(OutcomeCodec.lastSeq(granted));
        Claim decided = ((Reply.Granted) ((Outcome.Decided) granted).reply()).claim();
        assertThat(decided.claimedAt()).as("decided on the leader's clock").isBetween(before, before + 60);
        for (MeshNode n : cluster.running()) {
            assertThat(claims(n)).as(n.nodeId()).containsExactly(decided);
        }
    }
}
