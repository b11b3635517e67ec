package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.claims;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seed 001 §7 step 4, §9–§11: a strong write no quorum commits in time is queued durably on the
 * node that took it and grants nothing; the queue survives a restart and is replayed, once a
 * leader is known, in the canonical order with an explicit outcome per intent.
 */
class MeshQueueTest {
    private static final Pattern INTENT = Pattern.compile("intent ([0-9a-f-]{36})");

    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Stops every node but {@code survivor} and waits until it no longer decides (no quorum). */
    private void isolate(MeshNode survivor) throws Exception {
        for (MeshNode n : cluster.running()) {
            if (n != survivor) {
                cluster.stop(n.nodeId());
            }
        }
        TestCluster.await("the survivor stops deciding", () -> !survivor.site().decidesHere());
    }

    private static String queuedIntent(Outcome outcome) {
        assertThat(outcome).isInstanceOf(Outcome.Refused.class);
        Outcome.Refused refused = (Outcome.Refused) outcome;
        assertThat(refused.reason()).as(refused.message()).isEqualTo(Outcome.Reason.QUEUED);
        Matcher m = INTENT.matcher(refused.message());
        assertThat(m.find()).as("the reply names its intent: " + refused.message()).isTrue();
        return m.group(1);
    }

    private QueuedIntent onDisk(String node, String intentId) throws Exception {
        IntentStore store = new IntentStore(IntentStore.beside(cluster.config(node).storageDir()), node);
        return store.load().intents().stream().filter(i -> i.intentId().equals(intentId)).findFirst().orElse(null);
    }

    @Test
    void aStrongWriteWithoutAQuorumIsQueuedDurablyGrantsNothingAndSurvivesARestart() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode survivor = cluster.awaitLeader();
        String id = survivor.nodeId();
        long term = survivor.status().term();
        isolate(survivor);

        String intentId = queuedIntent(submit(survivor, Mutation.of(claim("hank", "Q1"))));
        assertThat(claims(survivor)).as("a queued claim grants nothing").isEmpty();
        assertThat(survivor.queueDepth()).isEqualTo(1);
        assertThat(survivor.intentCounters()).isEqualTo(new IntentCounters(1, 1, 0, 0));
        QueuedIntent stored = onDisk(id, intentId);
        assertThat(stored).as("stored beside the node's db before the agent is told").isNotNull();
        assertThat(Files.exists(dir.resolve(id + ".db.intents"))).isTrue();
        assertThat(stored.entityType()).isEqualTo("claim");
        assertThat(stored.entityId()).isEqualTo("Q1");
        assertThat(stored.writeClass()).isEqualTo(WriteClass.STRONG);
        assertThat(stored.originNodeId()).isEqualTo(id);
        assertThat(stored.originSeq()).isEqualTo(1);
        assertThat(stored.leaseEpoch()).isGreaterThanOrEqualTo(term);
        assertThat(FenceToken.parse(stored.fenceToken()).term()).isEqualTo(stored.leaseEpoch());
        assertThat(stored.attempts()).isZero();
        assertThat(stored.firstAttemptAt()).isPositive();
        assertThat(stored.lastAttemptAt()).isGreaterThanOrEqualTo(stored.firstAttemptAt());
        assertThat(stored.nextAttemptAt()).isGreaterThanOrEqualTo(stored.lastAttemptAt());
        assertThat(stored.state()).isEqualTo(EnvelopeState.QUEUED);
        assertThat(stored.outcome()).isNull();
        assertThat(stored.agent()).isEqualTo("hank");

        // a second strong write is queued behind it, in origin order
        String second = queuedIntent(submit(survivor, Mutation.of(new ReleaseCommand("hank", "Q0", null))));
        assertThat(onDisk(id, second).originSeq()).as("origin order").isEqualTo(2);

