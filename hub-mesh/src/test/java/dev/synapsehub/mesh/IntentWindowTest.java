package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A queued intent whose write had committed is replayed after more writes than the intent
 * window holds, across a restart of every node from its snapshot: it is still recognised
 * (its origin's hold kept its id) and reconciled {@code noop_already_applied}, deciding nothing
 * again; once its origin holds nothing older, every node forgets the id (docs/mesh.md, "Intent
 * ids", Limits).
 */
class IntentWindowTest {
    private static final int WINDOW = 16;
    /** A snapshot every 8 entries, 8 KiB log segments: the filler writes compact the log past the write. */
    private static final MeshCompaction SMALL = new MeshCompaction(8, 8 << 10);

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
     * The taker's forwarding transport: the first forward goes to the leader but its reply never
     * comes back (the forward times out: the write is queued though it committed); replays fail
     * (their outcome unknown: the intent stays queued) while {@link #blockReplays} is set.
     */
    private static final class LostReplyHeldReplays implements RaftClientRpc {
        final RaftClientRpc real;
        final CompletableFuture<RaftClientReply> firstReply = new CompletableFuture<>();
        final AtomicBoolean blockReplays = new AtomicBoolean(true);
        final AtomicInteger sent = new AtomicInteger();
        final AtomicInteger blocked = new AtomicInteger();

        LostReplyHeldReplays(RaftClientRpc real) {
            this.real = real;
        }

        @Override
        public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
            if (blockReplays.get() && request.getMessage().getContent().toString(StandardCharsets.UTF_8)
                    .contains("\"replay\":true")) {
                blocked.incrementAndGet();
                return CompletableFuture.failedFuture(new IOException("replays held by the test"));
            }
            CompletableFuture<RaftClientReply> reply = real.sendRequestAsyncUnordered(request);
            if (sent.incrementAndGet() > 1) {
                return reply;
            }
            reply.whenComplete((r, t) -> {
                if (t != null) {
                    firstReply.completeExceptionally(t);
                } else {
                    firstReply.complete(r);
                }
            });
            return new CompletableFuture<>(); // the forwarder gives up after its commit timeout
        }

        @Override
        public RaftClientReply sendRequest(RaftClientRequest request) throws IOException {
            return real.sendRequest(request);
        }

        @Override
        public CompletableFuture<RaftClientReply> sendRequestAsync(RaftClientRequest request) {
            return real.sendRequestAsync(request);
        }

        @Override
        public void addRaftPeers(java.util.Collection<org.apache.ratis.protocol.RaftPeer> peers) {
            real.addRaftPeers(peers);
        }

        @Override
        public boolean handleException(org.apache.ratis.protocol.RaftPeerId server, Throwable e, boolean reconnect) {
            return real.handleException(server, e, reconnect);
        }

        @Override
        public void close() throws IOException {
            real.close();
        }
    }

    private static DecidedIntents.Remembered remembered(MeshNode node, String intentId) throws Exception {
        return node.intentMemory().get(10, TimeUnit.SECONDS).remembered().stream()
                .filter(r -> r.intentId().equals(intentId)).findFirst().orElse(null);
    }

    @Test
    void aQueuedIntentReplayedAfterMoreWritesThanTheWindowAndARestartOfEveryNodeIsNotDecidedAgain()
            throws Exception {
        cluster = TestCluster.remembering(dir, 3, SMALL, WINDOW, 1024);
        MeshNode leader = cluster.awaitLeader();
        MeshNode taker = cluster.follower(leader);
        String takerId = taker.nodeId();
        LostReplyHeldReplays[] rpc = new LostReplyHeldReplays[1];
        taker.wrapForwardTransport(real -> rpc[0] = new LostReplyHeldReplays(real));

        Outcome answer = submit(taker, Mutation.of(claim("alice", "T1")));
        assertThat(answer).isInstanceOf(Outcome.Refused.class);
        assertThat(((Outcome.Refused) answer).reason()).as(answer.toString()).isEqualTo(Outcome.Reason.QUEUED);
        long firstSeq = OutcomeCodec.lastSeq(new OutcomeCodec().read(MeshJson.tree(
                rpc[0].firstReply.get(30, TimeUnit.SECONDS).getMessage().getContent().toByteArray())));
        assertThat(firstSeq).as("the leader committed the claim").isPositive();
        QueuedIntent queued = taker.intents().queue().all().get(0);
        assertThat(queued.handOverBase()).as("queued with the base it was handed over at").isNotNegative();

        int decided = 0;
        for (int i = 0; decided < 3 * WINDOW && i < 10 * WINDOW; i++) { // three windows of the leader's own writes
            // on a loaded host one may find no quorum in time: the leader queues it and replays it itself
            decided += submit(leader, Mutation.of(claim("filler", "F" + i))) instanceof Outcome.Decided ? 1 : 0;
        }
        assertThat(decided).isEqualTo(3 * WINDOW);
        Outcome closing = null;
        for (int i = 0; i < 10 && !(closing instanceof Outcome.Decided && leader.queueDepth() == 0); i++) {
            TestCluster.await("the leader's own queue drained", () -> leader.queueDepth() == 0);
            // decided while the leader holds nothing older: its hold passes every one of its writes
            closing = submit(leader, Mutation.of(claim("filler", "closing" + i)));
        }
        assertThat(closing).as(String.valueOf(closing)).isInstanceOf(Outcome.Decided.class);
        assertThat(leader.queueDepth()).isZero();
        long seq = leader.status().appliedSeq();
        cluster.awaitApplied(seq);
        DecidedIntents.Remembered kept = remembered(leader, queued.intentId());
        assertThat(kept).as("past the window, kept for the node that still holds it queued").isNotNull();
        assertThat(kept.pinned()).isTrue();
        assertThat(kept.origin()).isEqualTo(takerId);
        assertThat(leader.intentMemory().get(10, TimeUnit.SECONDS).remembered())
                .as("the leader's own ids past the window are forgotten: its hold passed them")
                .hasSize(WINDOW + 1);
        // the taker replays on its own schedule (a tick, then the intent's back-off): the writes above
        // may all be decided before its first attempt is due
        TestCluster.await("the replay tried and held", () -> rpc[0].blocked.get() > 0);
        assertThat(taker.queueDepth()).isEqualTo(1);
        TestCluster.await("every node snapshotted past the write", () -> cluster.running().stream()
                .allMatch(n -> n.snapshotStatus().lastSnapshotIndex() > kept.index()));

        for (MeshNode n : cluster.running()) { // every node restarts from its snapshot (replays stay held till then)
            cluster.stop(n.nodeId());
        }
        for (MeshPeer p : cluster.peers()) {
            cluster.start(p.id());
        }
        MeshNode next = cluster.awaitLeader();
        for (MeshNode n : cluster.running()) {
            assertThat(n.snapshotStatus().loadedIndex()).as(n.nodeId() + " started from its snapshot")
                    .isGreaterThan(kept.index());
        }
        MeshNode restartedTaker = cluster.node(takerId);
        TestCluster.await("the intent reconciled",
                () -> !restartedTaker.intents().queue().get(queued.intentId()).queued());
        QueuedIntent done = restartedTaker.intents().queue().get(queued.intentId());
        assertThat(done.outcome()).as(done.detail()).isEqualTo(ReplayOutcome.NOOP_ALREADY_APPLIED);
        long last = seq;
        assertThat(next.actor().read(s -> s.lastSeq()).get(10, TimeUnit.SECONDS))
                .as("the replay decided nothing again").isEqualTo(last);

        // once the taker holds nothing older, its next write's hold lets every node forget the id
        Outcome more = submit(restartedTaker, Mutation.of(claim("bob", "T2")));
        assertThat(more).as(String.valueOf(more)).isInstanceOf(Outcome.Decided.class);
        cluster.awaitApplied(OutcomeCodec.lastSeq(more));
        for (MeshNode n : cluster.running()) {
            assertThat(remembered(n, queued.intentId())).as(n.nodeId() + " forgot it").isNull();
            assertThat(n.intentMemory().get(10, TimeUnit.SECONDS).remembered()).as(n.nodeId())
                    .noneMatch(DecidedIntents.Remembered::pinned);
        }
    }
}
