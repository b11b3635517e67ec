package dev.synapsehub.core.actor;

import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.CommitUnknownException;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The seams a replicated hub uses: hand-over instead of deciding, replicated applies, decision logs. */
class ReplicatedActorTest {
    private final CoordinationState state = new CoordinationState();
    private CoordinationActor actor;

    @AfterEach
    void stop() throws Exception {
        if (actor != null) {
            actor.close();
        }
    }

    private static ClaimCommand claim(String agent, String task) {
        return new ClaimCommand(agent, agent, task, null, null, task, List.of(), null);
    }

    /** A replicated change: the events another node decided for {@code command}. */
    private static Void applyDecided(CoordinationState s, ClaimCommand command) {
        Decision d = s.decide(command, 1000.0);
        for (CoordinationEvent e : d.events()) {
            s.apply(e);
        }
        return null;
    }

    /** A journal whose appends wait for {@code gate} and fail while {@code fail} is set. */
    private static final class GatedJournal extends TestJournal {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch gate;
        final AtomicBoolean fail = new AtomicBoolean();

        GatedJournal(CountDownLatch gate) {
            this.gate = gate;
        }

        @Override
        public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
            entered.countDown();
            try {
                gate.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (fail.get()) {
                throw new JournalException("disk full");
            }
            return super.append(batch);
        }
    }

    @Test
    void aSiteThatDoesNotDecideHandsEveryMutationOverAndDecidesNothing() throws Exception {
        List<Mutation> handed = new ArrayList<>();
        DecisionSite elsewhere = new DecisionSite() {
            @Override
            public boolean decidesHere() {
                return false;
            }

            @Override
            public void handOver(Mutation mutation, CompletableFuture<Outcome> future) {
                handed.add(mutation);
                future.complete(new Outcome.Refused(Outcome.Reason.BUSY, "decided elsewhere"));
            }
        };
        InMemoryJournal journal = new InMemoryJournal();
        actor = new CoordinationActor(state, journal, () -> 1000.0, ActorSettings.DEFAULTS, elsewhere);
        actor.start();
        MutationContext context = new MutationContext() { };
        Mutation m = new Mutation(claim("A", "T1"), null, context);
        Outcome outcome = actor.submit(m).get(5, TimeUnit.SECONDS);

        assertThat(outcome).isEqualTo(new Outcome.Refused(Outcome.Reason.BUSY, "decided elsewhere"));
        assertThat(handed).containsExactly(m);
        assertThat(handed.get(0).context()).isSameAs(context);
        assertThat(actor.read(s -> s.claims().epochCounter()).get(5, TimeUnit.SECONDS)).isZero();
        assertThat(journal.lastSeq()).isZero();
    }

    @Test
    void aMutationTheSiteKnowsAsDecidedIsAnsweredWithThatOutcomeAndDecidedNoMore() throws Exception {
        Mutation retried = Mutation.of(claim("A", "T1"));
        Outcome first = new Outcome.Replayed("the first answer");
        DecisionSite site = new DecisionSite() {
            @Override
            public boolean decidesHere() {
                return true;
            }

            @Override
            public void handOver(Mutation mutation, CompletableFuture<Outcome> future) {
                throw new IllegalStateException("decides here");
            }

            @Override
            public Outcome decidedBefore(Mutation mutation) {
                return mutation == retried ? first : null;
            }
        };
        InMemoryJournal journal = new InMemoryJournal();
        actor = new CoordinationActor(state, journal, () -> 1000.0, ActorSettings.DEFAULTS, site);
        actor.start();

        assertThat(actor.submit(retried).get(5, TimeUnit.SECONDS)).isSameAs(first);
        assertThat(journal.lastSeq()).as("nothing decided, nothing journaled").isZero();
        Outcome fresh = actor.submit(Mutation.of(claim("B", "T1"))).get(5, TimeUnit.SECONDS);
        assertThat(((Outcome.Decided) fresh).reply().granted()).as("T1 was never claimed by A here").isTrue();
    }

    @Test
    void replicatedChangesSurviveTheRollbackOfABatchDecidedAfterThem() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        GatedJournal journal = new GatedJournal(gate);
        actor = new CoordinationActor(state, journal, () -> 1000.0, ActorSettings.DEFAULTS);
        actor.start();
        CompletableFuture<Outcome> first = actor.submit(Mutation.of(claim("A", "T1")));
        assertThat(journal.entered.await(5, TimeUnit.SECONDS)).isTrue();
        journal.fail.set(true); // the first append and the next one fail
        CompletableFuture<Outcome> second = actor.submit(Mutation.of(claim("B", "T2")));
        CompletableFuture<Void> replicated = actor.applyReplicated(s -> applyDecided(s, claim("C", "T3")));
        gate.countDown();

