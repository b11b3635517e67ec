package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.journal.SqliteJournal;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LeadershipCheck} ends a round as soon as a majority can say it is in the leader's term:
 * a leader's actor waits on the round before it answers decisions without events (an agent's
 * activity when it registers), so a round held to its bound holds every write behind it, and a
 * follower's forwards of them time out (commit_unknown, queued) on a mesh that is fine.
 */
class LeadershipCheckTest {
    @TempDir
    Path dir;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        scheduler.shutdownNow();
    }

    private static MeshVoters voters() {
        return new MeshVoters(List.of("n1", "n2", "n3"), List.of());
    }

    private LeadershipCheck check(RaftClientRpc rpc, RaftGroupId group, java.util.function.LongSupplier term,
                                  long boundMillis) {
        return new LeadershipCheck("n2", group, rpc, new AtomicLong(), new ChannelResets(), new LeadershipCheck.Node() {
            @Override
            public boolean decides() {
                return true;
            }

            @Override
            public long term() {
                return term.getAsLong();
            }

            @Override
            public MeshVoters voters() {
                return LeadershipCheckTest.voters();
            }
        }, scheduler, boundMillis);
    }

    /**
     * A node of a just-started mesh has no commit index (-1) until the leader's first heartbeat
     * after its first commit; Ratis 3.2.2 refuses it a stale read from index 0. Here the node
     * never learns one: it runs alone (no quorum, no leader), and the check, on behalf of a voter
     * whose term it is in, must still get its answer.
     */
    @Test
    void aVoterThatKnowsNoCommitIndexYetStillAnswersWithItsTerm() throws Exception {
        List<MeshPeer> peers = List.of(new MeshPeer("n1", "127.0.0.1", TestCluster.freePort()),
                new MeshPeer("n2", "127.0.0.1", TestCluster.freePort()),
                new MeshPeer("n3", "127.0.0.1", TestCluster.freePort()));
        MeshConfig config = new MeshConfig("n1", peers, dir.resolve("n1.db.raft"), TestCluster.COMMIT_TIMEOUT,
                Duration.ofMillis(300), Duration.ofMillis(600), null).withBootstrap(true);
        SqliteJournal local = SqliteJournal.open(dir.resolve("n1.db"));
        MeshNode alone = new MeshNode(config, config.defaultHubId(), local, new CoordinationState(),
                () -> System.currentTimeMillis() / 1000.0, ActorSettings.DEFAULTS, new TestEdge(), MeshCompaction.DEFAULTS);
        closing.add(alone);
        alone.start();
        assertThat(alone.status().commitIndex()).as("the premise: no commit index known").isNegative();
        List<RaftPeer> raftPeers = new ArrayList<>();
        for (MeshPeer p : peers) {
            raftPeers.add(RaftPeer.newBuilder().setId(p.id()).setAddress(p.address()).build());
        }
        RaftGroup group = RaftGroup.valueOf(RaftGroupId.valueOf(config.groupId()), raftPeers);
        RaftClient client = RaftClient.newBuilder().setRaftGroup(group).setProperties(MeshNode.properties(config))
                .setParameters(MeshTls.parameters(null)).setRetryPolicy(RetryPolicies.noRetry()).build();
        closing.add(client);
        LeadershipCheck check = check(client.getClientRpc(), group.getGroupId(), () -> alone.status().term(), 5_000);

        check.confirm().get(30, TimeUnit.SECONDS); // n2 itself and n1 in its term: a majority of three

        assertThat(check.confirmed()).isEqualTo(1);
        assertThat(alone.status().commitIndex()).as("it answered without one").isNegative();
    }

    /** How the fake client answers one peer's asks, in order (the last one repeats). */
    private enum Answer { FAIL_STREAM, TERM, SILENT }

    /**
     * A voter whose first ask failed on a broken stream is asked again (its channel reset once, so
     * the next ask reconnects) and its answer confirms the lead; the other voter never answers.
     */
    @Test
    void aVoterWhoseAskFailedIsAskedAgainWithinTheRoundOnAResetChannel() throws Exception {
        RaftGroupId group = RaftGroupId.randomId();
        Map<String, List<Answer>> script = Map.of("n1", List.of(Answer.FAIL_STREAM, Answer.TERM),
                "n3", List.of(Answer.SILENT));
        Map<String, AtomicInteger> asked = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> resets = new ConcurrentHashMap<>();
        RaftClientRpc rpc = (RaftClientRpc) Proxy.newProxyInstance(RaftClientRpc.class.getClassLoader(),
                new Class<?>[] {RaftClientRpc.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "sendRequestAsyncUnordered" -> {
                            RaftClientRequest r = (RaftClientRequest) args[0];
                            String to = r.getServerId().toString();
                            List<Answer> answers = script.get(to);
                            int n = asked.computeIfAbsent(to, k -> new AtomicInteger()).getAndIncrement();
                            return switch (answers.get(Math.min(n, answers.size() - 1))) {
                                case FAIL_STREAM -> CompletableFuture.failedFuture(new AlreadyClosedException(
                                        "client->" + to + ": Stream completed: no reply for async request"));
                                case TERM -> CompletableFuture.completedFuture(RaftClientReply.newBuilder()
                                        .setRequest(r).setSuccess().setMessage(Message.valueOf(ByteString.copyFrom(
                                                MeshJson.bytes(LeadershipCheck.answer(7))))).build());
                                case SILENT -> new CompletableFuture<RaftClientReply>();
                            };
                        }
                        case "handleException" -> {
                            resets.computeIfAbsent(args[0].toString(), k -> new AtomicInteger()).incrementAndGet();
                            return true;
                        }
                        case "close" -> {
                            return null;
                        }
                        default -> throw new UnsupportedOperationException(method.getName());
                    }
                });
        LeadershipCheck check = check(rpc, group, () -> 7, 2_000);

        check.confirm().get(30, TimeUnit.SECONDS);

        assertThat(check.confirmed()).isEqualTo(1);
        assertThat(asked.get("n1").get()).as("asked again after its stream failed").isEqualTo(2);
        assertThat(resets.get("n1").get()).as("its channel reset once, so the next ask reconnects").isEqualTo(1);
        assertThat(resets).doesNotContainKey("n3");
    }
}
