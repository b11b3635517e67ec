package dev.synapsehub.mesh;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.AppenderBase;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.reply.Reply;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seed 001 §15: sensitive payloads stay out of the logs. Everything this JVM logs (our code at
 * DEBUG, Ratis at INFO) is captured while a mesh queues intents carrying a secret checkpoint
 * and a secret task title, replays them, forwards a secret checkpoint to the leader and refuses
 * a malformed forwarded request whose decoder error would quote the secret: the intent ids are
 * in the log, the secrets nowhere.
 */
class MeshLogRedactionTest {
    private static final String SECRET_CHECKPOINT = "sk-live-4f9a-checkpoint-do-not-log";
    private static final String SECRET_TITLE = "title-with-password-hunter2";
    private static final String SECRET_EPOCH = "epoch-is-a-secret-token-77";
    private static final String SECRET_FORWARDED = "forwarded-checkpoint-secret-99";
    private static final Pattern INTENT = Pattern.compile("intent ([0-9a-f-]{36})");

    @TempDir
    Path dir;
    private TestCluster cluster;
    private final List<String> logged = new CopyOnWriteArrayList<>();
    private final List<Runnable> restore = new ArrayList<>();

    @BeforeEach
    void capture() {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        level("dev.synapsehub", Level.DEBUG);
        level("org.apache.ratis", Level.INFO);
        AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent e) {
                logged.add(e.getLevel() + " " + e.getLoggerName() + " - " + e.getFormattedMessage()
                        + (e.getThrowableProxy() == null ? "" : "\n" + ThrowableProxyUtil.asString(e.getThrowableProxy())));
            }
        };
        appender.setContext(root.getLoggerContext());
        appender.start();
        root.addAppender(appender);
        restore.add(() -> root.detachAppender(appender));
    }

    private void level(String name, Level level) {
        Logger logger = (Logger) LoggerFactory.getLogger(name);
        Level before = logger.getLevel();
        logger.setLevel(level);
        restore.add(() -> logger.setLevel(before));
    }

    @AfterEach
    void stop() throws Exception {
        try {
            if (cluster != null) {
                cluster.close();
            }
        } finally {
            restore.forEach(Runnable::run);
        }
    }

    private static String queuedIntent(Outcome outcome) {
        assertThat(outcome).isInstanceOf(Outcome.Refused.class);
        Outcome.Refused refused = (Outcome.Refused) outcome;
        assertThat(refused.reason()).as(refused.message()).isEqualTo(Outcome.Reason.QUEUED);
        Matcher m = INTENT.matcher(refused.message());
        assertThat(m.find()).isTrue();
        return m.group(1);
    }

    @Test
    void queuedReplayedAndForwardedPayloadsNeverReachTheLogButTheirIntentIdsDo() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        Outcome held = submit(leader, Mutation.of(claim("alice", "T1")));
        long epoch = ((Reply.Granted) ((Outcome.Decided) held).reply()).claim().epoch();
        cluster.awaitApplied(OutcomeCodec.lastSeq(held));

        // quorum lost on a follower: both strong writes become queued intents there
        MeshNode taker = cluster.follower(leader);
        String takerId = taker.nodeId();
        List<String> others = cluster.running().stream().map(MeshNode::nodeId).filter(n -> !n.equals(takerId)).toList();
        for (String id : others) {
            cluster.stop(id);
        }
        String checkpoint = queuedIntent(submit(taker, Mutation.of(
                new CheckpointCommand("alice", "T1", SECRET_CHECKPOINT, epoch))));
        String task = queuedIntent(submit(taker, Mutation.of(LedgerTaskCommand.of("alice", "B1", SECRET_TITLE))));

        // the majority comes back; the taker replays both
        for (String id : others) {
            cluster.start(id);
        }
        TestCluster.await("both intents reconciled", () -> taker.queueDepth() == 0
                && taker.intentCounters().reconciled() == 2);
        assertThat(taker.intents().queue().get(checkpoint).outcome()).isEqualTo(ReplayOutcome.APPLIED);
        assertThat(taker.intents().queue().get(task).outcome()).isEqualTo(ReplayOutcome.APPLIED);

        // a follower forwards a secret checkpoint to the leader
        MeshNode now = cluster.awaitLeader();
        MeshNode follower = cluster.follower(now);
        assertThat(submit(follower, Mutation.of(new CheckpointCommand("alice", "T1", SECRET_FORWARDED, epoch))))
                .isInstanceOf(Outcome.Decided.class);

        // a malformed forwarded request: the decoder's message quotes the bad value
        String request = "{\"protocol\":\"" + MeshProtocol.PROTOCOL + "\",\"version\":\"" + MeshProtocol.VERSION
                + "\",\"origin\":\"n9\",\"mutation\":{\"command\":{\"type\":\"CheckpointCommand\",\"value\":"
                + "{\"agent\":\"alice\",\"taskId\":\"T1\",\"checkpoint\":\"" + SECRET_CHECKPOINT + "\",\"epoch\":\""
                + SECRET_EPOCH + "\"}}}}";
        RaftClientReply refused = forward(now, request);
        assertThat(refused.isSuccess()).isTrue();
        assertThat(refused.getMessage().getContent().toStringUtf8()).contains("INTERNAL_FAULT")
                .doesNotContain(SECRET_EPOCH);

        List<String> lines = List.copyOf(logged);
        assertThat(lines).as("the intents are named").anyMatch(l -> l.contains(checkpoint))
                .anyMatch(l -> l.contains(task));
        assertThat(lines).as("the refusal is logged").anyMatch(l -> l.contains("refusing a forwarded mutation"));
        for (String secret : List.of(SECRET_CHECKPOINT, SECRET_TITLE, SECRET_EPOCH, SECRET_FORWARDED)) {
            assertThat(lines).as("no log line carries " + secret).noneMatch(l -> l.contains(secret));
        }
    }

    /** Sends {@code request} to {@code leader}'s state machine as a follower's forward would. */
    private RaftClientReply forward(MeshNode leader, String request) throws Exception {
        List<RaftPeer> peers = new ArrayList<>();
        for (MeshPeer p : cluster.peers()) {
            peers.add(RaftPeer.newBuilder().setId(p.id()).setAddress(p.address()).build());
        }
        RaftGroup group = RaftGroup.valueOf(RaftGroupId.valueOf(MeshConfig.groupId(cluster.peers())), peers);
        try (RaftClient client = RaftClient.newBuilder().setRaftGroup(group).setProperties(new RaftProperties())
                .setRetryPolicy(RetryPolicies.noRetry()).build()) {
            return client.io().sendReadOnly(Message.valueOf(ByteString.copyFrom(request, StandardCharsets.UTF_8)),
                    RaftPeerId.valueOf(leader.nodeId()));
        }
    }
}
