package dev.synapsehub.spec.model;

import dev.synapsehub.spec.runner.StatefulRunner;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The machine-checkable coordination model (docs/coordination-spec.md, "The model").
 *
 * <p>Drives the real {@code ClaimRegistry} (inside a {@code CoordinationState}) through long random
 * sequences of claim, explicit-TTL claim (NaN, ±Infinity, tiny, huge), renew, release (with
 * current, missing and stale epochs), handoff (also to an offline recipient), update_task (with
 * stale epochs and stale expected_version), checkpoint, keyed requests of every claim verb and
 * exact retries of them (INV-CR-1: through the actor's own {@code MutationDecider}, across
 * restarts, with the recipient gone offline), clock advance (1..7200 s), takeover exactly at or
 * after expiry, 30-day jumps, restart by replay and failed (rolled-back) batches. An independent
 * {@link ShadowModel} predicts every reply (grant, or refusal code and first conflicting task)
 * and the full expected state; {@link Harness#checkInvariants()} asserts every [model]
 * invariant after every step, and each sequence ends with restart, an "everything expires"
 * sweep, and another restart.
 *
 * <p>Restart (INV-RR-1): every applied event is kept in a list-backed journal under the seq a
 * journal gives it; a restart replays it through {@code CoordinationState.replay} into a fresh
 * state at the model clock, asserts it holds exactly the old state's authority (every claim
 * field, quota charges, retained checkpoints, epoch counter, clock, seq, conflict insertion
 * order; INV-EF-1 for the counter not regressing) and swaps it in, leaving the shadow model
 * alone. A failed batch (INV-JA-2) applies decided events inside {@code beginBatch}, never
 * journals them, rolls back and asserts the state is exactly as before.
 *
 * <p>INV-JA-1 is asserted at the state-transition level only: with time already advanced,
 * {@code decide} must not change anything observable, and only {@code apply} of its events
 * mutates. Atomicity against a real journal is pinned by the journal suites, not here.
 *
 * <p>Defaults: 300 sequences × 80 steps. {@code -Dspec.sequences}, {@code -Dspec.steps} override;
 * {@code -Dspec.seed} replays the seed a failure prints; profile {@code nightly} raises counts.
 */
public class CoordinationModelTest {

    /** Exactly the ids this model asserts; the drift guard binds this set to the spec's [model] tags. */
    public static final Set<String> MODEL_INVARIANTS = Set.of(
            "INV-ME-1", "INV-ME-2", "INV-ME-3", "INV-ME-4", "INV-ME-5",
            "INV-EF-1", "INV-EF-2", "INV-EF-3",
            "INV-LL-1", "INV-LL-2", "INV-LL-3", "INV-LL-4",
            "INV-CR-1", "INV-CR-2", "INV-CR-3",
            "INV-JA-1", "INV-JA-2",
            "INV-RR-1");

    static StatefulRunner<Harness> runner() {
        return StatefulRunner.<Harness>named("coordination model")
                .system(Harness::new)
                .action(ModelActions.claim(30))
                .action(ModelActions.claimWithTtl(8))
                .action(ModelActions.renew(8))
                .action(ModelActions.keepHeld(6))
                .action(ModelActions.release(8))
                .action(ModelActions.update(10))
                .action(ModelActions.handoff(10))
                .action(ModelActions.checkpoint(10))
                .action(ModelActions.advance(8))
                .action(ModelActions.takeover(6))
                .action(ModelActions.farJump(1))
                .action(ModelActions.keyed(8))
                .action(ModelActions.keyedRetry(6))
                .action(ModelActions.restart(4))
                .action(ModelActions.snapshot(3))
                .action(ModelActions.rollback(4))
                .invariants(Harness::checkInvariants)
                .finalCheck(Harness::finalCheck)
                .sequences(300)
                .steps(80)
                .build();
    }

