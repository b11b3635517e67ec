package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.retry.RetryPolicies;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A forwarded strong write whose answer was lost on a closed stream after the leader had
 * committed it, retried at the next leader, is decided once: the retry carries the same intent
 * id and the new leader answers it with the first decision instead of deciding it again.
 */
class ForwardOnceTest {
    @TempDir
    Path dir;
    private TestCluster cluster;
    private RaftClient client;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() throws Exception {
        scheduler.shutdownNow();
        if (client != null) {
            client.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * The follower's transport, except that the first forward's reply is withheld: the test sees
     * it, then fails the forward as a stream closed under it would (Ratis' AlreadyClosedException).
     */
    private static class LostFirstReply implements RaftClientRpc {
        final RaftClientRpc real;
        final CompletableFuture<RaftClientReply> firstReply = new CompletableFuture<>();
        final CompletableFuture<Void> loseIt = new CompletableFuture<>();
        final AtomicInteger sent = new AtomicInteger();

        LostFirstReply(RaftClientRpc real) {
            this.real = real;
        }

        @Override
        public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
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
            return loseIt.thenCompose(v -> CompletableFuture.failedFuture(new AlreadyClosedException(
                    "Stream close: no reply for async request")));
        }

        @Override
        public RaftClientReply sendRequest(RaftClientRequest request) throws IOException {
            return real.sendRequest(request);
        }

        @Override
        public boolean handleException(RaftPeerId serverId, Throwable t, boolean reconnect) {
            return real.handleException(serverId, t, reconnect);
        }

        @Override
        public void addRaftPeers(Collection<RaftPeer> peers) {
            real.addRaftPeers(peers);
        }

        @Override
        public void close() throws IOException {
            real.close();
        }
    }

    /** The node's own forwarding transport, except that the first forward's reply never arrives (the test sees it). */
    private static final class SwallowedFirstReply extends LostFirstReply {
        SwallowedFirstReply(RaftClientRpc real) {
            super(real);
        }

        @Override
        public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
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
    }

    /** The node's own forwarding transport, except that the first forward is held, never sent, and later failed. */
    private static final class HeldFirstSend extends LostFirstReply {
        final CompletableFuture<Void> held = new CompletableFuture<>();

        HeldFirstSend(RaftClientRpc real) {
            super(real);
        }

        @Override
        public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
            if (sent.incrementAndGet() > 1) {
                return real.sendRequestAsyncUnordered(request);
            }
            held.complete(null);
            return loseIt.thenCompose(v -> CompletableFuture.failedFuture(new AlreadyClosedException(
                    "Stream close: no reply for async request")));
        }
    }

    /**
     * A follower whose forward is still retrying when it becomes the leader itself decides the
     * write there (under the same intent id) instead of retrying until its commit timeout and
     * answering {@code queued}: no other node would decide it.
     */
    @Test
    void aForwardStillRetryingWhenItsOwnNodeTakesTheLeadIsDecidedThere() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        MeshNode taker = cluster.follower(leader);
        HeldFirstSend[] rpc = new HeldFirstSend[1];
        taker.wrapForwardTransport(real -> rpc[0] = new HeldFirstSend(real));

        CompletableFuture<Outcome> told = taker.actor().submit(Mutation.of(claim("alice", "T1")));
        rpc[0].held.get(30, TimeUnit.SECONDS);
        MeshAdmin.transferLeader(taker.config().peers(), taker.nodeId(), java.time.Duration.ofSeconds(30));
        assertThat(cluster.awaitLeader()).isSameAs(taker);
        rpc[0].loseIt.complete(null); // the forward's stream closed: it is retried, and this node leads now

        Outcome answer = told.get(30, TimeUnit.SECONDS);
        assertThat(answer).as(answer.toString()).isInstanceOf(Outcome.Decided.class);
        assertThat(((Outcome.Decided) answer).reply().granted()).isTrue();
        assertThat(taker.queueDepth()).as("decided, not queued").isZero();
        assertThat(rpc[0].sent.get()).as("never sent to another node again").isEqualTo(1);
    }

