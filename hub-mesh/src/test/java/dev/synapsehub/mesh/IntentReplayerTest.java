package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.reply.AuditRecordedReply;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.assertj.core.api.Assertions.assertThat;

/** Seed 001 §9, §11 step 4: replay waits for a leader, keeps the canonical order, and stops where an intent cannot be decided. */
class IntentReplayerTest {
    @TempDir
    Path dir;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    /** A node whose readiness and clock the test sets, and whose submissions the test answers. */
    private static final class FakeNode implements IntentReplayer.Node {
        volatile boolean ready;
        volatile double now = 1000;
        final List<Command> submitted = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<Outcome>> pending = new CopyOnWriteArrayList<>();
        final List<String> reported = new CopyOnWriteArrayList<>();

        @Override
        public boolean readyToReplay() {
            return ready;
        }

        @Override
        public CompletableFuture<Outcome> submit(QueuedIntent intent, Mutation mutation) {
            submitted.add(mutation.command());
            CompletableFuture<Outcome> f = new CompletableFuture<>();
            pending.add(f);
            return f;
        }

        @Override
        public double now() {
            return now;
        }

        @Override
        public void report(QueuedIntent intent, Mutation mutation, Outcome outcome) {
            reported.add(intent.entityId() + ":" + intent.outcome().wire());
        }
    }

    private static Outcome.Decided decided(Reply reply) {
        return new Outcome.Decided(reply, List.of(), null);
    }

    @Test
    void replayWaitsForALeaderThenGoesInOrderAndStopsAtAnIntentThatCannotBeDecided() throws Exception {
        IntentStore store = new IntentStore(dir.resolve("n1.db.intents"), "n1");
        IntentQueue queue = IntentQueue.open(store, "n1", new MutationCodec(new TestEdge()));
        // taken in terms 5, 4, 5: the canonical order is B (epoch 4), then A, C (epoch 5, origin order)
        queue.enqueue(Mutation.of(ClaimCommand.of("a", "A")), 5, "n2", 10, 100);
        queue.enqueue(Mutation.of(ClaimCommand.of("b", "B")), 4, "n2", 9, 101);
        queue.enqueue(Mutation.of(ClaimCommand.of("c", "C")), 5, "n2", 10, 102);
        FakeNode node = new FakeNode();
        IntentReplayer replayer = new IntentReplayer(queue, node, scheduler);

        replayer.tick();
        assertThat(node.submitted).as("no replay before a leader is known (§11 step 4)").isEmpty();

        node.ready = true;
        replayer.tick();
        assertThat(node.submitted).extracting(c -> ((ClaimCommand) c).taskId()).containsExactly("B");
        node.pending.get(0).complete(new Outcome.Refused(Outcome.Reason.BUSY, "no leader in time"));
        TestCluster.await("B's retry stored", () -> queue.queued().get(0).attempts() == 1);
        QueuedIntent retried = store.load().intents().stream().filter(i -> i.entityId().equals("B")).findFirst()
                .orElseThrow();
        assertThat(retried.attempts()).as("the retry counter is durable").isEqualTo(1);
        assertThat(retried.nextAttemptAt()).isGreaterThan(retried.lastAttemptAt());
        replayer.tick();
        assertThat(node.submitted).as("nothing overtakes B, and B waits for its next attempt time").hasSize(1);

        node.now = retried.nextAttemptAt();
        TestCluster.await("the previous pass ended", () -> {
            replayer.tick();
            return node.submitted.size() == 2;
        });
        node.pending.get(1).complete(decided(new AuditRecordedReply("x")));
        TestCluster.await("A submitted after B", () -> node.submitted.size() == 3);
        node.pending.get(2).complete(new Outcome.Replayed("{}"));
        TestCluster.await("C submitted after A", () -> node.submitted.size() == 4);
        node.pending.get(3).complete(decided(new Reply.Denied("C", Refusal.STALE_EPOCH, "stale")));
        TestCluster.await("all reconciled", () -> queue.depth() == 0);
        // an outcome is stored before it is reported: wait for the last report too
        TestCluster.await("all reported", () -> node.reported.size() == 3);

        assertThat(node.submitted).extracting(c -> ((ClaimCommand) c).taskId()).containsExactly("B", "B", "A", "C");
        assertThat(node.reported).containsExactly("B:applied", "A:noop_already_applied", "C:rejected_fenced");
        assertThat(store.load().intents()).allMatch(i -> i.state() == EnvelopeState.RECONCILED);
        assertThat(replayer.reconciled()).isEqualTo(3);
        assertThat(replayer.failures()).isZero();
    }
}