        cluster.stop(id);
        MeshNode restarted = cluster.start(id);
        assertThat(restarted.queueDepth()).as("the queue survives a restart (§11 step 1)").isEqualTo(2);
        assertThat(restarted.intents().queue().queued()).extracting(QueuedIntent::intentId)
                .containsExactly(intentId, second);
        assertThat(claims(restarted)).isEmpty();
    }

    @Test
    void aDamagedQueueIsRefusedAtStartInsteadOfDroppingIntents() throws Exception {
        Path file = dir.resolve("x.intents");
        IntentStore store = new IntentStore(file, "n1");
        QueuedIntent i = new QueuedIntent("00000000-0000-0000-0000-000000000001", "claim", "T1", WriteClass.STRONG,
                "n1", 1, 2, "2:n1:5", 10.0, 0, 10.0, 10.0, 10.0, EnvelopeState.QUEUED, null, null, null, "a",
                MeshJson.MAPPER.createObjectNode());
        store.save(List.of(i), 1);
        assertThat(store.load().intents()).containsExactly(i);
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length - 5] ^= 1;
        Files.write(file, bytes);
        org.assertj.core.api.Assertions.assertThatThrownBy(store::load).isInstanceOf(java.io.IOException.class)
                .hasMessageContaining("checksum");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new IntentStore(file, "n2").load())
                .isInstanceOf(java.io.IOException.class);
    }

    @Test
    void theCanonicalReplayOrderIsEpochThenOriginSeqThenCreatedAtThenIntentId() {
        QueuedIntent a = intent("b", 2, 1, 5.0);
        QueuedIntent b = intent("a", 1, 9, 9.0);
        QueuedIntent c = intent("c", 2, 1, 4.0);
        QueuedIntent d = intent("a", 2, 1, 4.0);
        assertThat(List.of(a, b, c, d).stream().sorted(QueuedIntent.CANONICAL).toList()).containsExactly(b, d, c, a);
    }

    private static QueuedIntent intent(String id, long epoch, long seq, double createdAt) {
        return new QueuedIntent(id, "claim", "T", WriteClass.STRONG, "n1", seq, epoch, epoch + ":n1:0", createdAt, 0,
                createdAt, createdAt, createdAt, EnvelopeState.QUEUED, null, null, null, "a",
                MeshJson.MAPPER.createObjectNode());
    }

    private static Reply.Granted granted(Outcome o) {
        assertThat(o).isInstanceOf(Outcome.Decided.class);
        Reply reply = ((Outcome.Decided) o).reply();
        assertThat(reply).isInstanceOf(Reply.Granted.class);
        return (Reply.Granted) reply;
    }

    @Test
    void afterRecoveryQueuedIntentsReplayInCanonicalOrderEachWithItsExplicitOutcome() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        granted(submit(leader, Mutation.of(claim("alice", "A1"))));
        Outcome carolsClaim = submit(leader, Mutation.of(claim("carol", "C1")));
        long carolsEpoch = granted(carolsClaim).claim().epoch();
        cluster.awaitApplied(OutcomeCodec.lastSeq(carolsClaim));

        MeshNode taker = cluster.follower(leader);
        String takerId = taker.nodeId();
        List<String> others = cluster.running().stream().map(MeshNode::nodeId).filter(n -> !n.equals(takerId)).toList();
        isolate(taker);
        TestEdge.Verb verb = new TestEdge.Verb("claim");
        Idempotency key = new Idempotency(Idempotency.key("dave", "claim", "k1"), "digest-1", TestEdge.renderer(verb));
        String noop = queuedIntent(submit(taker, new Mutation(claim("dave", "K1"), key, verb)));
        String superseded = queuedIntent(submit(taker, Mutation.of(new ReleaseCommand("alice", "A1", null))));
        String conflict = queuedIntent(submit(taker, Mutation.of(claim("bob", "B1"))));
        String fenced = queuedIntent(submit(taker, Mutation.of(new ReleaseCommand("carol", "C1", carolsEpoch))));
        String applied = queuedIntent(submit(taker, Mutation.of(claim("erin", "E1"))));
        List<String> order = List.of(noop, superseded, conflict, fenced, applied);
        assertThat(taker.intents().queue().queued()).extracting(QueuedIntent::intentId).isEqualTo(order);
        cluster.stop(takerId);

        // the majority comes back without the taker and moves on
        for (String id : others) {
            cluster.start(id);
        }
        MeshNode next = cluster.awaitLeader();
        granted(submit(next, new Mutation(claim("dave", "K1"), key, verb))); // the agent retried elsewhere
        granted(submit(next, Mutation.of(new ReleaseCommand("alice", "A1", null))));
        granted(submit(next, Mutation.of(claim("frank", "B1"))));
        granted(submit(next, Mutation.of(new ReleaseCommand("carol", "C1", null))));
        Outcome reclaimed = submit(next, Mutation.of(claim("carol", "C1")));
        assertThat(granted(reclaimed).claim().epoch()).as("a new claim epoch").isGreaterThan(carolsEpoch);

        MeshNode back = cluster.start(takerId);
        assertThat(back.queueDepth()).as("still queued after the restart").isEqualTo(5);
        // the counter moves just after the queue file is written, so wait for both
        TestCluster.await("every intent reconciled",
                () -> back.queueDepth() == 0 && back.intentCounters().reconciled() == 5);

        IntentQueue queue = back.intents().queue();
        assertThat(back.intentCounters()).isEqualTo(new IntentCounters(0, 0, 5, 0));
        assertThat(queue.get(noop).outcome()).isEqualTo(ReplayOutcome.NOOP_ALREADY_APPLIED);
        assertThat(queue.get(superseded).outcome()).isEqualTo(ReplayOutcome.SUPERSEDED);
        assertThat(queue.get(conflict).outcome()).isEqualTo(ReplayOutcome.CONFLICT_REQUIRES_MERGE);
        assertThat(queue.get(conflict).detail()).startsWith("LEASE_LIVE");
        assertThat(queue.get(fenced).outcome()).isEqualTo(ReplayOutcome.REJECTED_FENCED);
        assertThat(queue.get(applied).outcome()).isEqualTo(ReplayOutcome.APPLIED);
        for (String id : order) {
            QueuedIntent done = onDisk(takerId, id);
            assertThat(done.state()).as("journaled in the queue file").isEqualTo(EnvelopeState.RECONCILED);
            assertThat(done.outcome()).isEqualTo(queue.get(id).outcome());
            assertThat(done.reconciledAt()).isNotNull();
        }

        // each agent is told, in the canonical order
        List<JsonNode> reports = cluster.edge(takerId).reports;
        assertThat(reports).extracting(r -> r.path("report").path("intent_id").asText()).isEqualTo(order);
        assertThat(reports).extracting(r -> r.path("agent").asText())
                .containsExactly("dave", "alice", "bob", "carol", "erin");
        assertThat(reports.get(4).path("report").path("outcome").asText()).isEqualTo("applied");
        assertThat(reports.get(2).path("report").path("reason_code").asText()).isEqualTo("LEASE_LIVE");

        // the state agrees on every node: erin's claim committed, nothing else changed
        MeshNode now = cluster.awaitLeader();
        long seq = now.status().appliedSeq();
        cluster.awaitApplied(seq);
        for (MeshNode n : cluster.running()) {
            List<Claim> held = claims(n);
            assertThat(held).as(n.nodeId()).extracting(c -> c.taskId() + "=" + c.owner())
                    .containsExactlyInAnyOrder("K1=dave", "B1=frank", "C1=carol", "E1=erin");
            assertThat(held).filteredOn(c -> c.taskId().equals("C1")).extracting(Claim::epoch)
                    .containsExactly(granted(reclaimed).claim().epoch());
        }
        assertThat(cluster.edge(takerId).published).as("the replayed grant is published on the node that took it")
                .anyMatch(d -> d.reply() instanceof Reply.Granted g && g.claim().taskId().equals("E1"));
    }
}
