package dev.synapsehub.core.state;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.CardCommand;
import dev.synapsehub.core.command.ChannelCommand;
import dev.synapsehub.core.command.ChatCommand;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.IdentityPinCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.LedgerTaskUpdateCommand;
import dev.synapsehub.core.command.MemoryCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.ResourceOfferCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.IdempotencyRecordedEvent;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * INV-JA-2 for the whole state: one batch that changes every registry, several times over the
 * same entities, is undone in one pass by the state's one undo log, and leaves every registry
 * (and the views the edge reads) exactly as before. Undoing oldest first, or skipping a
 * registry, leaves a different image.
 */
class WholeStateRollbackTest {
    private static final double T = 1000; // one hub time throughout: the claim clock never goes back
    private static final int LEDGER_CAPACITY = 3; // small, so the batch evicts and rollback must restore order

    private static Decision run(CoordinationState state, Command command) {
        Decision d = state.decide(command, T);
        assertThat(d.events()).as("%s changes something", command).isNotEmpty();
        d.events().forEach(state::apply);
        return d;
    }

    private static IdempotencyRecordedEvent keyed(String key, String response) {
        return new IdempotencyRecordedEvent(T, key, "digest-" + key, response);
    }

    private static ChatCommand chat(String from) {
        return new ChatCommand(from, null, null, null, null, false, List.of(), s -> "{\"msg_id\":" + s.msgId() + "}");
    }

    /** Committed content in every registry, as journaled events (so a replay can rebuild it). */
    private static List<CoordinationEvent> seed(CoordinationState state) {
        List<CoordinationEvent> events = new ArrayList<>();
        for (Command c : List.<Command>of(
                new ClaimCommand("A", "A", "T0", null, null, "wt0", List.of("src"), null),
                LedgerTaskCommand.of("A", "B1", "board task"),
                new ResourceOfferCommand("A", "gpu", "g1", 1, "{}"),
                chat("A"),
                new ChannelCommand("A", ChannelCommand.Op.CREATE, "ops", null, "ops"),
                new ChannelCommand("A", ChannelCommand.Op.CREATE, "dev", null, "dev"),
                new CardCommand("A", "A", "{\"v\":1}"),
                new IdentityPinCommand.Pin("A", "kid-a", "pk-a"),
                new IdentityPinCommand.Pin("B", "kid-b", "pk-b"),
                new MemoryCommand("A", MemoryCommand.Kind.FINDING, "{\"f\":1}", 10))) {
            events.addAll(run(state, c).events());
        }
        for (IdempotencyRecordedEvent e : List.of(keyed("k0", "first-0"), keyed("k1", "first-1"))) {
            state.apply(e);
            events.add(e);
        }
        return events;
    }

    /** A batch that touches every registry, most of them several times over the same entity. */
    private static void everyRegistryTwice(CoordinationState state) {
        run(state, new ClaimCommand("C", "C", "T1", null, null, "wt1", List.of("lib"), null));
        run(state, new CheckpointCommand("C", "T1", "cp1", null));
        run(state, new HandoffCommand("C", "T1", "D", true, "D", "yours", null)); // claims + board note
        run(state, new CheckpointCommand("A", "T0", "cp0", null));
        run(state, new ReleaseCommand("A", "T0", null, "done")); // posts an assessment note
        run(state, LedgerTaskUpdateCommand.status("A", "B1", "in_progress"));
        run(state, LedgerTaskCommand.of("C", "B2", "another"));
        run(state, new ResourceOfferCommand("A", "gpu", "g1", 4, "{\"v\":2}")); // refresh
        run(state, new ResourceOfferCommand("C", "cpu", "c1", 2, "{}"));
        run(state, chat("C"));
        run(state, chat("A"));
        run(state, new ChannelCommand("A", ChannelCommand.Op.INVITE, "ops", "C", null));
        run(state, new ChannelCommand("C", ChannelCommand.Op.JOIN, "ops", null, null));
        run(state, new ChannelCommand("A", ChannelCommand.Op.LEAVE, "ops", null, null)); // C owns it now
        run(state, new ChannelCommand("C", ChannelCommand.Op.LEAVE, "ops", null, null)); // the last: ops is deleted
        // an unpin (a reclaim's): undone, A's pin is back before B's, where a replay has it
        state.apply(new dev.synapsehub.core.event.IdentityPinEvent(5, dev.synapsehub.core.event.IdentityPinEvent.Op.UNPIN,
                "A", "kid-a", "pk-a"));
        run(state, new CardCommand("A", "A", "{\"v\":2}"));
        run(state, new CardCommand("C", "C", "{\"v\":1}"));
        run(state, new IdentityPinCommand.Pin("C", "kid-c", "pk-c"));
        run(state, new MemoryCommand("A", MemoryCommand.Kind.FINDING, "{\"f\":2}", 10));
        run(state, new MemoryCommand("C", MemoryCommand.Kind.FINDING, "{\"f\":3}", 10));
        state.apply(keyed("k0", "second-0")); // re-recorded: moves to the young end
        state.apply(keyed("k2", "first-2"));
        state.apply(keyed("k3", "first-3")); // evicts k1
    }

