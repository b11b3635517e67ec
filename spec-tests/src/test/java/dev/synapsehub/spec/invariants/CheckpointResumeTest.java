package dev.synapsehub.spec.invariants;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.synapsehub.spec.invariants.Registries.checkpoint;
import static dev.synapsehub.spec.invariants.Registries.claimIn;
import static dev.synapsehub.spec.invariants.Registries.fresh;
import static dev.synapsehub.spec.invariants.Registries.handoff;
import static dev.synapsehub.spec.invariants.Registries.release;
import static dev.synapsehub.spec.invariants.Registries.ttl;
import static dev.synapsehub.spec.invariants.Registries.with;
import static org.assertj.core.api.Assertions.assertThat;

/** Pins INV-CR-3 (a re-claimed task resumes from its checkpoint) and INV-LL-2's retention. */
class CheckpointResumeTest {

    private static ClaimCommand shortClaim(String agent, String task) {
        return new ClaimCommand(agent, agent, task, null, 60.0, "wt", List.of(), null);
    }

    @Test
    void expiryRetainsTheCheckpointAndTakeoverConsumesIt() {
        var h = with(ttl(60));
        h.grant(shortClaim("A", "T1"), 1000);
        h.grant(checkpoint("A", "T1", "cursor=42"), 1010);
        h.registry.snapshot(1100); // unrelated read: expiry runs
        assertThat(h.live("T1", 1100)).isEmpty();
        assertThat(h.registry.retainedCheckpoint("T1")).contains("cursor=42");
        Claim taken = h.grant(shortClaim("B", "T1"), 1110);
        assertThat(taken.owner()).isEqualTo("B");
        assertThat(taken.checkpoint()).isEqualTo("cursor=42");
        assertThat(h.registry.retainedCheckpoint("T1")).isEmpty();
    }

    @Test
    void theFormerOwnerReclaimingAlsoConsumesIt() {
        var h = fresh();
        h.grant(shortClaim("A", "T1"), 0);
        h.grant(checkpoint("A", "T1", "cp"), 1);
        assertThat(h.grant(shortClaim("A", "T1"), 60).checkpoint()).isEqualTo("cp");
        assertThat(h.registry.retainedCheckpoint("T1")).isEmpty();
    }

    @Test
    void releaseDropsTheCheckpointSoALaterClaimStartsClean() {
        var h = fresh();
        h.grant(shortClaim("A", "T1"), 0);
        h.grant(checkpoint("A", "T1", "stale"), 1);
        h.grant(release("A", "T1"), 2);
        assertThat(h.registry.retainedCheckpoint("T1")).isEmpty();
        assertThat(h.grant(shortClaim("B", "T1"), 3).checkpoint()).isEmpty();
    }

    @Test
    void releaseAfterAResumedTakeoverLeavesNothingRetained() {
        var h = fresh();
        h.grant(shortClaim("A", "T1"), 0);
        h.grant(checkpoint("A", "T1", "stale"), 1);
        h.grant(shortClaim("B", "T1"), 60);
        h.grant(release("B", "T1"), 61);
        assertThat(h.registry.retainedCheckpoint("T1")).isEmpty();
        assertThat(h.grant(shortClaim("C", "T1"), 62).checkpoint()).isEmpty();
    }

    @Test
    void renewalAndHandoffKeepTheCheckpoint() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 0);
        h.grant(checkpoint("A", "T1", "cp"), 1);
        assertThat(h.grant(claimIn("A", "T1", "wt"), 2).checkpoint()).isEqualTo("cp");
        assertThat(h.grant(handoff("A", "T1", "B"), 3).checkpoint()).isEqualTo("cp");
    }

    @Test
    void savingStripsTheTaskIdStoresTheTokenAndBumpsTheVersion() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 0);
        Reply.Granted g = (Reply.Granted) h.run(checkpoint("A", "  T1 ", "step-2"), 1).reply();
        assertThat(g.message()).contains("Checkpoint saved");
        assertThat(g.claim().checkpoint()).isEqualTo("step-2");
        assertThat(g.claim().version()).isEqualTo(1);
        assertThat(h.owned("T1", 1).checkpoint()).isEqualTo("step-2");
    }

    @Test
    void savingIsRefusedForUnknownNonOwnerAndStaleEpoch() {
        var h = fresh();
        Claim c = h.grant(claimIn("A", "T1", "wt"), 0);
        h.deny(checkpoint("A", "GHOST", "x"), 1, Refusal.NOT_FOUND);
        h.deny(checkpoint("A", " ", "x"), 1, Refusal.TASK_ID_REQUIRED);
        assertThat(h.deny(checkpoint("B", "T1", "x"), 1, Refusal.NOT_OWNER).message()).contains("A");
        assertThat(h.deny(checkpoint("A", "T1", "x", 999), 1, Refusal.STALE_EPOCH).message()).contains("epoch is stale");
        assertThat(h.owned("T1", 1)).isEqualTo(c);
    }

    @Test
    void checkpointAfterOwnExpiryIsRefusedNotFoundAndTheRetainedOneSurvives() {
        var h = fresh();
        h.grant(shortClaim("A", "T1"), 0);
        h.grant(checkpoint("A", "T1", "good"), 30);
        assertThat(h.deny(checkpoint("A", "T1", "late"), 60, Refusal.NOT_FOUND).message()).contains("not found");
        assertThat(h.registry.retainedCheckpoint("T1")).contains("good");
        assertThat(h.grant(shortClaim("B", "T1"), 61).checkpoint()).isEqualTo("good");
    }

    @Test
    void aFailedTakeoverKeepsTheRetainedCheckpoint() {
        var h = with(RegistryLimits.DEFAULTS.withMaxClaimsPerPrincipal(1));
        h.grant(new ClaimCommand("A", "A", "T1", null, 60.0, "wt-t1", List.of(), null), 0);
        h.grant(checkpoint("A", "T1", "cp"), 1);
        h.grant(claimIn("B", "HOLD", "wt", "src"), 2);
        h.grant(claimIn("C", "FULL", "other"), 2);
        h.deny(claimIn("B", "T1", "elsewhere"), 100, Refusal.QUOTA_EXCEEDED);
        h.deny(claimIn("D", "T1", "wt", "src/x"), 100, Refusal.SCOPE_CONFLICT); // scope is the new request's
        h.registry.decide(claimIn("D", "T1", "elsewhere"), 100); // decided, never applied
        assertThat(h.registry.retainedCheckpoint("T1")).contains("cp");
        assertThat(h.grant(claimIn("D", "T1", "elsewhere"), 101).checkpoint()).isEqualTo("cp");
    }

    @Test
    void anEmptyCheckpointIsNotRetained() {
        var h = fresh();
        h.grant(shortClaim("A", "T1"), 0);
        h.registry.snapshot(100);
        assertThat(h.registry.retainedCheckpoint("T1")).isEmpty();
    }

    @Test
    void replayRestoresRetainedCheckpoints() {
        var h = fresh();
        h.grant(shortClaim("A", "T1"), 0);
        h.grant(checkpoint("A", "T1", "cp"), 1);
        h.grant(claimIn("B", "T2", "other"), 100);
        var replayed = h.replay();
        assertThat(replayed.retainedCheckpoint("T1")).contains("cp");
        assertThat(Registries.State.of(replayed, 100, "T1")).isEqualTo(h.state(100, "T1"));
    }
}
