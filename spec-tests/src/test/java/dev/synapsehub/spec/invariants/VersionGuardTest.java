package dev.synapsehub.spec.invariants;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.GitContext;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.reply.Refusal;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.synapsehub.spec.invariants.Registries.checkpoint;
import static dev.synapsehub.spec.invariants.Registries.claimIn;
import static dev.synapsehub.spec.invariants.Registries.fresh;
import static dev.synapsehub.spec.invariants.Registries.handoff;
import static dev.synapsehub.spec.invariants.Registries.update;
import static org.assertj.core.api.Assertions.assertThat;

/** Pins INV-EF-3 (optimistic-concurrency version guard) and the renewal rewrite of INV-LL-4. */
class VersionGuardTest {

    private static TaskUpdateCommand expect(String task, String status, String note, long expected) {
        return new TaskUpdateCommand("A", task, status, note, null, null, expected);
    }

    @Test
    void freshClaimHasVersionZeroAndALegalUpdateBumpsIt() {
        var h = fresh();
        Claim c = h.grant(claimIn("A", "T1", "wt"), 1000);
        assertThat(c.version()).isZero();
        assertThat(c.status()).isEqualTo(ClaimStatus.CLAIMED);
        assertThat(h.grant(update("A", "T1", "working"), 1001).version()).isEqualTo(1);
    }

    @Test
    void illegalTransitionIsRefusedAndChangesNothing() {
        var h = fresh();
        Claim c = h.grant(claimIn("A", "T1", "wt"), 1000);
        assertThat(h.deny(update("A", "T1", "input_required"), 1001, Refusal.ILLEGAL_TRANSITION).message())
                .contains("cannot transition claimed -> input_required");
        assertThat(h.owned("T1", 1001)).isEqualTo(c);
        h.deny(update("A", "T1", "blocked"), 1001, Refusal.ILLEGAL_TRANSITION);
        h.deny(update("A", "T1", "WORKING"), 1001, Refusal.ILLEGAL_TRANSITION);
    }

    @Test
    void expectedVersionGuardsTheUpdate() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        assertThat(h.grant(expect("T1", "", null, 0), 1001).version()).isEqualTo(1);
        Claim current = h.owned("T1", 1001);
        assertThat(h.deny(expect("T1", "", "late", 0), 1002, Refusal.VERSION_CONFLICT).message())
                .contains("version conflict");
        assertThat(h.owned("T1", 1002)).isEqualTo(current);
        assertThat(current.note()).isEmpty();
        h.deny(expect("T1", "working", null, 1 + 500), 1002, Refusal.VERSION_CONFLICT);
    }

    @Test
    void versionIsCheckedAfterTheEpochAndBeforeStatusLegality() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        h.deny(new TaskUpdateCommand("A", "T1", "bogus", null, null, 999L, 7L), 1001, Refusal.STALE_EPOCH);
        h.deny(new TaskUpdateCommand("A", "T1", "bogus", null, null, 1L, 7L), 1001, Refusal.VERSION_CONFLICT);
        h.deny(new TaskUpdateCommand("A", "T1", "bogus", null, null, 1L, 0L), 1001, Refusal.ILLEGAL_TRANSITION);
    }

    @Test
    void renewalRewritesTheRecordKeepingOnlyTheCheckpoint() {
        var h = fresh();
        h.grant(new ClaimCommand("A", "A", "T1", "first", null, "wt", List.of("src"),
                new GitContext("feat", "dev", "commit")), 1000);
        h.grant(new TaskUpdateCommand("A", "T1", "working", "busy", "mem://x", null, null), 1001);
        h.grant(checkpoint("A", "T1", "cp"), 1002);
        Claim renewed = h.grant(claimIn("A", "T1", "wt", "docs"), 1003);
        assertThat(renewed.version()).isZero();
        assertThat(renewed.status()).isEqualTo(ClaimStatus.CLAIMED);
        assertThat(renewed.note()).isEmpty();
        assertThat(renewed.dataRef()).isEmpty();
        assertThat(renewed.git()).isNull();
        assertThat(renewed.paths()).containsExactly("docs");
        assertThat(renewed.claimedAt()).isEqualTo(1003);
        assertThat(renewed.checkpoint()).isEqualTo("cp");
    }

    @Test
    void handoffResetsTheVersionForTheNewOwner() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt-a", "src/x.py"), 1000);
        h.grant(update("A", "T1", "working"), 1001);
        Claim moved = h.grant(handoff("A", "T1", "B"), 1002);
        assertThat(moved.owner()).isEqualTo("B");
        assertThat(moved.version()).isZero();
    }

    @Test
    void savingACheckpointBumpsTheVersion() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        assertThat(h.grant(checkpoint("A", "T1", "cp"), 1001).version()).isEqualTo(1);
    }

    @Test
    void emptyStatusKeepsTheStatusButStillBumpsTheVersion() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        Claim c = h.grant(update("A", "T1", ""), 1001);
        assertThat(c.status()).isEqualTo(ClaimStatus.CLAIMED);
        assertThat(c.version()).isEqualTo(1);
    }

    @Test
    void updateFieldsAreStripped() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        Claim c = h.grant(new TaskUpdateCommand("A", "T1", "done", "  done  ", "  mem://x  ", null, null), 1001);
        assertThat(c.status()).isEqualTo(ClaimStatus.DONE);
        assertThat(c.note()).isEqualTo("done");
        assertThat(c.dataRef()).isEqualTo("mem://x");
    }

    @Test
    void lifecycleTable() {
        for (ClaimStatus from : ClaimStatus.values()) {
            assertThat(from.canMoveTo(from)).as("restate %s", from).isTrue();
            assertThat(ClaimStatus.fromWire(from.wire())).contains(from);
        }
        for (ClaimStatus terminal : List.of(ClaimStatus.DONE, ClaimStatus.FAILED)) {
            for (ClaimStatus to : ClaimStatus.values()) {
                assertThat(terminal.canMoveTo(to)).isEqualTo(to == terminal);
            }
        }
        assertThat(ClaimStatus.CLAIMED.canMoveTo(ClaimStatus.INPUT_REQUIRED)).isFalse();
        assertThat(ClaimStatus.WORKING.canMoveTo(ClaimStatus.CLAIMED)).isFalse();
        assertThat(ClaimStatus.INPUT_REQUIRED.canMoveTo(ClaimStatus.WORKING)).isTrue();
        assertThat(ClaimStatus.fromWire("blocked")).isEmpty();
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        h.grant(update("A", "T1", "done"), 1001);
        h.deny(update("A", "T1", "working"), 1002, Refusal.ILLEGAL_TRANSITION);
        h.grant(update("A", "T1", "done"), 1003);
    }

    @Test
    void versionSurvivesReplay() {
        // Stricter than the reference (behaviour-notes.md): replay must restore the version.
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        h.grant(update("A", "T1", "working"), 1001);
        h.grant(update("A", "T1", "input_required"), 1002);
        ClaimRegistry replayed = h.replay();
        assertThat(replayed.liveClaim("T1", 1003).orElseThrow().version()).isEqualTo(2);
        var again = new TaskUpdateCommand("A", "T1", "working", null, null, null, 0L);
        assertThat(replayed.decide(again, 1003).reply().granted()).isFalse();
    }
}
