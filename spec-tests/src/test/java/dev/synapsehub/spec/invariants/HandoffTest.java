package dev.synapsehub.spec.invariants;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.GitContext;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.synapsehub.spec.invariants.Registries.checkpoint;
import static dev.synapsehub.spec.invariants.Registries.claimIn;
import static dev.synapsehub.spec.invariants.Registries.fresh;
import static dev.synapsehub.spec.invariants.Registries.handoff;
import static dev.synapsehub.spec.invariants.Registries.ttl;
import static dev.synapsehub.spec.invariants.Registries.with;
import static org.assertj.core.api.Assertions.assertThat;

/** Pins INV-CR-2 (atomic handoff) and the handoff side of INV-ME-2 and INV-ME-3. */
class HandoffTest {

    @Test
    void handoffMovesOwnershipKeepingScopeStatusDataAndNote() {
        var h = with(ttl(300));
        Claim original = h.grant(new ClaimCommand("A", "A", "T1", "parser work", null, "wt", List.of("src"),
                new GitContext("feat", "main", "merge")), 1000);
        h.grant(new TaskUpdateCommand("A", "T1", "working", null, "mem://k", null, null), 1001);
        h.grant(checkpoint("A", "T1", "cp"), 1002);
        var d = h.run(handoff("A", "T1", "B"), 1010);
        Reply.Granted g = (Reply.Granted) d.reply();
        assertThat(g.message()).contains("handed from A to B");
        assertThat(g.previousOwner()).isEqualTo("A");
        Claim moved = g.claim();
        assertThat(moved.owner()).isEqualTo("B");
        assertThat(moved.status()).isEqualTo(ClaimStatus.WORKING);
        assertThat(moved.dataRef()).isEqualTo("mem://k");
        assertThat(moved.note()).isEqualTo("parser work");
        assertThat(moved.worktree()).isEqualTo("wt");
        assertThat(moved.paths()).containsExactly("src");
        assertThat(moved.checkpoint()).isEqualTo("cp");
        assertThat(moved.git()).isEqualTo(original.git());
        assertThat(moved.epoch()).isGreaterThan(original.epoch());
        assertThat(moved.version()).isZero();
        assertThat(moved.leaseExpiresAt()).isEqualTo(1310.0);
        assertThat(h.owned("T1", 1010)).isEqualTo(moved);
        assertThat(d.events()).singleElement().isInstanceOf(ClaimSnapshotEvent.class);
    }

    @Test
    void handoffNoteReplacesWhenGivenAndKeepsWhenBlank() {
        var h = fresh();
        h.grant(new ClaimCommand("A", "A", "T1", "old", null, "wt", List.of(), null), 1000);
        Claim kept = h.grant(new HandoffCommand("A", "T1", "B", true, null, "   ", null), 1001);
        assertThat(kept.note()).isEqualTo("old");
        Claim replaced = h.grant(new HandoffCommand("B", "T1", "C", true, null, "  picking up from B  ", null), 1002);
        assertThat(replaced.note()).isEqualTo("picking up from B");
    }