        assertThat(first.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Refused.class);
        assertThat(second.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Refused.class);
        replicated.get(5, TimeUnit.SECONDS);
        assertThat(actor.read(s -> s.claims().snapshot(1000.0)).get(5, TimeUnit.SECONDS))
                .extracting(c -> c.taskId()).containsExactly("T3");
    }

    @Test
    void replicatedJobsAreNotRefusedWhenTheQueueIsFull() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        GatedJournal journal = new GatedJournal(gate);
        actor = new CoordinationActor(state, journal, () -> 1000.0, new ActorSettings(1, 16, 200));
        actor.start();
        CompletableFuture<Outcome> blocked = actor.submit(Mutation.of(claim("A", "T1")));
        assertThat(journal.entered.await(5, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Outcome> queued = actor.submit(Mutation.of(claim("B", "T2")));
        Outcome busy = actor.submit(Mutation.of(claim("C", "T3"))).get(5, TimeUnit.SECONDS);
        assertThat(busy).isInstanceOf(Outcome.Refused.class);
        assertThat(((Outcome.Refused) busy).reason()).isEqualTo(Outcome.Reason.BUSY);

        CompletableFuture<Void> replicated = actor.applyReplicated(s -> applyDecided(s, claim("D", "T4")));
        gate.countDown();
        replicated.get(5, TimeUnit.SECONDS);
        assertThat(blocked.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Decided.class);
        assertThat(queued.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Decided.class);
        assertThat(actor.read(s -> s.claims().snapshot(1000.0)).get(5, TimeUnit.SECONDS))
                .extracting(c -> c.taskId()).containsExactlyInAnyOrder("T1", "T2", "T4");
    }

    @Test
    void aFailingReplicatedJobIsUndoneAndReported() throws Exception {
        actor = new CoordinationActor(state, new InMemoryJournal(), () -> 1000.0, ActorSettings.DEFAULTS);
        actor.start();
        CompletableFuture<Void> job = actor.applyReplicated(s -> {
            applyDecided(s, claim("A", "T1"));
            throw new IllegalStateException("boom");
        });
        assertThatThrownBy(() -> job.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasRootCauseMessage("boom");
        assertThat(actor.read(s -> s.claims().epochCounter()).get(5, TimeUnit.SECONDS)).isZero();
        assertThat(actor.read(CoordinationState::lastSeq).get(5, TimeUnit.SECONDS)).isZero();
    }

    @Test
    void aDecisionLogIsGivenEachDecisionWithItsReplyEventsAndContext() throws Exception {
        List<List<DecidedMutation>> seen = new ArrayList<>();
        DecisionLog log = new TestJournal() {
            @Override
            public List<JournaledEvent> append(List<CoordinationEvent> batch, List<DecidedMutation> decided) {
                seen.add(decided);
                List<CoordinationEvent> flattened = new ArrayList<>();
                decided.forEach(d -> flattened.addAll(d.events()));
                assertThat(flattened).isEqualTo(batch);
                return delegate.append(batch);
            }

            @Override
            public List<JournaledEvent> append(List<CoordinationEvent> batch) {
                throw new AssertionError("a decision log is appended with its decisions");
            }
        };
        actor = new CoordinationActor(state, log, () -> 1000.0, ActorSettings.DEFAULTS);
        actor.start();
        MutationContext context = new MutationContext() { };
        Mutation m = new Mutation(claim("A", "T1"), null, context);
        Outcome outcome = actor.submit(m).get(5, TimeUnit.SECONDS);

        assertThat(seen).hasSize(1);
        DecidedMutation d = seen.get(0).get(0);
        assertThat(d.mutation()).isSameAs(m);
        assertThat(d.reply()).isEqualTo(((Outcome.Decided) outcome).reply());
        assertThat(d.events()).isNotEmpty();
    }

    @Test
    void anAppendWhoseOutcomeIsUnknownIsUndoneAndSaysSo() throws Exception {
        Journal journal = new TestJournal() {
            @Override
            public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
                throw new CommitUnknownException("quorum lost after proposing", null);
            }
        };
        actor = new CoordinationActor(state, journal, () -> 1000.0, ActorSettings.DEFAULTS);
        actor.start();
        Outcome outcome = actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        assertThat(outcome).isInstanceOf(Outcome.Refused.class);
        Outcome.Refused refused = (Outcome.Refused) outcome;
        assertThat(refused.reason()).isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);
        assertThat(refused.message()).doesNotContain("nothing was applied");
        assertThat(actor.read(s -> s.claims().epochCounter()).get(5, TimeUnit.SECONDS)).isZero();
    }

    @Test
    void anUnconfirmedDecisionIsAnsweredAsTheSiteSaysAndStaysUndone() throws Exception {
        Journal journal = new TestJournal() {
            @Override
            public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
                throw new CommitUnknownException("no quorum within the timeout", null);
            }
        };
        List<Mutation> queued = new ArrayList<>();
        DecisionSite queueing = new DecisionSite() {
            @Override
            public boolean decidesHere() {
                return true;
            }

            @Override
            public void handOver(Mutation mutation, CompletableFuture<Outcome> future) {
                throw new AssertionError("decided here");
            }

            @Override
            public Outcome unconfirmed(Mutation mutation, Outcome.Refused refusal) {
                assertThat(refusal.reason()).isEqualTo(Outcome.Reason.COMMIT_UNKNOWN);
                queued.add(mutation);
                return new Outcome.Refused(Outcome.Reason.QUEUED, "queued as intent i-1");
            }
        };
        actor = new CoordinationActor(state, journal, () -> 1000.0, ActorSettings.DEFAULTS, queueing);
        actor.start();
        Mutation m = Mutation.of(claim("A", "T1"));
        Outcome outcome = actor.submit(m).get(5, TimeUnit.SECONDS);

        assertThat(outcome).isEqualTo(new Outcome.Refused(Outcome.Reason.QUEUED, "queued as intent i-1"));
        assertThat(queued).containsExactly(m);
        assertThat(actor.read(s -> s.claims().epochCounter()).get(5, TimeUnit.SECONDS)).as("a queued claim grants"
                + " nothing").isZero();
        assertThat(actor.read(s -> s.claims().snapshot(1000.0)).get(5, TimeUnit.SECONDS)).isEmpty();
    }
}
