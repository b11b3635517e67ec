package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A follower resets its channel to the leader once per broken channel, not once per failed
 * forward, and not for a channel that still answers: resetting fails every forward in flight on
 * it, and each of those failures used to reset the next channel, so one timed-out forward under
 * load kept every later forward of that follower failing (commit_unknown, queued).
 */
class ForwarderChannelTest {
    private static final RaftPeerId LEADER = RaftPeerId.valueOf("n1");
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    /** A transport whose replies the test gives, counting the channel resets the forwarder asks for. */
    private static class FakeRpc implements RaftClientRpc {
        final List<RaftClientRequest> requests = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<RaftClientReply>> replies = new CopyOnWriteArrayList<>();
        final AtomicInteger resets = new AtomicInteger();

        @Override
        public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
            CompletableFuture<RaftClientReply> reply = new CompletableFuture<>();
            requests.add(request);
            replies.add(reply);
            return reply;
        }

        @Override
        public RaftClientReply sendRequest(RaftClientRequest request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean handleException(RaftPeerId serverId, Throwable t, boolean reconnect) {
            resets.incrementAndGet();
            return true;
        }

        @Override
        public void addRaftPeers(java.util.Collection<RaftPeer> peers) {
        }

        @Override
        public void close() {
        }

        /** Answers request {@code i} with a decided refusal (nothing applied, seq 0). */
        void answer(int i) {
            Message busy = Message.valueOf(ByteString.copyFrom(MeshJson.bytes(new OutcomeCodec().write(
                    new Outcome.Refused(Outcome.Reason.BUSY, "decided: busy")))));
            replies.get(i).complete(RaftClientReply.newBuilder().setRequest(requests.get(i)).setSuccess()
                    .setMessage(busy).build());
        }
    }

    private Forwarder forwarder(FakeRpc rpc, long timeoutMillis) {
        return new Forwarder("n2", RaftGroupId.valueOf(UUID.randomUUID()), rpc, new Forwarder.Node() {
            @Override
            public RaftPeerId leader() {
                return LEADER;
            }

            @Override
            public void whenApplied(long seq, Runnable release) {
                release.run();
            }
        }, new MutationCodec(new TestEdge()), scheduler, timeoutMillis);
    }

    private static CompletableFuture<Outcome> forward(Forwarder f, String task) {
        CompletableFuture<Outcome> out = new CompletableFuture<>();
        f.forward(Mutation.of(claim("alice", task)), new IntentTags.Tag(IntentTags.fresh(), false, false), out);
        return out;
    }

    private static Outcome.Reason refusal(CompletableFuture<Outcome> outcome) throws Exception {
        return ((Outcome.Refused) outcome.get(30, TimeUnit.SECONDS)).reason();
    }