    @Test
    void aBatchOverEveryRegistryRollsBackToExactlyTheImageBeforeIt() {
        CoordinationState state = new CoordinationState(RegistryLimits.DEFAULTS, LEDGER_CAPACITY);
        List<CoordinationEvent> committed = seed(state);
        StateImage before = state.image();

        state.beginBatch();
        everyRegistryTwice(state);
        StateImage during = state.image();
        assertThat(during.claims()).isNotEqualTo(before.claims());
        assertThat(during.idempotency()).isNotEqualTo(before.idempotency());
        assertThat(during.board()).isNotEqualTo(before.board());
        assertThat(during.resources()).isNotEqualTo(before.resources());
        assertThat(during.messaging()).isNotEqualTo(before.messaging());
        assertThat(during.channels()).isNotEqualTo(before.channels());
        assertThat(during.cards()).isNotEqualTo(before.cards());
        assertThat(during.pins()).isNotEqualTo(before.pins());
        assertThat(during.findingCounts()).isNotEqualTo(before.findingCounts());
        state.rollbackBatch();

        assertThat(state.image()).isEqualTo(before);
        // the views other threads read show the committed state, before and after
        assertThat(state.idempotency().findCommitted("k0")).map(IdempotencyLedger.Entry::response).contains("first-0");
        assertThat(state.idempotency().findCommitted("k1")).isPresent();
        assertThat(state.idempotency().findCommitted("k3")).isEmpty();
        assertThat(state.pins().findCommitted("C")).isEmpty();
        assertThat(state.pins().findCommitted("A")).isPresent();

        // and it is the state a replay of the committed events rebuilds
        CoordinationState replayed = new CoordinationState(RegistryLimits.DEFAULTS, LEDGER_CAPACITY);
        committed.forEach(replayed::apply);
        assertThat(replayed.image()).isEqualTo(state.image());

        // the same batch, committed this time, gives what it gave the first time
        state.beginBatch();
        everyRegistryTwice(state);
        state.commitBatch();
        assertThat(state.image()).isEqualTo(during);
        assertThat(state.idempotency().findCommitted("k1")).isEmpty();
        assertThat(state.pins().findCommitted("C")).isPresent();
    }

    /** An in-memory journal whose appends fail while {@code fail} is set. */
    private static Journal failing(AtomicBoolean fail) {
        InMemoryJournal delegate = new InMemoryJournal();
        return new Journal() {
            @Override
            public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
                if (fail.get()) {
                    throw new JournalException("disk full");
                }
                return delegate.append(batch);
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

    private static Mutation keyedMutation(Command command, String rawKey) {
        return new Mutation(command, new Idempotency(Idempotency.key("C", "handoff", rawKey), "digest",
                (reply, at) -> "{\"ok\":true}"));
    }

    @Test
    void aMultiRegistryBatchWhoseJournalWriteFailsLeavesEveryRegistryAsBefore() throws Exception {
        CoordinationState state = new CoordinationState();
        AtomicBoolean fail = new AtomicBoolean(false);
        CoordinationActor actor = new CoordinationActor(state, failing(fail), () -> T, ActorSettings.DEFAULTS);
        actor.start();
        try {
            for (Command c : List.<Command>of(new ClaimCommand("C", "C", "T1", null, null, "wt1", List.of(), null),
                    LedgerTaskCommand.of("A", "B1", "board task"), chat("A"),
                    new ResourceOfferCommand("A", "gpu", "g0", 1, "{}"), // the resource clock is at T (expiry is not undone)
                    new IdentityPinCommand.Pin("A", "kid-a", "pk-a"))) {
                assertThat(actor.submit(Mutation.of(c)).get(10, TimeUnit.SECONDS)).isInstanceOf(Outcome.Decided.class);
            }
            StateImage before = actor.read(CoordinationState::image).get(10, TimeUnit.SECONDS);
            fail.set(true);

            // hold the writer so every mutation below is decided into one batch, one journal write
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch held = new CountDownLatch(1);
            actor.read(s -> {
                held.countDown();
                try {
                    return release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            Mutation handoff = keyedMutation(new HandoffCommand("C", "T1", "D", true, "D", "yours", null), "h1");
            List<CompletableFuture<Outcome>> refused = new ArrayList<>();
            for (Mutation m : List.of(handoff,
                    Mutation.of(LedgerTaskUpdateCommand.status("A", "B1", "in_progress")),
                    Mutation.of(new ResourceOfferCommand("A", "gpu", "g1", 1, "{}")),
                    Mutation.of(chat("C")),
                    Mutation.of(new ChannelCommand("A", ChannelCommand.Op.CREATE, "ops", null, "ops")),
                    Mutation.of(new CardCommand("C", "C", "{}")),
                    Mutation.of(new IdentityPinCommand.Pin("C", "kid-c", "pk-c")),
                    Mutation.of(new MemoryCommand("C", MemoryCommand.Kind.FINDING, "{}", 10)),
                    Mutation.of(new ClaimCommand("D", "D", "T2", null, null, "wt2", List.of(), null)))) {
                refused.add(actor.submit(m));
            }
            long batchesBefore = actor.metrics().batches();
            release.countDown();

            for (CompletableFuture<Outcome> f : refused) {
                assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo(new Outcome.Refused(Outcome.Reason.JOURNAL_FAILED,
                        "The journal could not commit; nothing was applied."));
            }
            assertThat(actor.read(CoordinationState::image).get(10, TimeUnit.SECONDS)).isEqualTo(before);
            assertThat(state.pins().findCommitted("C")).isEmpty();
            assertThat(state.idempotency().findCommitted(handoff.idempotency().key())).isEmpty();
            assertThat(actor.metrics().batches()).as("nothing committed").isEqualTo(batchesBefore);

            // once the journal writes again, the keyed retry is decided afresh, not replayed
            fail.set(false);
            Outcome retried = actor.submit(handoff).get(10, TimeUnit.SECONDS);
            assertThat(retried).isInstanceOf(Outcome.Decided.class);
            assertThat(((Outcome.Decided) retried).reply().granted()).isTrue();
        } finally {
            actor.close();
        }
    }
}
