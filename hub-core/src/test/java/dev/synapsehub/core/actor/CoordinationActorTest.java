package dev.synapsehub.core.actor;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The actor's contract in brief: decide, journal, then publish; failures undo the batch. */
class CoordinationActorTest {
    private final CoordinationState state = new CoordinationState();
    private CoordinationActor actor;

    @AfterEach
    void stop() throws Exception {
        if (actor != null) {
            actor.close();
        }
    }

    private CoordinationActor start(Journal journal) {
        actor = new CoordinationActor(state, journal, () -> 1000.0, ActorSettings.DEFAULTS);
        actor.start();
        return actor;
    }

    /** What a test journal does on append: delegate, throw, or wait first. */
    @FunctionalInterface
    private interface AppendStep {
        List<JournaledEvent> append(InMemoryJournal delegate, List<CoordinationEvent> batch) throws JournalException;
    }

    /** An in-memory journal whose appends go through {@code step}. */
    private static Journal journal(AppendStep step) {
        InMemoryJournal delegate = new InMemoryJournal();
        return new Journal() {
            @Override
            public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
                return step.append(delegate, batch);
            }

            @Override
            public void replay(Consumer<JournaledEvent> sink) {
            }

            @Override
            public long lastSeq() {
                return delegate.lastSeq();
            }

            @Override
            public void close() {
            }
        };
    }

    /** An in-memory journal whose appends fail while {@code fail} is set. */
    private static Journal failing(AtomicBoolean fail) {
        return journal((delegate, batch) -> {
            if (fail.get()) {
                throw new JournalException("disk full");
            }
            return delegate.append(batch);
        });
    }

    private static ClaimCommand claim(String agent, String task) {
        return new ClaimCommand(agent, agent, task, null, null, task, List.of(), null);
    }

    @Test
    void grantIsDecidedCommittedAndVisibleToLaterReads() throws Exception {
        start(new InMemoryJournal());
        Outcome outcome = actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        assertThat(outcome).isInstanceOf(Outcome.Decided.class);
        Outcome.Decided decided = (Outcome.Decided) outcome;
        assertThat(decided.reply().granted()).isTrue();
        assertThat(decided.committed()).extracting(JournaledEvent::seq).containsExactly(1L);
        List<Claim> live = actor.read(s -> s.claims().snapshot(1000.0)).get(5, TimeUnit.SECONDS);
        assertThat(live).extracting(Claim::owner).containsExactly("A");
    }

    @Test
    void theObserverIsToldCommittedEventsOnlyAfterTheirCommit() throws Exception {
        AtomicBoolean fail = new AtomicBoolean(false);
        start(failing(fail));
        List<JournaledEvent> published = new java.util.concurrent.CopyOnWriteArrayList<>();
        actor.observe(new ActorObserver() {
            @Override
            public void published(List<JournaledEvent> committed) {
                published.addAll(committed);
            }
        });
        actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        assertThat(published).extracting(JournaledEvent::seq).containsExactly(1L);
        assertThat(published.get(0).event().kind()).isEqualTo("claim");
        fail.set(true);
        actor.submit(Mutation.of(claim("B", "T2"))).get(5, TimeUnit.SECONDS);
        assertThat(published).as("a batch that did not commit is never published").hasSize(1);
    }

    @Test
    void failedAppendRefusesTheBatchAndLeavesStateUntouched() throws Exception {
        AtomicBoolean fail = new AtomicBoolean(false);
        start(failing(fail));
        actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        fail.set(true);
        Outcome refused = actor.submit(Mutation.of(new ReleaseCommand("A", "T1", null))).get(5, TimeUnit.SECONDS);
        Outcome refused2 = actor.submit(Mutation.of(claim("B", "T2"))).get(5, TimeUnit.SECONDS);
        assertThat(refused).isEqualTo(new Outcome.Refused(Outcome.Reason.JOURNAL_FAILED,
                "The journal could not commit; nothing was applied."));
        assertThat(refused2).isInstanceOf(Outcome.Refused.class);
        List<Claim> live = actor.read(s -> s.claims().snapshot(1000.0)).get(5, TimeUnit.SECONDS);
        assertThat(live).extracting(Claim::taskId).containsExactly("T1");
        assertThat(actor.read(s -> s.claims().epochCounter()).get(5, TimeUnit.SECONDS)).isEqualTo(1L);
        fail.set(false);
        Outcome later = actor.submit(Mutation.of(claim("B", "T2"))).get(5, TimeUnit.SECONDS);
        assertThat(((Outcome.Decided) later).reply().granted()).isTrue();
    }

    @Test
    void keyedRetryReplaysAndChangedRequestConflicts() throws Exception {
        start(new InMemoryJournal());
        ResponseRenderer renderer = (reply, at) -> "{\"granted\":" + reply.granted() + ",\"task\":\"" + reply.taskId() + "\"}";
        String key = Idempotency.key("A", "claim", "k1");
        Outcome first = actor.submit(new Mutation(claim("A", "T1"), new Idempotency(key, "d1", renderer)))
                .get(5, TimeUnit.SECONDS);
        Outcome retry = actor.submit(new Mutation(claim("A", "T1"), new Idempotency(key, "d1", renderer)))
                .get(5, TimeUnit.SECONDS);
        Outcome changed = actor.submit(new Mutation(claim("A", "T9"), new Idempotency(key, "d2", renderer)))
                .get(5, TimeUnit.SECONDS);
        assertThat(((Outcome.Decided) first).storedResponse()).isEqualTo("{\"granted\":true,\"task\":\"T1\"}");
        assertThat(retry).isEqualTo(new Outcome.Replayed("{\"granted\":true,\"task\":\"T1\"}"));
        assertThat(changed).isEqualTo(new Outcome.IdempotencyConflict("{\"granted\":true,\"task\":\"T1\"}"));
        assertThat(actor.read(s -> s.claims().epochCounter()).get(5, TimeUnit.SECONDS)).isEqualTo(1L);
    }

    /** A journal whose first {@code pass} appends succeed, whose next one waits for {@code release}, then one fails. */
    private static Journal blockThenFail(int pass, CountDownLatch entered, CountDownLatch release) {
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        return journal((delegate, batch) -> {
            int call = calls.incrementAndGet();
            if (call == pass + 1) {
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    throw new JournalException("interrupted");
                }
            } else if (call == pass + 2) {
                throw new JournalException("disk full");
            }
            return delegate.append(batch);
        });
    }

    @Test
    void aKeyedRetryOfACommittedDecisionKeepsItsAnswerWhenTheBatchItLandsInFails() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        start(blockThenFail(1, entered, release));
        ResponseRenderer renderer = (reply, at) -> "{\"granted\":" + reply.granted() + ",\"task\":\"" + reply.taskId() + "\"}";
        Idempotency idem = new Idempotency(Idempotency.key("A", "claim", "k"), "d", renderer);
        Outcome first = actor.submit(new Mutation(claim("A", "T1"), idem)).get(5, TimeUnit.SECONDS);
        assertThat(((Outcome.Decided) first).reply().granted()).isTrue();

        CompletableFuture<Outcome> blocker = actor.submit(Mutation.of(claim("B", "T2")));
        assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Outcome> retry = actor.submit(new Mutation(claim("A", "T1"), idem));
        CompletableFuture<Outcome> other = actor.submit(Mutation.of(claim("C", "T3")));
        release.countDown(); // the retry and the other claim are decided together, and that batch fails

        assertThat(blocker.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Decided.class);
        assertThat(other.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Refused.class);
        assertThat(retry.get(5, TimeUnit.SECONDS)).as("the first decision committed: its answer stands")
                .isEqualTo(new Outcome.Replayed("{\"granted\":true,\"task\":\"T1\"}"));
    }

    @Test
    void aKeyedRetryOfADecisionInTheSameFailedBatchIsRefusedWithIt() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        start(blockThenFail(0, entered, release));
        CompletableFuture<Outcome> blocker = actor.submit(Mutation.of(claim("B", "T2")));
        assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
        Idempotency idem = new Idempotency(Idempotency.key("A", "claim", "k"), "d", (reply, at) -> "r");
        CompletableFuture<Outcome> first = actor.submit(new Mutation(claim("A", "T1"), idem));
        CompletableFuture<Outcome> retry = actor.submit(new Mutation(claim("A", "T1"), idem));
        release.countDown(); // the first and its retry land in one batch, which fails

        assertThat(blocker.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Decided.class);
        assertThat(first.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Refused.class);
        assertThat(retry.get(5, TimeUnit.SECONDS)).as("nothing was applied, so nothing is replayed")
                .isInstanceOf(Outcome.Refused.class);
        assertThat(actor.remembers(idem.key())).isFalse();
    }

    @Test
    void deniedKeyedRequestIsNotRemembered() throws Exception {
        start(new InMemoryJournal());
        actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        ResponseRenderer renderer = (reply, at) -> "r";
        String key = Idempotency.key("B", "claim", "k");
        Outcome denied = actor.submit(new Mutation(claim("B", "T1"), new Idempotency(key, "d", renderer)))
                .get(5, TimeUnit.SECONDS);
        assertThat(((Outcome.Decided) denied).reply()).isInstanceOf(Reply.Denied.class);
        assertThat(actor.read(s -> s.idempotency().find(key)).get(5, TimeUnit.SECONDS)).isEmpty();
    }

    @Test
    void aKeyedHandoffRetriedWhileTheRecipientIsOfflineReplaysTheFirstAnswer() throws Exception {
        start(new InMemoryJournal());
        actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        ResponseRenderer renderer = (reply, at) -> "{\"handed\":\"" + reply.taskId() + "\"}";
        Idempotency idem = new Idempotency(Idempotency.key("A", "handoff", "h1"), "d", renderer);
        Outcome first = actor.submit(new Mutation(new HandoffCommand("A", "T1", "B", true, "B", null, null), idem))
                .get(5, TimeUnit.SECONDS);
        assertThat(((Outcome.Decided) first).reply().granted()).isTrue();
        Outcome retry = actor.submit(new Mutation(new HandoffCommand("A", "T1", "B", false, null, null, null), idem))
                .get(5, TimeUnit.SECONDS);
        assertThat(retry).isEqualTo(new Outcome.Replayed("{\"handed\":\"T1\"}"));
        assertThat(actor.priorAnswer(idem.key(), "d")).contains(new Outcome.Replayed("{\"handed\":\"T1\"}"));
        assertThat(actor.priorAnswer(idem.key(), "other")).contains(new Outcome.IdempotencyConflict("{\"handed\":\"T1\"}"));

        // a new key is decided now: an offline recipient is refused and the key is not remembered
        actor.submit(Mutation.of(claim("A", "T2"))).get(5, TimeUnit.SECONDS);
        Idempotency fresh = new Idempotency(Idempotency.key("A", "handoff", "h2"), "d2", renderer);
        Outcome offline = actor.submit(new Mutation(new HandoffCommand("A", "T2", "C", false, null, null, null), fresh))
                .get(5, TimeUnit.SECONDS);
        Reply.Denied denied = (Reply.Denied) ((Outcome.Decided) offline).reply();
        assertThat(denied.refusal()).isEqualTo(Refusal.TARGET_OFFLINE);
        assertThat(denied.message()).isEqualTo("Handoff target 'C' is not online.");
        assertThat(actor.remembers(fresh.key())).isFalse();
    }

    @Test
    void theCommittedLedgerViewShowsOnlyCommittedKeys() throws Exception {
        AtomicBoolean fail = new AtomicBoolean(true);
        start(failing(fail));
        Idempotency idem = new Idempotency(Idempotency.key("A", "claim", "k"), "d", (reply, at) -> "r");
        Outcome refused = actor.submit(new Mutation(claim("A", "T1"), idem)).get(5, TimeUnit.SECONDS);
        assertThat(refused).isInstanceOf(Outcome.Refused.class);
        assertThat(actor.remembers(idem.key())).as("a rolled-back key is never visible").isFalse();
        fail.set(false);
        actor.submit(new Mutation(claim("A", "T1"), idem)).get(5, TimeUnit.SECONDS);
        assertThat(actor.remembers(idem.key())).isTrue();
    }

    @Test
    void afterCloseSubmissionsAreRefused() throws Exception {
        start(new InMemoryJournal());
        actor.close();
        Outcome outcome = actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        assertThat(outcome).isInstanceOf(Outcome.Refused.class);
        assertThat(((Outcome.Refused) outcome).reason()).isEqualTo(Outcome.Reason.SHUTTING_DOWN);
        actor = null;
    }

    /** Stands for any {@link Error} on the writer thread (out of memory, a stack overflow, a linkage error). */
    private static final class InjectedError extends Error {
        InjectedError() {
            super("injected");
        }
    }

    @Test
    void anErrorStopsTheWriterForGoodAndEveryRequestIsRefusedInsteadOfLeftWaiting() throws Exception {
        start(new InMemoryJournal());
        CompletableFuture<Throwable> told = new CompletableFuture<>();
        actor.onFailure(told::complete);

        CompletableFuture<Object> fatal = actor.read(s -> {
            throw new InjectedError();
        });

        assertThat(told.get(5, TimeUnit.SECONDS)).isInstanceOf(InjectedError.class);
        assertThat(actor.failure()).containsInstanceOf(InjectedError.class);
        assertThat(actor.metrics().writerFailures()).isEqualTo(1);
        assertThatThrownBy(() -> fatal.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(ActorRefusedException.class);
        // later work is answered at once with the reason, never queued for a thread that is gone
        Outcome later = actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        assertThat(later).isInstanceOf(Outcome.Refused.class);
        assertThat(((Outcome.Refused) later).reason()).isEqualTo(Outcome.Reason.WRITER_FAILED);
        assertThatThrownBy(() -> actor.read(s -> 1).get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(ActorRefusedException.class)
                .cause().satisfies(e -> assertThat(((ActorRefusedException) e).refusal().reason())
                        .isEqualTo(Outcome.Reason.WRITER_FAILED));
        // a listener that comes late is told too
        CompletableFuture<Throwable> lateListener = new CompletableFuture<>();
        actor.onFailure(lateListener::complete);
        assertThat(lateListener.getNow(null)).isInstanceOf(InjectedError.class);
    }

    @Test
    void anErrorDuringTheAppendRefusesTheBatchAsOfUnknownOutcomeAndWhatIsQueuedAsFailed() throws Exception {
        CountDownLatch appendEntered = new CountDownLatch(1);
        CountDownLatch releaseAppend = new CountDownLatch(1);
        start(journal((delegate, batch) -> {
            appendEntered.countDown();
            try {
                releaseAppend.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new InjectedError();
        }));
        CompletableFuture<Outcome> inFlight = actor.submit(Mutation.of(claim("A", "T1")));
        assertThat(appendEntered.await(5, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Outcome> queued = actor.submit(Mutation.of(claim("B", "T2")));
        releaseAppend.countDown();

        Outcome.Refused first = (Outcome.Refused) inFlight.get(5, TimeUnit.SECONDS);
        assertThat(first.reason()).isEqualTo(Outcome.Reason.WRITER_FAILED);
        assertThat(first.message()).contains("may or may not have been applied");
        Outcome.Refused second = (Outcome.Refused) queued.get(5, TimeUnit.SECONDS);
        assertThat(second.reason()).isEqualTo(Outcome.Reason.WRITER_FAILED);
        assertThat(second.message()).doesNotContain("may or may not");
        actor.close(); // orderly even though the thread is gone
        actor = null;
    }

    /** Blocks the actor on a read until {@code release}, so what is submitted meanwhile forms one batch. */
    private void holdTheWriter(CountDownLatch release) throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        actor.read(s -> {
            held.countDown();
            try {
                return release.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(held.await(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aReadAmongMutationsSeesWhatCameBeforeItAndDoesNotSplitTheGroupCommit() throws Exception {
        start(new InMemoryJournal());
        CountDownLatch release = new CountDownLatch(1);
        holdTheWriter(release);
        CompletableFuture<Outcome> first = actor.submit(Mutation.of(claim("A", "T1")));
        CompletableFuture<Integer> between = actor.read(s -> s.claims().liveCount());
        CompletableFuture<Outcome> second = actor.submit(Mutation.of(claim("B", "T2")));
        long commitsBefore = actor.metrics().batches();
        release.countDown();

        assertThat(between.get(5, TimeUnit.SECONDS)).isEqualTo(1); // T1, not T2
        assertThat(first.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Decided.class);
        assertThat(second.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Decided.class);
        assertThat(actor.metrics().batches() - commitsBefore).as("journal transactions").isEqualTo(1);
    }

    @Test
    void aReadHeldForAFailedBatchIsAnsweredWithoutTheRefusedMutations() throws Exception {
        AtomicBoolean fail = new AtomicBoolean(true);
        start(failing(fail));
        CountDownLatch release = new CountDownLatch(1);
        holdTheWriter(release);
        CompletableFuture<Outcome> first = actor.submit(Mutation.of(claim("A", "T1")));
        CompletableFuture<Integer> between = actor.read(s -> s.claims().liveCount());
        release.countDown();

        assertThat(first.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Refused.class);
        assertThat(between.get(5, TimeUnit.SECONDS)).as("T1 never committed").isZero();
    }

    @Test
    void givingUpABatchInDoubtWhileClosingDecidesNothingMoreOnTheRolledBackState() throws Exception {
        InMemoryJournal delegate = new InMemoryJournal();
        java.util.concurrent.atomic.AtomicInteger appends = new java.util.concurrent.atomic.AtomicInteger();
        CountDownLatch inDoubt = new CountDownLatch(1);
        start(new Journal() {
            @Override
            public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
                if (appends.incrementAndGet() == 1) { // written, but its fsync failed: maybe in the journal
                    inDoubt.countDown();
                    throw new dev.synapsehub.core.journal.JournalInDoubtException("fsync failed",
                            delegate.lastSeq() + 1, null);
                }
                return delegate.append(batch);
            }

            @Override
            public boolean settle(long firstSeq) throws JournalException {
                throw new JournalException("the disk still fails");
            }

            @Override
            public void replay(Consumer<JournaledEvent> sink) {
            }

            @Override
            public long lastSeq() {
                return delegate.lastSeq();
            }

            @Override
            public void close() {
            }
        });
        CompletableFuture<Outcome> doubtful = actor.submit(Mutation.of(claim("A", "T1")));
        assertThat(inDoubt.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Outcome> queued = actor.submit(Mutation.of(claim("B", "T1")));
        CoordinationActor closing = actor;
        actor = null;
        closing.close(); // gives the doubtful batch up after ten more failed settles

        assertThat(doubtful.get(5, TimeUnit.SECONDS)).isInstanceOfSatisfying(Outcome.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(Outcome.Reason.COMMIT_UNKNOWN));
        // T1 may be A's in the journal: granting it to B now would journal a contradiction
        assertThat(queued.get(5, TimeUnit.SECONDS)).isInstanceOf(Outcome.Refused.class);
        assertThat(appends.get()).as("nothing appended after the batch in doubt").isEqualTo(1);
    }
}
