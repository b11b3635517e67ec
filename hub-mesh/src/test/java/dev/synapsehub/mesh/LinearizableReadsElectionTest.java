package dev.synapsehub.mesh;

import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A linearizable read on a follower during an election waits for the next leader, up to the
 * commit timeout, instead of being refused at once: the follower keeps the dead leader's id until
 * its own election timer fires, and every read in that window failed on the dead leader's port.
 * The dead leader is a loopback port nobody listens on, reached through Ratis' real gRPC client;
 * the next leader answers the read index in this JVM.
 */
class LinearizableReadsElectionTest {
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final DeadNodeRpc dead;

    LinearizableReadsElectionTest() throws java.io.IOException {
        dead = new DeadNodeRpc("n1");
    }

    @AfterEach
    void stop() throws Exception {
        scheduler.shutdownNow();
        dead.close();
    }

    @Test
    void aReadOnAFollowerWhoseLeaderDiedWaitsForTheNextLeaderWithinTheCommitTimeout() throws Exception {
        RaftClientRpc rpc = dead.rpc(r -> CompletableFuture.completedFuture(RaftClientReply.newBuilder()
                .setRequest(r).setSuccess().setMessage(Message.valueOf(ByteString.copyFrom(MeshJson.bytes(
                        LinearizableReads.answer(7L, null))))).build())); // the elected n3 answers the read index
        // the follower names the dead n1 until ~300 ms after the read came, then the elected n3
        AtomicLong firstLook = new AtomicLong();
        LinearizableReads reads = new LinearizableReads(rpc, new AtomicLong(), new ChannelResets(),
                RaftGroupId.randomId(), new LinearizableReads.Node() {
                    @Override
                    public CompletableFuture<Void> afterAppliedSoFar() {
                        return CompletableFuture.completedFuture(null);
                    }

                    @Override
                    public RaftPeerId leader() {
                        long now = System.nanoTime();
                        firstLook.compareAndSet(0, now);
                        return RaftPeerId.valueOf(now - firstLook.get() < TimeUnit.MILLISECONDS.toNanos(300)
                                ? "n1" : "n3");
                    }

                    @Override
                    public long appliedIndex() {
                        return 7;
                    }
                }, null, scheduler, 5_000);

        reads.barrier().get(10, TimeUnit.SECONDS);

        assertThat(dead.sentTo).as("asked the dead leader first").startsWith("n1").endsWith("n3");
        assertThat(reads.served()).isEqualTo(1);
        assertThat(reads.refused()).isZero();
    }
}