    @Test
    void malformedHandoffsAreRefused() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        h.deny(handoff("A", "  ", "B"), 1001, Refusal.TASK_ID_REQUIRED);
        assertThat(h.deny(handoff("A", "T1", "  "), 1001, Refusal.TARGET_REQUIRED).message())
                .contains("target is required");
        assertThat(h.deny(handoff("A", "GHOST", "B"), 1001, Refusal.NOT_CLAIMED).message())
                .contains("not currently claimed");
        assertThat(h.deny(handoff("C", "T1", "B"), 1001, Refusal.NOT_OWNER).holder()).isEqualTo("A");
    }

    @Test
    void handoffToSelfIsRefused() {
        var h = fresh();
        Claim c = h.grant(claimIn("A", "T1", "wt"), 1000);
        assertThat(h.deny(handoff("A", "T1", "A"), 1001, Refusal.ALREADY_OWNER).message())
                .contains("already owned by A");
        assertThat(h.deny(handoff("A", "T1", "  A  "), 1001, Refusal.ALREADY_OWNER).message()).contains("A");
        assertThat(h.owned("T1", 1001)).isEqualTo(c);
        assertThat(h.registry.epochCounter()).isEqualTo(1);
    }

    @Test
    void noThirdAgentCanSlipInDuringAHandoff() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        h.grant(handoff("A", "T1", "B"), 1001);
        h.deny(claimIn("C", "T1", "wt"), 1001, Refusal.LEASE_LIVE);
        assertThat(h.registry.snapshot(1001)).singleElement().extracting(Claim::owner).isEqualTo("B");
    }

    @Test
    void giversOtherOverlappingWholeWorktreeClaimBlocksTheHandoff() {
        var h = with(ttl(1000));
        h.grant(claimIn("A", "T2", "wt"), 0);
        Claim t1 = h.grant(claimIn("A", "T1", "wt"), 0);
        var before = h.state(1);
        Reply.Denied d = h.deny(handoff("A", "T1", "B"), 1, Refusal.SCOPE_CONFLICT);
        assertThat(d.message()).contains("file scope conflicts").contains("T2");
        assertThat(h.owned("T1", 1)).isEqualTo(t1);
        assertThat(h.state(1)).isEqualTo(before);
        assertThat(h.registry.charged("B")).isZero();
    }

    @Test
    void claimAndHandoffRefuseTheSameOverlap() {
        var direct = fresh();
        direct.grant(claimIn("A", "T2", "wt", "src"), 0);
        assertThat(direct.deny(claimIn("B", "T1", "wt", "src/a.py"), 0, Refusal.SCOPE_CONFLICT).message())
                .contains("file scope conflicts");
        var viaHandoff = fresh();
        viaHandoff.grant(claimIn("A", "T2", "wt", "src"), 0);
        viaHandoff.grant(claimIn("A", "T1", "wt", "src/a.py"), 0);
        assertThat(viaHandoff.deny(handoff("A", "T1", "B"), 0, Refusal.SCOPE_CONFLICT).message())
                .contains("file scope conflicts");
    }

    @Test
    void recipientsDisjointClaimsDoNotBlock() {
        var h = fresh();
        h.grant(claimIn("B", "T2", "wt", "src"), 0);
        h.grant(claimIn("A", "T1", "wt", "docs"), 0);
        assertThat(h.grant(handoff("A", "T1", "B"), 1).owner()).isEqualTo("B");
    }

    @Test
    void recipientsOwnOverlappingClaimsNeverBlock() {
        // Live decisions never let two owners hold overlapping scopes, so this state can only
        // come from a replayed journal; build it through apply, as replay would.
        var h = fresh();
        h.registry.apply(snapshotOf("B", "T2", "wt", List.of("src"), 1, 0));
        h.registry.apply(snapshotOf("A", "T1", "wt", List.of("src/a.py"), 2, 0));
        h.registry.apply(snapshotOf("C", "T3", "wt", List.of("docs"), 3, 0));
        assertThat(h.grant(handoff("A", "T1", "B"), 1).owner()).isEqualTo("B");
        // ...while a third party's overlap still blocks: hand T1 on to C, who does not own src
        h.deny(handoff("B", "T1", "C"), 2, Refusal.SCOPE_CONFLICT);
    }

    private static ClaimSnapshotEvent snapshotOf(String owner, String task, String wt, List<String> paths,
                                                 long epoch, double t) {
        Claim c = new Claim(task, owner, owner, "", t, t + 1000, ClaimStatus.CLAIMED, "", wt, paths, epoch, 0, "",
                null);
        return new ClaimSnapshotEvent(t, ClaimSnapshotEvent.Kind.CLAIM, c);
    }

    @Test
    void handoffKeepsTheTasksWorktree() {
        var h = with(ttl(1000));
        h.grant(claimIn("B", "T2", "wt"), 0);
        h.grant(claimIn("A", "T1", "wt-other"), 0);
        Claim moved = h.grant(handoff("A", "T1", "B"), 1);
        assertThat(moved.worktree()).isEqualTo("wt-other");
        assertThat(moved.paths()).isEmpty();
    }

    @Test
    void handoffOfAScopedClaimResetsVersion() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt-a", "src/x.py"), 0);
        Claim moved = h.grant(handoff("A", "T1", "B"), 1);
        assertThat(moved.owner()).isEqualTo("B");
        assertThat(moved.version()).isZero();
    }

    @Test
    void anExpiredClaimCannotBeHandedOff() {
        var h = fresh();
        h.grant(new ClaimCommand("A", "A", "T1", null, 30.0, "wt", List.of(), null), 0);
        h.deny(handoff("A", "T1", "B"), 30, Refusal.NOT_CLAIMED);
    }
}
