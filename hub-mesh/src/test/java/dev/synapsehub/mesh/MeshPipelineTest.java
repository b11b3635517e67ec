package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.claim.Claim;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.claims;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 13: the leader pipelines its proposals (several group commits in flight, each decided on
 * top of the ones before it), and still answers only after commit, in log order, and fails every
 * batch decided on top of one that did not commit.
 */
class MeshPipelineTest {
    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * Submits {@code count} claims to {@code node}'s actor, one about every millisecond, without waiting;
     * with a {@code midway} step, waits for a first answer a third of the way and runs it halfway.
     */
    private static List<CompletableFuture<Outcome>> stream(MeshNode node, String prefix, int count,
                                                           List<Long> answeredSeqs, Runnable midway)
            throws InterruptedException {
        List<CompletableFuture<Outcome>> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            if (i == count / 3 && midway != null) {
                TestCluster.await("a first answer", () -> !answeredSeqs.isEmpty()); // some committed before
            }
            if (i == count / 2 && midway != null) {
                midway.run(); // about 25 more proposed since: several in flight
            }
            CompletableFuture<Outcome> f = node.actor().submit(Mutation.of(claim(prefix + i, prefix + i)));
            f.thenAccept(o -> {
                if (o instanceof Outcome.Decided d) {
                    answeredSeqs.add(OutcomeCodec.lastSeq(d)); // in the order the answers were given
                }
            });
            out.add(f);
            Thread.sleep(1);
        }
        return out;
    }

    @Test
    void theLeaderKeepsSeveralProposalsInFlightAndAnswersInCommitOrder() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        List<Long> answered = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Outcome>> futures = stream(leader, "P", 300, answered, null);
        long last = 0;
        for (CompletableFuture<Outcome> f : futures) {
            Outcome o = f.get(20, TimeUnit.SECONDS);
            assertThat(o).isInstanceOf(Outcome.Decided.class);
            assertThat(((Outcome.Decided) o).reply().granted()).isTrue();
            last = Math.max(last, OutcomeCodec.lastSeq(o));
        }
        assertThat(leader.mostProposalsInFlight()).as("proposals in flight at once").isGreaterThan(1);
        assertThat(leader.actor().metrics().inFlightMax()).isGreaterThan(1);
        synchronized (answered) {
            assertThat(answered).as("answers go out in commit order").isSorted();
        }
        cluster.awaitApplied(last);
        List<Claim> reference = claims(leader);
        assertThat(reference).hasSize(300);
        for (MeshNode n : cluster.running()) {
            assertThat(claims(n)).as(n.nodeId()).isEqualTo(reference);
            assertThat(n.status().rejectedRecords()).as(n.nodeId() + " fenced no chained record").isZero();
        }
    }

    @Test
    void losingTheLeaderWithSeveralProposalsInFlightPublishesNothingUncommittedAndLosesNothingAcknowledged()
            throws Exception {
        cluster = TestCluster.partitionable(dir, 3, false);
        MeshNode old = cluster.awaitLeader();
        String oldId = old.nodeId();
        List<Long> answered = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Outcome>> futures = stream(old, "L", 150, answered,
                () -> cluster.links().isolate(oldId)); // cut while proposals are in flight
        Map<String, Outcome> outcomes = new TreeMap<>();
        for (int i = 0; i < futures.size(); i++) {
            outcomes.put("L" + i, futures.get(i).get(30, TimeUnit.SECONDS));
        }
        List<String> acknowledged = outcomes.entrySet().stream()
                .filter(e -> e.getValue() instanceof Outcome.Decided).map(Map.Entry::getKey).toList();
        List<String> notAcknowledged = outcomes.entrySet().stream()
                .filter(e -> !(e.getValue() instanceof Outcome.Decided)).map(Map.Entry::getKey).toList();
        assertThat(acknowledged).as("some committed before the cut").isNotEmpty();
        assertThat(notAcknowledged).as("some were in flight or queued behind the cut").isNotEmpty();
        assertThat(old.mostProposalsInFlight()).as("proposals in flight at once").isGreaterThan(1);
        for (Map.Entry<String, Outcome> e : outcomes.entrySet()) {
            if (e.getValue() instanceof Outcome.Refused r) {
                assertThat(r.reason()).as(e.getKey() + ": " + r.message())
                        .isIn(Outcome.Reason.QUEUED, Outcome.Reason.COMMIT_UNKNOWN, Outcome.Reason.BUSY);
            }
        }

        // the majority elects another leader; it holds every acknowledged claim
        TestCluster.await("another leader", () -> cluster.running().stream()
                .anyMatch(n -> n != old && n.status().leading() && n.site().decidesHere()));
        MeshNode next = cluster.running().stream().filter(n -> n != old && n.site().decidesHere()).findFirst()
                .orElseThrow();
        List<String> committed = claims(next).stream().map(Claim::taskId).toList();
        assertThat(committed).as("every acknowledged claim committed").containsAll(acknowledged);
        // the cut-off leader undid what it had not seen commit: its state holds committed claims only
        List<String> onOld = claims(old).stream().map(Claim::taskId).toList();
        assertThat(committed).as("the old leader's state is a committed prefix").containsAll(onOld);
        assertThat(onOld).containsAll(acknowledged);

        // healed, every node converges; every claim is granted once
        cluster.links().healAll();
        TestCluster.await("the old leader catches up", () -> {
            try {
                return claims(old).equals(claims(next));
            } catch (Exception e) {
                return false;
            }
        });
        List<Claim> finalClaims = claims(next);
        assertThat(finalClaims.stream().map(Claim::taskId).distinct().count()).isEqualTo(finalClaims.size());
        assertThat(finalClaims.stream().map(Claim::taskId).toList()).containsAll(acknowledged);
    }
}
