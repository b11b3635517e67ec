package dev.synapsehub.mesh;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import dev.synapsehub.core.actor.Mutation;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Failures around a node's asks of the leader ({@link LeaderAsks}) are seen: sends that throw
 * before anything leaves the node are logged once per streak (WARN, with its cause) and each is
 * counted before it is resent, an ask the leader makes of itself is bounded like any other, a leadership listener that throws is logged once and counted, and both reach
 * {@code /metrics} beside the scheduled-task failures.
 */
class LeaderAsksFailuresTest {
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final List<ILoggingEvent> logged = new CopyOnWriteArrayList<>();
    private Runnable detach = () -> { };
    private TestCluster cluster;
    @TempDir
    Path dir;

    @BeforeEach
    void capture() {
        Logger logger = (Logger) LoggerFactory.getLogger(LeaderAsks.class.getName());
        AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent e) {
                logged.add(e);
            }
        };
        appender.setContext(logger.getLoggerContext());
        appender.start();
        logger.addAppender(appender);
        detach = () -> logger.detachAppender(appender);
    }

    @AfterEach
    void stop() throws Exception {
        try {
            scheduler.shutdownNow();
            if (cluster != null) {
                cluster.close();
            }
        } finally {
            detach.run();
        }
    }

    /** A Raft client whose every send throws at once, as a closed or broken one does. */
    private static RaftClientRpc throwingRpc(AtomicInteger sends) {
        return (RaftClientRpc) Proxy.newProxyInstance(RaftClientRpc.class.getClassLoader(),
                new Class<?>[]{RaftClientRpc.class}, (proxy, method, args) -> {
                    if (method.getName().startsWith("sendRequest")) {
                        sends.incrementAndGet();
                        throw new IllegalStateException("the channel is broken");
                    }
                    if (method.getName().equals("close") || method.getName().equals("handleException")) {
                        return null;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void aSendThatThrowsIsLoggedOnceWithItsCauseCountedAndResentUntilTheAskGivesUp() throws Exception {
        AtomicInteger sends = new AtomicInteger();
        LeaderAsks asks = new LeaderAsks("n1", RaftGroupId.randomId(), throwingRpc(sends),
                () -> RaftPeerId.valueOf("n2"), () -> false, scheduler);
        CompletableFuture<?> answer = asks.ask("echo", MeshJson.MAPPER.createObjectNode(), Duration.ofMillis(600));
        assertThatThrownBy(() -> answer.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(ClusterLeaderUnreached());
        assertThat(sends.get()).as("resent after each failed send").isGreaterThan(1);
        assertThat(asks.failures().sends()).isEqualTo(sends.get());
        List<ILoggingEvent> warnings = logged.stream()
                .filter(e -> e.getFormattedMessage().contains("sending the echo ask to the leader n2 failed")).toList();
        assertThat(warnings).as("one WARN for the streak of failed sends, not one per resend").hasSize(1)
                .allSatisfy(e -> {
            assertThat(e.getLevel()).isEqualTo(ch.qos.logback.classic.Level.WARN);
            assertThat(e.getThrowableProxy()).as("the cause is logged").isNotNull();
            assertThat(e.getFormattedMessage()).contains("the channel is broken");
        });
    }

    @Test
    void anAskMadeOnTheLeaderItselfIsBoundedLikeAnyOther() throws Exception {
        AtomicInteger sends = new AtomicInteger();
        LeaderAsks asks = new LeaderAsks("n1", RaftGroupId.randomId(), throwingRpc(sends),
                () -> RaftPeerId.valueOf("n1"), () -> true, scheduler);
        asks.serve("never", body -> new CompletableFuture<>()); // a handler that never answers
        CompletableFuture<?> answer = asks.ask("never", MeshJson.MAPPER.createObjectNode(), Duration.ofMillis(300));
        assertThatThrownBy(() -> answer.get(10, TimeUnit.SECONDS)).as("answered at its bound, not held forever")
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(java.util.concurrent.TimeoutException.class);
        assertThat(sends.get()).as("asked of itself: nothing sent").isZero();
    }

    private static Class<? extends Throwable> ClusterLeaderUnreached() {
        return dev.synapsehub.net.extension.ClusterLeader.Unreached.class;
    }

    @Test
    void aLeadershipListenerThatThrowsIsLoggedOnceCountedOnMetricsAndTheOthersAreStillTold() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        AtomicInteger told = new AtomicInteger();
        for (MeshNode n : cluster.running()) {
            n.leader().onLeadershipChange(() -> {
                throw new IllegalStateException("listener of " + n.nodeId() + " broke");
            });
            n.leader().onLeadershipChange(told::incrementAndGet);
        }
        MeshNode next = cluster.follower(leader);
        MeshAdmin.transferLeader(next.config().peers(), next.nodeId(), Duration.ofSeconds(30));
        TestCluster.await("the new leader told its listeners", () -> next.leaderAskFailures().listeners() > 0);
        assertThat(told.get()).as("a failing listener does not stop the others").isPositive();
        TestCluster.await("each failure logged once, with its cause", () -> next.leaderAskFailures().listeners()
                == logged.stream().filter(e -> e.getFormattedMessage().contains("listener of " + next.nodeId() + " broke")
                        && e.getThrowableProxy() != null).count());
        long before = next.leaderAskFailures().listeners();
        long shown = value(metrics(next), "synapse_mesh_leadership_listener_failures_total");
        assertThat(shown).isPositive().isBetween(before, next.leaderAskFailures().listeners());
        assertThat(metrics(next)).contains("\nsynapse_mesh_leader_ask_send_failures_total 0\n")
                .contains("\nsynapse_mesh_leader_ask_task_failures_total 0\n");
        // the cluster goes on committing
        submit(next, Mutation.of(claim("after", "A")));
    }

    private static long value(String text, String series) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^" + java.util.regex.Pattern.quote(series)
                + " (\\d+)$").matcher(text);
        assertThat(m.find()).as(series + " in\n" + text).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static String metrics(MeshNode node) {
        StringBuilder out = new StringBuilder();
        new MeshFace(node).appendMetrics(out);
        return out.toString();
    }
}