    /**
     * Seed 001 §7 step 4 and §9–§10 with a dead leader: a follower's strong write that the leader
     * committed but never answered (it died) is answered {@code queued}, stored under the intent
     * id its forward carried, and its replay is reconciled {@code noop_already_applied} by the next
     * leader instead of being decided a second time.
     */
    @Test
    void aWriteWhoseLeaderDiedAfterCommittingItIsQueuedUnderItsIntentIdAndReconciledAsAlreadyApplied()
            throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        MeshNode taker = cluster.follower(leader);
        SwallowedFirstReply[] rpc = new SwallowedFirstReply[1];
        taker.wrapForwardTransport(real -> rpc[0] = new SwallowedFirstReply(real));

        CompletableFuture<Outcome> told = taker.actor().submit(Mutation.of(claim("alice", "T1")));
        RaftClientReply first = rpc[0].firstReply.get(30, TimeUnit.SECONDS);
        long firstSeq = OutcomeCodec.lastSeq(new OutcomeCodec().read(MeshJson.tree(
                first.getMessage().getContent().toByteArray())));
        assertThat(firstSeq).as("the leader committed the claim").isPositive();
        cluster.stop(leader.nodeId()); // it dies with the answer undelivered

        Outcome answer = told.get(30, TimeUnit.SECONDS);
        assertThat(answer).isInstanceOf(Outcome.Refused.class);
        assertThat(((Outcome.Refused) answer).reason()).as(answer.toString()).isEqualTo(Outcome.Reason.QUEUED);
        QueuedIntent queued = taker.intents().queue().all().get(0);
        assertThat(((Outcome.Refused) answer).message()).as("the agent is told its intent").contains(queued.intentId());

