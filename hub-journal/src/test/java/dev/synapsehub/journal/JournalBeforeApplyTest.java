package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;

/** INV-JA-1..3 with the real SQLite journal under the actor. */
class JournalBeforeApplyTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_000);
    private SqliteJournal sqlite;
    private Fixtures.ControlledJournal journal;
    private CoordinationActor actor;

    private void start(int idempotencyCapacity) throws Exception {
        sqlite = SqliteJournal.open(dir.resolve("hub.db"));
        journal = new Fixtures.ControlledJournal(sqlite);
        CoordinationState state = new CoordinationState(RegistryLimits.DEFAULTS, idempotencyCapacity);
        state.replay(journal, clock.nowSeconds(), n -> { });
        actor = new CoordinationActor(state, journal, clock, ActorSettings.DEFAULTS);
        actor.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (journal != null) {
            journal.gate = null;
            journal.fail = false;
        }
        if (actor != null) {
            actor.close();
        }
    }

    @Test
    void invJa1_aReaderNeverObservesAnUncommittedEffect() throws Exception {
        start(100);
        journal.gate = new CountDownLatch(1);
        CompletableFuture<Outcome> claim = actor.submit(Fixtures.claimOf("alice", "t1"));
        assertThat(journal.entered.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Optional<Claim>> read = CompletableFuture.supplyAsync(
                () -> actor.read(s -> s.claims().liveClaim("t1", clock.nowSeconds()))).thenCompose(f -> f);
        Thread.sleep(300);
        assertThat(read).as("read must wait for the in-flight append").isNotDone();
        assertThat(claim).isNotDone();
        assertThat(sqlite.lastSeq()).isZero();
        journal.gate.countDown();
        long epoch = granted(await(claim)).claim().epoch();
        Optional<Claim> seen = await(read);
        assertThat(seen).get().extracting(Claim::owner, Claim::epoch).containsExactly("alice", epoch);
        assertThat(sqlite.lastSeq()).as("what the reader saw is committed").isEqualTo(1);
    }

    private record Fingerprint(List<Claim> live, long epochCounter, Optional<String> retained, Object ledger,
                               int charged) {
    }

    private Fingerprint fingerprint() {
        return await(actor.read(s -> new Fingerprint(s.claims().snapshot(clock.nowSeconds()), s.claims().epochCounter(),
                s.claims().retainedCheckpoint("ck"), List.copyOf(s.idempotency().view().entrySet()),
                s.claims().charged("alice"))));
    }

    @Test
    void invJa2_aFailedAppendRefusesTheWholeBatchAndLeavesStateExactlyAsBefore() throws Exception {
        start(3);
        for (String k : List.of("k1", "k2", "k3")) {
            granted(await(actor.submit(Fixtures.keyedClaim("alice", "task-" + k, k))));
        }
        granted(await(actor.submit(Mutation.of(Fixtures.claim("bob", "ck", 30.0)))));
        granted(await(actor.submit(Mutation.of(new CheckpointCommand("bob", "ck", "resume-1", null)))));
        clock.advance(40);
        Fingerprint before = fingerprint();
        assertThat(before.retained()).contains("resume-1");
        assertThat(before.ledger()).asList().hasSize(3);
        long seqBefore = sqlite.lastSeq();

        journal.gate = new CountDownLatch(1);
        journal.fail = true;
        List<CompletableFuture<Outcome>> batch = new ArrayList<>();
        batch.add(actor.submit(Fixtures.claimOf("carol", "blocker")));
        assertThat(journal.entered.await(10, TimeUnit.SECONDS)).isTrue();
        batch.add(actor.submit(Fixtures.keyedClaim("alice", "task-k4", "k4")));        // evicts k1
        batch.add(actor.submit(Fixtures.claimOf("dave", "ck")));            // takes the retained checkpoint
        batch.add(actor.submit(Mutation.of(new HandoffCommand("alice", "task-k2", "erin", true, "erin", null, null))));
        batch.add(actor.submit(Mutation.of(new CheckpointCommand("alice", "task-k3", "c3", null))));
        batch.add(actor.submit(Fixtures.keyedClaim("alice", "task-k1", "k1")));        // a replay in the same batch
        Thread.sleep(100);
        journal.gate.countDown();
        for (CompletableFuture<Outcome> f : batch) {
            assertThat(await(f)).isInstanceOf(Outcome.Refused.class)
                    .extracting(o -> ((Outcome.Refused) o).reason()).isEqualTo(Outcome.Reason.JOURNAL_FAILED);
        }
        assertThat(actor.metrics().journalFailures()).isBetween(1L, 2L);
        assertThat(sqlite.lastSeq()).isEqualTo(seqBefore);
        assertThat(fingerprint()).isEqualTo(before);

        journal.gate = null;
        journal.fail = false;
        Claim next = granted(await(actor.submit(Fixtures.keyedClaim("alice", "task-k4", "k4")))).claim();
        assertThat(next.epoch()).isEqualTo(before.epochCounter() + 1);
        assertThat(sqlite.lastSeq()).isEqualTo(seqBefore + 2);
    }

    @Test
    void invJa3_closeWaitsForTheInFlightAppendAndItsStateSurvives() throws Exception {
        start(100);
        journal.gate = new CountDownLatch(1);
        CompletableFuture<Outcome> claim = actor.submit(Fixtures.claimOf("alice", "t1"));
        assertThat(journal.entered.await(10, TimeUnit.SECONDS)).isTrue();
        Thread closer = new Thread(() -> {
            try {
                actor.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        closer.start();
        Thread.sleep(200);
        closer.interrupt(); // a cancellation must still wait for the authoritative outcome
        Thread.sleep(200);
        assertThat(closer.isAlive()).isTrue();
        assertThat(sqlite.isClosed()).isFalse();
        assertThat(await(actor.submit(Fixtures.claimOf("bob", "t2"))))
                .isInstanceOf(Outcome.Refused.class)
                .extracting(o -> ((Outcome.Refused) o).reason()).isEqualTo(Outcome.Reason.SHUTTING_DOWN);
        journal.gate.countDown();
        closer.join(10_000);
        assertThat(closer.isAlive()).isFalse();
        long epoch = granted(await(claim)).claim().epoch();
        assertThat(sqlite.isClosed()).isTrue();
        actor = null;

        DurableCoordination reopened = DurableCoordination.open(dir.resolve("hub.db"), clock);
        try {
            Optional<Claim> after = await(reopened.actor().read(s -> s.claims().liveClaim("t1", clock.nowSeconds())));
            assertThat(after).get().extracting(Claim::owner, Claim::epoch).containsExactly("alice", epoch);
        } finally {
            reopened.actor().close();
        }
    }
}
