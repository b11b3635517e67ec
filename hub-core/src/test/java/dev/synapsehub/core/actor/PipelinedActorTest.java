package dev.synapsehub.core.actor;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.CommitUnknownException;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/** A {@link PipelinedLog}: batches proposed while earlier ones commit, settled in order, failed together. */
class PipelinedActorTest {
    private final CoordinationState state = new CoordinationState();
    private final ManualLog log = new ManualLog();
    private CoordinationActor actor;

    @AfterEach
    void stop() throws Exception {
        for (ManualLog.Proposed p : log.proposed) {
            p.outcome.complete(Boolean.TRUE); // let close settle what is left
        }
        if (actor != null) {
            actor.close();
        }
    }

    private static ClaimCommand claim(String agent, String task) {
        return new ClaimCommand(agent, agent, task, null, null, task, List.of(), null);
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("timed out").isNegative();
            Thread.sleep(2);
        }
    }

    private List<String> claimedTasks() throws Exception {
        return actor.read(s -> s.claims().snapshot(s.claims().now()).stream().map(Claim::taskId).sorted().toList())
                .get(10, TimeUnit.SECONDS);
    }

    /** A log whose proposals commit, fail or stay unknown when the test says. */
    private static final class ManualLog extends TestJournal implements PipelinedLog {
        final List<Proposed> proposed = new CopyOnWriteArrayList<>();
        long seq;

        final class Proposed implements Commit {
            final List<CoordinationEvent> batch;
            final long firstSeq;
            /** true: committed; false: certainly not; exceptionally: unknown. */
            final CompletableFuture<Boolean> outcome = new CompletableFuture<>();
            boolean abandoned;

            Proposed(List<CoordinationEvent> batch, long firstSeq) {
                this.batch = batch;
                this.firstSeq = firstSeq;
            }

            @Override
            public CompletableFuture<?> done() {
                return outcome.handle((r, e) -> null);
            }

            @Override
            public List<JournaledEvent> settle() throws JournalException {
                boolean committed;
                try {
                    committed = outcome.get(10, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new CommitUnknownException("unknown", e);
                }
                if (!committed) {
                    throw new JournalException("rejected");
                }
                List<JournaledEvent> out = new ArrayList<>();
                for (int i = 0; i < batch.size(); i++) {
                    out.add(new JournaledEvent(firstSeq + i, batch.get(i)));
                }
                return out;
            }

            @Override
            public void abandoned(boolean unknown) {
                abandoned = true;
            }
        }

        @Override
        public int window() {
            return 4;
        }

        @Override
        public Commit propose(List<CoordinationEvent> batch, List<DecidedMutation> decided) {
            Proposed p = new Proposed(List.copyOf(batch), seq + 1);
            seq += batch.size();
            proposed.add(p);
            return p;
        }
    }

    @Test
    void theNextBatchIsProposedWhileTheFirstCommitsAndAnswersFollowCommitOrder() throws Exception {
        actor = new CoordinationActor(state, log, () -> 1000.0, ActorSettings.DEFAULTS);
        actor.start();
        List<String> answered = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Outcome> a = actor.submit(Mutation.of(claim("alice", "A")));
        a.thenRun(() -> answered.add("A"));
        await(() -> log.proposed.size() == 1);
        CompletableFuture<Outcome> b = actor.submit(Mutation.of(claim("bob", "B")));
        b.thenRun(() -> answered.add("B"));
        await(() -> log.proposed.size() == 2); // proposed while the first is still in flight
        log.proposed.get(1).outcome.complete(Boolean.TRUE);
        Thread.sleep(100);
        assertThat(b).as("not answered before the batch under it commits").isNotDone();
        log.proposed.get(0).outcome.complete(Boolean.TRUE);
        assertThat(((Outcome.Decided) a.get(10, TimeUnit.SECONDS)).reply().granted()).isTrue();
        assertThat(((Outcome.Decided) b.get(10, TimeUnit.SECONDS)).reply().granted()).isTrue();
        assertThat(answered).containsExactly("A", "B");
        assertThat(actor.metrics().inFlightMax()).isEqualTo(2);
        assertThat(claimedTasks()).containsExactly("A", "B");
    }

    @Test
    void aFailedProposalUndoesAndRefusesEveryBatchOnTopOfItAndKeepsTheOnesCommittedBefore() throws Exception {
        actor = new CoordinationActor(state, log, () -> 1000.0, ActorSettings.DEFAULTS);
        actor.start();
        CompletableFuture<Outcome> a = actor.submit(Mutation.of(claim("alice", "A")));
        await(() -> log.proposed.size() == 1);
        CompletableFuture<Outcome> b = actor.submit(Mutation.of(claim("bob", "B")));
        await(() -> log.proposed.size() == 2);
        CompletableFuture<Outcome> c = actor.submit(Mutation.of(claim("carol", "C")));
        await(() -> log.proposed.size() == 3);
        log.proposed.get(0).outcome.complete(Boolean.TRUE);
        assertThat(((Outcome.Decided) a.get(10, TimeUnit.SECONDS)).reply().granted()).isTrue();
        log.proposed.get(2).outcome.complete(Boolean.TRUE); // says committed, but it was decided on B
        log.proposed.get(1).outcome.complete(Boolean.FALSE);
        assertThat(((Outcome.Refused) b.get(10, TimeUnit.SECONDS)).reason()).isEqualTo(Outcome.Reason.JOURNAL_FAILED);
        assertThat(((Outcome.Refused) c.get(10, TimeUnit.SECONDS)).reason()).isEqualTo(Outcome.Reason.JOURNAL_FAILED);
        assertThat(log.proposed.get(2).abandoned).isTrue();
        assertThat(claimedTasks()).as("A committed before the failure and stays; B and C are undone")
                .containsExactly("A");
        // the actor goes on from the state as committed
        CompletableFuture<Outcome> d = actor.submit(Mutation.of(claim("dave", "B")));
        await(() -> log.proposed.size() == 4);
        log.proposed.get(3).outcome.complete(Boolean.TRUE);
        assertThat(((Outcome.Decided) d.get(10, TimeUnit.SECONDS)).reply().granted()).isTrue();
        assertThat(claimedTasks()).containsExactly("A", "B");
    }

    @Test
    void anUnknownOutcomeIsHandedToTheSiteForEveryBatchOnTopOfIt() throws Exception {
        List<Mutation> unconfirmed = new CopyOnWriteArrayList<>();
        DecisionSite site = new DecisionSite() {
            @Override
            public boolean decidesHere() {
                return true;
            }

            @Override
            public void handOver(Mutation mutation, CompletableFuture<Outcome> future) {
                throw new AssertionError();
            }

            @Override
            public Outcome unconfirmed(Mutation mutation, Outcome.Refused refusal) {
                unconfirmed.add(mutation);
                return new Outcome.Refused(Outcome.Reason.QUEUED, "queued");
            }
        };
        actor = new CoordinationActor(state, log, () -> 1000.0, ActorSettings.DEFAULTS, site);
        actor.start();
        Mutation first = Mutation.of(claim("alice", "A"));
        Mutation second = Mutation.of(claim("bob", "B"));
        CompletableFuture<Outcome> a = actor.submit(first);
        await(() -> log.proposed.size() == 1);
        CompletableFuture<Outcome> b = actor.submit(second);
        await(() -> log.proposed.size() == 2);
        log.proposed.get(0).outcome.completeExceptionally(new IllegalStateException("no quorum in time"));
        assertThat(((Outcome.Refused) a.get(10, TimeUnit.SECONDS)).reason()).isEqualTo(Outcome.Reason.QUEUED);
        assertThat(((Outcome.Refused) b.get(10, TimeUnit.SECONDS)).reason()).isEqualTo(Outcome.Reason.QUEUED);
        assertThat(unconfirmed).containsExactly(first, second);
        assertThat(claimedTasks()).isEmpty();
    }
}