        MeshNode next = cluster.awaitLeader();
        TestCluster.await("the intent reconciled", () -> !taker.intents().queue().get(queued.intentId()).queued());
        QueuedIntent done = taker.intents().queue().get(queued.intentId());
        assertThat(done.outcome()).as(done.detail()).isEqualTo(ReplayOutcome.NOOP_ALREADY_APPLIED);
        assertThat(next.actor().read(s -> s.lastSeq()).get(10, TimeUnit.SECONDS))
                .as("the replay decided nothing again").isEqualTo(firstSeq);
        assertThat(taker.queueDepth()).isZero();
    }

    @Test
    void aForwardCommittedByALeaderThatDiedBeforeAnsweringIsNotDecidedAgainByTheNext() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        MeshConfig config = follower.config();
        List<RaftPeer> peers = new ArrayList<>();
        for (MeshPeer p : config.peers()) {
            peers.add(RaftPeer.newBuilder().setId(p.id()).setAddress(p.address()).build());
        }
        RaftGroup group = RaftGroup.valueOf(RaftGroupId.valueOf(config.groupId()), peers);
        client = RaftClient.newBuilder().setRaftGroup(group).setProperties(MeshNode.properties(config))
                .setParameters(MeshTls.parameters(null)).setRetryPolicy(RetryPolicies.noRetry()).build();
        LostFirstReply rpc = new LostFirstReply(client.getClientRpc());
        // the forwarding side is named apart from the voters: whichever survivor wins, it forwards to it
        Forwarder forwarder = new Forwarder("n4", group.getGroupId(), rpc, new Forwarder.Node() {
            @Override
            public RaftPeerId leader() {
                for (MeshNode n : cluster.running()) {
                    if (n.status().leading() && n.site().decidesHere()) {
                        return RaftPeerId.valueOf(n.nodeId());
                    }
                }
                return null;
            }

            @Override
            public void whenApplied(long seq, Runnable release) {
                release.run();
            }
        }, new MutationCodec(new TestEdge()), scheduler, 90_000); // the leader's stop and the election must fit in it

        CompletableFuture<Outcome> answer = new CompletableFuture<>();
        forwarder.forward(Mutation.of(claim("alice", "T1")), new IntentTags.Tag(IntentTags.fresh(), false, false), answer);
        RaftClientReply first = rpc.firstReply.get(30, TimeUnit.SECONDS);
        Outcome decided = new OutcomeCodec().read(MeshJson.tree(first.getMessage().getContent().toByteArray()));
        assertThat(decided).isInstanceOf(Outcome.Decided.class);
        long firstSeq = OutcomeCodec.lastSeq(decided);
        assertThat(firstSeq).as("the leader committed the claim").isPositive();

        // the leader dies with the answer undelivered; the next leader holds the committed claim
        cluster.stop(leader.nodeId());
        MeshNode next = cluster.awaitLeader();
        rpc.loseIt.complete(null);

        Outcome retried = answer.get(60, TimeUnit.SECONDS);
        assertThat(rpc.sent.get()).as("the forward was sent again, answered " + retried).isGreaterThan(1);
        assertThat(retried).isInstanceOf(Outcome.Decided.class);
        assertThat(OutcomeCodec.lastSeq(retried)).as("answered with the first decision, not a second one")
                .isEqualTo(firstSeq);
        assertThat(((Outcome.Decided) retried).reply()).isEqualTo(((Outcome.Decided) decided).reply());
        // a second decision would have committed before the answer: the next leader's state holds none
        assertThat(next.actor().read(s -> s.lastSeq()).get(10, TimeUnit.SECONDS)).isEqualTo(firstSeq);
    }

    /** A transport every forward fails on at once with {@code failure}, as a leader that cannot be reached. */
    private static final class Failing implements RaftClientRpc {
        final Throwable failure;
        final AtomicInteger sent = new AtomicInteger();

        Failing(Throwable failure) {
            this.failure = failure;
        }

        @Override
        public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
            sent.incrementAndGet();
            return CompletableFuture.failedFuture(failure);
        }

        @Override
        public RaftClientReply sendRequest(RaftClientRequest request) throws IOException {
            throw new IOException(failure);
        }

        @Override
        public boolean handleException(RaftPeerId serverId, Throwable t, boolean reconnect) {
            return false;
        }

        @Override
        public void addRaftPeers(Collection<RaftPeer> peers) {
        }

        @Override
        public void close() {
        }
    }

    private Outcome forwardOver(Failing rpc) throws Exception {
        Forwarder forwarder = new Forwarder("n2", RaftGroupId.randomId(), rpc, new Forwarder.Node() {
            @Override
            public RaftPeerId leader() {
                return RaftPeerId.valueOf("n1");
            }

            @Override
            public void whenApplied(long seq, Runnable release) {
                release.run();
            }
        }, new MutationCodec(new TestEdge()), scheduler, 500);
        CompletableFuture<Outcome> answer = new CompletableFuture<>();
        forwarder.forward(Mutation.of(claim("alice", "T1")), new IntentTags.Tag(IntentTags.fresh(), false, false), answer);
        return answer.get(30, TimeUnit.SECONDS);
    }

    @Test
    void runningOutOfTimeAfterAChannelClosedUnderAForwardIsCommitUnknownNotNothingApplied() throws Exception {
        Failing closed = new Failing(new AlreadyClosedException("Stream close: no reply for async request"));
        Outcome afterClosed = forwardOver(closed);
        assertThat(closed.sent.get()).as("retried until the bound").isGreaterThan(1);
        assertThat(afterClosed).as("the leader may have taken it").isInstanceOf(Outcome.Refused.class);
        assertThat(((Outcome.Refused) afterClosed).reason()).isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);

        Outcome neverSent = forwardOver(new Failing(new java.net.ConnectException("Connection refused")));
        assertThat(neverSent).as("nothing left this node: nothing was applied").isSameAs(Forwarder.NO_LEADER);
    }
}