    /** Restart and a failed batch as the very first steps, before anything has read the clock. */
    @Test
    void restartAndFailedBatchOnAFreshHub() throws Exception {
        Harness h = new Harness();
        new ModelActions.Restart().run(h);
        h.checkInvariants();
        new ModelActions.FailedBatch(List.of(
                new ModelActions.BatchStep("claim", "A", "T1", "wt-main", List.of("src"), ""),
                new ModelActions.BatchStep("checkpoint", "A", "T1", "wt-main", List.of(), "cp-1"))).run(h);
        h.checkInvariants();
        h.finalCheck();
        assertThat(h.real.epochCounter()).isZero();
        assertThat(h.journal.size()).isZero();
    }

    @Test
    void realRegistryAgreesWithTheShadowModel() {
        StatefulRunner<Harness> runner = runner();
        long start = System.nanoTime();
        runner.assertHolds();
        long millis = (System.nanoTime() - start) / 1_000_000;
        System.out.printf("coordination model: %d sequences x %d steps in %d ms; coverage %s%n",
                runner.sequences(), runner.steps(), millis, new java.util.TreeMap<>(Harness.COVERAGE));

        // Every id this class claims to check really was checked.
        assertThat(Invariant.exercised()).containsAll(MODEL_INVARIANTS);
        assertThat(new TreeSet<>(Invariant.exercised())).isSubsetOf(MODEL_INVARIANTS);
        if (runner.sequences() * runner.steps() >= 2_000) {
            // The interesting outcomes actually happened (a vacuous model proves nothing).
            assertThat(Harness.covered("refused:QUOTA_EXCEEDED")).as("INV-ME-5 quota refusals").isPositive();
            assertThat(Harness.covered("refused:LEASE_LIVE")).as("LEASE_LIVE refusals").isPositive();
            assertThat(Harness.covered("refused:SCOPE_CONFLICT")).as("SCOPE_CONFLICT refusals").isPositive();
            assertThat(Harness.covered("refused:STALE_EPOCH")).as("stale epochs fenced").isPositive();
            assertThat(Harness.covered("refused:VERSION_CONFLICT")).as("stale versions fenced").isPositive();
            assertThat(Harness.covered("refused:ILLEGAL_TRANSITION")).as("illegal transitions").isPositive();
            assertThat(Harness.covered("handoff-granted")).as("handoffs").isPositive();
            assertThat(Harness.covered("takeover-resumed-checkpoint")).as("checkpoint resumes").isPositive();
            assertThat(Harness.covered("renewal-at-cap")).as("free renewals at the cap").isPositive();
            assertThat(Harness.covered("kept-held")).as("kept claims answered as they stand").isPositive();
            assertThat(Harness.covered("ttl:non-finite-default")).as("non-finite TTLs").isPositive();
            assertThat(Harness.covered("expired-exactly-at-boundary")).as("expiry == now").isPositive();
            assertThat(Harness.covered("granted-despite-overlap-in-other-worktree")).as("INV-ME-3").isPositive();
            assertThat(Harness.covered("restart-with-live-claims")).as("INV-RR-1 restarts with live claims").isPositive();
            assertThat(Harness.covered("restart-with-ordered-conflicts")).as("INV-RR-1 conflict order").isPositive();
            assertThat(Harness.covered("restart-with-retained-checkpoint")).as("INV-RR-1 retained checkpoints")
                    .isPositive();
            assertThat(Harness.covered("restart-from-image-with-tail")).as("INV-RR-1 snapshot plus tail")
                    .isPositive();
            assertThat(Harness.covered("rollback-undid-state-events")).as("INV-JA-2 non-empty rollbacks").isPositive();
            assertThat(Harness.covered("keyed-replayed")).as("INV-CR-1 replays").isPositive();
            assertThat(Harness.covered("keyed-conflict")).as("INV-CR-1 conflicts").isPositive();
            assertThat(Harness.covered("keyed-refused-not-remembered")).as("INV-CR-1 refusals forgotten").isPositive();
            assertThat(Harness.covered("keyed-replayed-after-restart")).as("INV-CR-1 across a restart").isPositive();
            assertThat(Harness.covered("keyed-handoff-replayed-with-recipient-offline"))
                    .as("INV-CR-1 before presence").isPositive();
            assertThat(Harness.covered("refused:TARGET_OFFLINE")).as("offline handoff recipients").isPositive();
        }
    }
}