    @Test
    void aBrokenChannelIsResetOnceAndTheForwardsItTookDownResetNothing() throws Exception {
        FakeRpc rpc = new FakeRpc();
        Forwarder f = forwarder(rpc, 60_000);
        CompletableFuture<Outcome> first = forward(f, "T1");
        CompletableFuture<Outcome> second = forward(f, "T2");
        CompletableFuture<Outcome> third = forward(f, "T3");
        assertThat(rpc.requests).hasSize(3);

        rpc.replies.get(0).completeExceptionally(new IOException("stream broken"));
        assertThat(refusal(first)).isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);
        assertThat(rpc.resets.get()).as("the broken channel is reset").isEqualTo(1);
        // the reset closed the channel under the other two: their failures reset nothing more
        rpc.replies.get(1).completeExceptionally(new IOException("UNAVAILABLE: Channel shutdown invoked"));
        rpc.replies.get(2).completeExceptionally(new IOException("CANCELLED: RST_STREAM closed stream"));
        assertThat(refusal(second)).isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);
        assertThat(refusal(third)).isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);
        assertThat(rpc.resets.get()).as("one reset for one broken channel").isEqualTo(1);

        // a forward on the new channel that breaks it resets again, and one answered meanwhile is untouched
        CompletableFuture<Outcome> fourth = forward(f, "T4");
        CompletableFuture<Outcome> fifth = forward(f, "T5");
        rpc.answer(4);
        assertThat(refusal(fifth)).isEqualTo(Outcome.Reason.BUSY);
        rpc.replies.get(3).completeExceptionally(new IOException("stream broken"));
        assertThat(refusal(fourth)).isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);
        assertThat(rpc.resets.get()).isEqualTo(2);
        assertThat(f.channelResets("n1")).isEqualTo(2);
    }

    @Test
    void aTimeoutOnAChannelThatStillAnswersResetsNothingOneOnASilentChannelDoes() throws Exception {
        FakeRpc rpc = new FakeRpc();
        Forwarder f = forwarder(rpc, 300);
        CompletableFuture<Outcome> slow = forward(f, "T1");
        CompletableFuture<Outcome> quick = forward(f, "T2");
        rpc.answer(1); // the leader answers another forward after the slow one left
        assertThat(refusal(quick)).isEqualTo(Outcome.Reason.BUSY);
        assertThat(refusal(slow)).as("timed out after 300 ms").isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);
        assertThat(rpc.resets.get()).as("a slow leader on a working channel: no reset").isZero();

        CompletableFuture<Outcome> lost = forward(f, "T3");
        assertThat(refusal(lost)).isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);
        assertThat(rpc.resets.get()).as("nothing answered since it left: the channel is reset").isEqualTo(1);
    }

    @Test
    void aForwardRefusedUnsentOnAnEndedStreamUntilTheBoundAppliedNothingOneFailedOnTheStreamMayHave() throws Exception {
        // Ratis' texts: a request refused on a stream that had ended, and one on a stream when it ended
        FakeRpc refusing = new FakeRpc() {
            @Override
            public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
                requests.add(request);
                return CompletableFuture.failedFuture(new AlreadyClosedException("client->n1 is closed."));
            }
        };
        Outcome refused = forward(forwarder(refusing, 300), "T1").get(30, TimeUnit.SECONDS);
        assertThat(refusing.requests.size()).as("sent again until the bound").isGreaterThan(1);
        assertThat(refused).as("nothing left this node: nothing was applied").isSameAs(Forwarder.NO_LEADER);

        FakeRpc ending = new FakeRpc() {
            @Override
            public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
                requests.add(request);
                return CompletableFuture.failedFuture(new AlreadyClosedException(
                        "client->n1: Stream completed: no reply for async request cid=" + request.getCallId()));
            }
        };
        assertThat(refusal(forward(forwarder(ending, 300), "T2"))).as("it may have committed")
                .isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);
    }

    /** A NotLeaderException as the leader n1 sends it for {@code r}. */
    private static org.apache.ratis.protocol.exceptions.NotLeaderException notLeader(RaftClientRequest r) {
        return new org.apache.ratis.protocol.exceptions.NotLeaderException(
                org.apache.ratis.protocol.RaftGroupMemberId.valueOf(LEADER, r.getRaftGroupId()), null, List.of());
    }

    @Test
    void aForwardFailedByAnotherRequestsNotLeaderRefusalMayHaveCommittedOneRefusedByItsOwnReplyDidNot() throws Exception {
        // Ratis' client fails every request on the stream with a NotLeaderException one reply carried, also one the
        // old leader committed but had not answered: the failure says nothing of this forward
        FakeRpc collateral = new FakeRpc() {
            @Override
            public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
                requests.add(request);
                if (requests.size() == 1) {
                    return CompletableFuture.failedFuture(notLeader(request));
                }
                return CompletableFuture.completedFuture(RaftClientReply.newBuilder().setRequest(request)
                        .setException(notLeader(request)).build());
            }
        };
        Outcome failed = forward(forwarder(collateral, 300), "T1").get(30, TimeUnit.SECONDS);
        assertThat(collateral.requests.size()).as("retried under its intent id until the bound").isGreaterThan(1);
        assertThat(failed).as("it may have committed: never \"nothing was applied\"").isNotSameAs(Forwarder.NO_LEADER);
        assertThat(refusal(CompletableFuture.completedFuture(failed))).isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);

        FakeRpc refusing = new FakeRpc() {
            @Override
            public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
                requests.add(request);
                return CompletableFuture.completedFuture(RaftClientReply.newBuilder().setRequest(request)
                        .setException(notLeader(request)).build());
            }
        };
        assertThat(forward(forwarder(refusing, 300), "T2").get(30, TimeUnit.SECONDS))
                .as("refused by its own reply each time: nothing was applied").isSameAs(Forwarder.NO_LEADER);
    }

    /** What Ratis' client fails a request with that was in flight when its stream broke with {@code status}. */
    static IOException streamBroke(org.apache.ratis.thirdparty.io.grpc.Status status) {
        return new IOException(status.asRuntimeException());
    }

    @Test
    void aForwardInFlightWhenItsStreamBrokeIsRetriedUnderItsIdAndUnknownOnlyAtTheDeadline() throws Exception {
        // the leader shut down (CANCELLED) with the forward on its stream; the next attempt is answered
        FakeRpc rpc = new FakeRpc();
        Forwarder f = forwarder(rpc, 60_000);
        CompletableFuture<Outcome> out = forward(f, "T1");
        breakFirstStreamAndAwaitAResend(rpc);
        assertThat(rpc.requests).as("sent again, under the same intent id").hasSize(2);
        assertThat(rpc.requests.get(1).getMessage().getContent())
                .isEqualTo(rpc.requests.get(0).getMessage().getContent());
        rpc.answer(1);
        assertThat(refusal(out)).as("the leader's answer, not commit_unknown").isEqualTo(Outcome.Reason.BUSY);
        assertThat(rpc.resets.get()).as("the broken channel is reset as before").isEqualTo(1);

        // every attempt's stream breaks (a crashed leader, UNAVAILABLE): unknown at the deadline, never NO_LEADER
        FakeRpc crashed = new FakeRpc() {
            @Override
            public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
                requests.add(request);
                return CompletableFuture.failedFuture(streamBroke(org.apache.ratis.thirdparty.io.grpc.Status.UNAVAILABLE
                        .withDescription("Connection closed after GOAWAY")));
            }
        };
        assertThat(refusal(forward(forwarder(crashed, 300), "T2"))).isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);
        assertThat(crashed.requests.size()).as("retried until the deadline").isGreaterThan(1);
    }

    @Test
    void aSendRecordedWhileTheChannelIsBeingReplacedCountsAsSentOnTheOldOne() {
        ChannelResets r = new ChannelResets();
        ChannelResets.Sent broke = r.sent("n1", 100);
        java.util.concurrent.atomic.AtomicReference<ChannelResets.Sent> during = new java.util.concurrent.atomic.AtomicReference<>();
        // another request is recorded while the client replaces the channel (Ratis does it outside our lock)
        assertThat(r.reset(broke, new IOException("broken"), () -> during.set(r.sent("n1", 110)))).isTrue();
        // it may have gone out on the old channel ("is closed"): its failure must not reset the new one
        assertThat(r.reset(during.get(), new AlreadyClosedException("client->n1 is closed."),
                () -> { throw new AssertionError("the new channel was reset"); })).isFalse();
        ChannelResets.Sent next = r.sent("n1", 120);
        assertThat(rule(r, next, new IOException("broken again"))).as("a send on the new channel resets it").isTrue();
        assertThat(r.resets("n1")).isEqualTo(2);
    }

    @Test
    void aResetThatThrowsIsCountedChangesNothingAndTheNextFailureTriesAgain() {
        ChannelResets r = new ChannelResets();
        ChannelResets.Sent a = r.sent("n1", 100);
        assertThat(r.reset(a, new IOException("broken"), () -> {
            throw new NullPointerException("no proxy for n1");
        })).isFalse();
        assertThat(r.failedResets()).isEqualTo(1);
        assertThat(r.resets("n1")).as("the channel was not replaced").isZero();
        ChannelResets.Sent b = r.sent("n1", 110);
        assertThat(rule(r, b, new IOException("broken"))).as("not left half reset").isTrue();
        assertThat(r.resets("n1")).isEqualTo(1);
        assertThat(r.failedResets()).isEqualTo(1);
    }

    @Test
    void aForwardWhoseChannelResetThrowsIsStillRetriedAndAnswered() throws Exception {
        FakeRpc rpc = new FakeRpc() {
            @Override
            public boolean handleException(RaftPeerId serverId, Throwable t, boolean reconnect) {
                super.handleException(serverId, t, reconnect);
                throw new IllegalStateException("the client's proxy map has no " + serverId);
            }
        };
        Forwarder f = forwarder(rpc, 60_000);
        CompletableFuture<Outcome> out = forward(f, "T1");
        breakFirstStreamAndAwaitAResend(rpc);
        assertThat(rpc.requests).as("the callback went on to the retry").hasSize(2);
        rpc.answer(1);
        assertThat(refusal(out)).isEqualTo(Outcome.Reason.BUSY);
        assertThat(f.channelResetFaults()).isEqualTo(1);
    }

    @Test
    void theRuleAlone() {
        ChannelResets r = new ChannelResets();
        ChannelResets.Sent a = r.sent("n1", 100);
        ChannelResets.Sent b = r.sent("n1", 110);
        assertThat(rule(r, a, new IOException("broken"))).isTrue();
        assertThat(rule(r, b, new IOException("shut down by that reset"))).isFalse();
        ChannelResets.Sent c = r.sent("n1", 200);
        r.answered("n1", 250);
        assertThat(rule(r, c, new TimeoutException())).as("answered since it was sent").isFalse();
        assertThat(rule(r, c, new IOException("broken"))).as("a broken stream resets even so").isTrue();
        ChannelResets.Sent d = r.sent("n1", 300);
        assertThat(rule(r, d, new org.apache.ratis.protocol.exceptions.TimeoutIOException("t"))).isTrue();
        assertThat(r.resets("n1")).isEqualTo(3);
        assertThat(r.resets("n3")).isZero();
    }

    /** The reset rule alone: whether a reset would run, with nothing to run. */
    private static boolean rule(ChannelResets r, ChannelResets.Sent sent, Throwable cause) {
        return r.reset(sent, cause, () -> { });
    }

    /** The leader shut down (CANCELLED) with the first forward on its stream; waits up to 2 s for a resend. */
    private static void breakFirstStreamAndAwaitAResend(FakeRpc rpc) throws InterruptedException {
        rpc.replies.get(0).completeExceptionally(streamBroke(org.apache.ratis.thirdparty.io.grpc.Status.CANCELLED
                .withDescription("RST_STREAM closed stream. HTTP/2 error code: CANCEL")));
        for (int i = 0; i < 200 && rpc.requests.size() < 2; i++) {
            Thread.sleep(10); // the retry is scheduled 50 ms on
        }
    }
}
