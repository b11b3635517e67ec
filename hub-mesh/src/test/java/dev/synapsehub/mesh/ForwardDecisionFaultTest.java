package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A leader whose decision of a forwarded mutation fails answers the forward with a refusal, never
 * with a failed query: Ratis turns a failed query future into an error of the follower's whole
 * gRPC stream (RaftServerImpl.processQueryFuture, GrpcClientProtocolService.responseError), which
 * fails every other forward in flight on it.
 */
class ForwardDecisionFaultTest {
    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A follower's forward of a claim of {@code task}, as {@link Forwarder} writes it (no intent id: null). */
    private static Message forward(String task, String intent) {
        ObjectNode request = MeshJson.MAPPER.createObjectNode();
        request.put("protocol", MeshProtocol.PROTOCOL);
        request.put("version", MeshProtocol.VERSION);
        request.put("origin", "n9");
        if (intent != null) {
            request.put("intent", intent);
        }
        request.set("mutation", new MutationCodec(new TestEdge()).write(Mutation.of(claim("alice", task))));
        return Message.valueOf(ByteString.copyFrom(MeshJson.bytes(request)));
    }

    /** The query's answer as the follower reads it; fails the test when the query future failed. */
    private static Outcome answer(CompletableFuture<Message> query) throws Exception {
        Message m = query.get(30, TimeUnit.SECONDS);
        return new OutcomeCodec().read(MeshJson.tree(m.getContent().toByteArray()));
    }

    @Test
    void aForwardWhoseDecisionFailsOnTheLeaderIsAnsweredCommitUnknownNotAFailedQuery() throws Exception {
        cluster = new TestCluster(dir, 1);
        MeshNode leader = cluster.awaitLeader();
        MeshStateMachine machine = leader.stateMachine();
        assertThat(answer(machine.query(forward("T1", IntentTags.fresh()))))
                .as("a forward the leader decides").isInstanceOf(Outcome.Decided.class);

        // the node closes under forwards still arriving: its actor refuses them, and handing that refusal to the
        // closed scheduler that encodes answers fails (RejectedExecutionException), as any fault of a decision may
        leader.close();
        CompletableFuture<Message> withIntent = machine.query(forward("T2", IntentTags.fresh()));
        CompletableFuture<Message> withoutIntent = machine.query(forward("T3", null));
        for (CompletableFuture<Message> q : java.util.List.of(withIntent, withoutIntent)) {
            Outcome outcome = answer(q);
            assertThat(outcome).as("a refusal the follower can read").isInstanceOf(Outcome.Refused.class);
            assertThat(((Outcome.Refused) outcome).reason()).as("the decision's fate is unknown")
                    .isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);
        }
        assertThat(leader.forwardDecisionFaults()).as("each fault counted").isEqualTo(2);
    }
}
