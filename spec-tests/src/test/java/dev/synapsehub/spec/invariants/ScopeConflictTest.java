package dev.synapsehub.spec.invariants;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.spec.invariants.Registries.claim;
import static dev.synapsehub.spec.invariants.Registries.claimIn;
import static dev.synapsehub.spec.invariants.Registries.fresh;
import static dev.synapsehub.spec.invariants.Registries.handoff;
import static dev.synapsehub.spec.invariants.Registries.ttl;
import static dev.synapsehub.spec.invariants.Registries.with;
import static org.assertj.core.api.Assertions.assertThat;

/** Pins INV-ME-2, INV-ME-3 and INV-ME-4 (file-scope exclusion) at the registry level. */
class ScopeConflictTest {

    @Test
    void ancestorPathConflictsWithDescendant() {
        var h = with(ttl(300));
        h.grant(claimIn("A", "T1", "", "src"), 1000);
        Reply.Denied d = h.deny(claimIn("B", "T2", "", "src/app.py"), 1001, Refusal.SCOPE_CONFLICT);
        assertThat(d.message()).isEqualTo("Task 'T2' file scope conflicts with 'T1' held by A.");
        assertThat(d.conflictingTask()).isEqualTo("T1");
        assertThat(d.holder()).isEqualTo("A");
    }

    @Test
    void traversalWidensToWholeWorktree() {
        var h = with(ttl(300));
        Claim c = h.grant(claimIn("A", "T1", "", "src/../tests"), 1000);
        assertThat(c.paths()).containsExactly("");
        assertThat(h.deny(claimIn("B", "T2", "", "docs"), 1001, Refusal.SCOPE_CONFLICT).message())
                .contains("file scope conflicts with 'T1' held by A");
    }

    @Test
    void disjointPathsBothGranted() {
        var h = fresh();
        assertThat(h.grant(claimIn("A", "T1", "", "src"), 1000).epoch()).isEqualTo(1);
        assertThat(h.grant(claimIn("B", "T2", "", "tests"), 1000).epoch()).isEqualTo(2);
    }

    @Test
    void segmentBoundaryIsRespected() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "", "src"), 1000);
        h.grant(claimIn("B", "T2", "", "srcfoo/x.py"), 1000);
    }

    @Test
    void anAgentNeverConflictsWithItself() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "", "src"), 1000);
        h.grant(claimIn("A", "T2", "", "src/app.py"), 1000);
        h.grant(claimIn("A", "T3", ""), 1000);
    }

    @Test
    void renewalRescopes() {
        var h = with(ttl(300));
        h.grant(claimIn("A", "T1", "", "src"), 1000);
        Claim renewed = h.grant(claimIn("A", "T1", "", "src", "tests"), 1050);
        assertThat(renewed.paths()).containsExactly("src", "tests");
        assertThat(renewed.epoch()).isEqualTo(2);
        h.deny(claimIn("B", "T2", "", "tests/x"), 1051, Refusal.SCOPE_CONFLICT);
    }

    @Test
    void pathsAreNormalisedAndDeduplicated() {
        var h = fresh();
        Claim c = h.grant(claimIn("A", "T1", "wt", "./src/", "src"), 1000);
        assertThat(c.worktree()).isEqualTo("wt");
        assertThat(c.paths()).containsExactly("src");
        assertThat(c.epoch()).isEqualTo(1);
    }

    @Test
    void firstConflictIsReportedInInsertionOrder() {
        var h = fresh();
        h.grant(claimIn("BRAVO", "Z-FIRST", "main", "src/app.py"), 1000);
        h.grant(claimIn("CHARLIE", "A-SECOND", "main", "src/lib"), 1000);
        Reply.Denied d = h.deny(claimIn("ALPHA", "NEW", "main", "src"), 1000, Refusal.SCOPE_CONFLICT);
        assertThat(d.conflictingTask()).isEqualTo("Z-FIRST");
        assertThat(d.holder()).isEqualTo("BRAVO");
    }

    @Test
    void renewalKeepsItsPositionInConflictOrder() {
        var h = fresh();
        h.grant(claimIn("BRAVO", "FIRST", "main", "src/app.py"), 1000);
        h.grant(claimIn("CHARLIE", "SECOND", "main", "src/lib"), 1000);
        h.grant(claimIn("BRAVO", "FIRST", "main", "src/app.py"), 1010);
        assertThat(h.deny(claimIn("ALPHA", "NEW", "main", "src"), 1010, Refusal.SCOPE_CONFLICT).conflictingTask())
                .isEqualTo("FIRST");
    }

    @Test
    void handoffKeepsItsPositionInConflictOrder() {
        var h = fresh();
        h.grant(claimIn("BRAVO", "FIRST", "main", "src/app.py"), 1000);
        h.grant(claimIn("CHARLIE", "SECOND", "main", "src/lib"), 1000);
        h.grant(handoff("BRAVO", "FIRST", "DELTA"), 1010);
        Reply.Denied d = h.deny(claimIn("ALPHA", "NEW", "main", "src"), 1010, Refusal.SCOPE_CONFLICT);
        assertThat(d.conflictingTask()).isEqualTo("FIRST");
        assertThat(d.holder()).isEqualTo("DELTA");
    }

    @Test
    void takeoverAfterExpiryGoesLastInConflictOrder() {
        var h = fresh();
        h.grant(new ClaimCommand("BRAVO", "BRAVO", "FIRST", null, 100.0, "main", List.of("src/app.py"), null), 1000);
        h.grant(new ClaimCommand("CHARLIE", "CHARLIE", "SECOND", null, 10_000.0, "main", List.of("src/lib"), null),
                1000);
        h.grant(claimIn("DELTA", "FIRST", "main", "src/app.py"), 1100);
        assertThat(h.deny(claimIn("ALPHA", "NEW", "main", "src"), 1100, Refusal.SCOPE_CONFLICT).conflictingTask())
                .isEqualTo("SECOND");
    }

    @Test
    void scannerSkipsOwnClaimsOtherWorktreesAndDisjointPaths() {
        var h = fresh();
        h.grant(claimIn("ALPHA", "OWN", "main", "src/app.py"), 1000);
        h.grant(claimIn("BRAVO", "OTHER-TREE", "feature", "src"), 1000);
        h.grant(claimIn("CHARLIE", "DISJOINT", "main", "docs"), 1000);
        h.grant(claimIn("ALPHA", "NEW", "main", "src"), 1000);
    }

    @Test
    void expiredClaimsNeverConflict() {
        var h = fresh();
        h.grant(new ClaimCommand("A", "A", "T1", null, 30.0, "wt", List.of("src"), null), 1000);
        h.deny(claimIn("B", "T2", "wt", "src"), 1029, Refusal.SCOPE_CONFLICT);
        h.grant(claimIn("B", "T2", "wt", "src"), 1030);
    }

    @Test
    void declaredPathCapWidensTheClaim() {
        var h = with(RegistryLimits.DEFAULTS.withMaxDeclaredPaths(2));
        assertThat(h.grant(claimIn("A", "T1", "wt", "a", "b", "c"), 1000).paths()).containsExactly("");
        h.deny(claimIn("B", "T2", "wt", "z/f"), 1000, Refusal.SCOPE_CONFLICT);

        var kept = with(RegistryLimits.DEFAULTS.withMaxDeclaredPaths(2));
        assertThat(kept.grant(claimIn("A", "T1", "wt", "a", "b"), 1000).paths()).containsExactly("a", "b");
        kept.grant(claimIn("B", "T2", "wt", "z/f"), 1000);

        var zero = with(RegistryLimits.DEFAULTS.withMaxDeclaredPaths(0));
        assertThat(zero.grant(claimIn("A", "T1", "wt", "a"), 1000).paths()).containsExactly("a");
        assertThat(zero.grant(claimIn("A", "T2", "wt2", "a", "b"), 1000).paths()).containsExactly("");
    }

    @Test
    void over512DistinctPathsWidenAndExactly512AreKept() {
        var h = fresh();
        Claim widened = h.grant(claimIn("A", "T1", "wt1", paths(517)), 1000);
        assertThat(widened.paths()).containsExactly("");
        Claim kept = h.grant(claimIn("A", "T2", "wt2", paths(512)), 1000);
        assertThat(kept.paths()).hasSize(512);
        Claim edge = h.grant(claimIn("A", "T3", "wt3", paths(513)), 1000);
        assertThat(edge.paths()).containsExactly("");
        h.deny(claimIn("B", "T4", "wt1", "unrelated/file"), 1000, Refusal.SCOPE_CONFLICT);
        h.grant(claimIn("B", "T5", "wt2", "unrelated/file"), 1000);
    }

    private static String[] paths(int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add("dir" + i + "/file");
        }
        return out.toArray(new String[0]);
    }

    // ---- INV-ME-3 ---------------------------------------------------------------------------

    @Test
    void differentWorktreesNeverContend() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt-a", "src"), 1000);
        h.grant(claimIn("B", "T2", "wt-b", "src"), 1000);
        h.grant(claimIn("C", "T3", "main"), 1000);
        h.grant(claimIn("D", "T4", "feature"), 1000);
    }

    @Test
    void worktreeLabelsAreExactStrings() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        h.grant(claimIn("B", "T2", "WT"), 1000);
        h.grant(claimIn("C", "T3", "wt "), 1000);
        h.grant(claimIn("D", "T4", "./wt"), 1000);
        h.deny(claimIn("E", "T5", "wt", "x"), 1000, Refusal.SCOPE_CONFLICT);
    }

    // ---- INV-ME-4 ---------------------------------------------------------------------------

    @Test
    void plainClaimsOfDifferentTasksConflict() {
        var h = with(ttl(100));
        h.grant(claim("A", "T1"), 1000);
        Reply.Denied d = h.deny(claim("B", "T2"), 1000, Refusal.SCOPE_CONFLICT);
        assertThat(d.message()).contains("'T1' held by A");
    }

    @Test
    void emptyPathListClaimsTheWholeWorktree() {
        var h = fresh();
        Claim whole = h.grant(claimIn("BRAVO", "TREE", "main"), 1000);
        assertThat(whole.paths()).isEmpty();
        h.deny(claimIn("ALPHA", "X", "main", "unrelated/file.py"), 1000, Refusal.SCOPE_CONFLICT);
        h.deny(claimIn("ALPHA", "Y", "main"), 1000, Refusal.SCOPE_CONFLICT);
        h.deny(claimIn("ALPHA", "Z", "main", "/"), 1000, Refusal.SCOPE_CONFLICT);
    }

    @Test
    void rootEntryClaimsTheWholeWorktreeToo() {
        var h = fresh();
        Claim root = h.grant(claimIn("BRAVO", "TREE", "main", "/"), 1000);
        assertThat(root.paths()).containsExactly("");
        h.deny(claimIn("ALPHA", "X", "main", "unrelated/file.py"), 1000, Refusal.SCOPE_CONFLICT);
        h.deny(claimIn("ALPHA", "Y", "main"), 1000, Refusal.SCOPE_CONFLICT);
        h.deny(claimIn("ALPHA", "Z", "main", ".."), 1000, Refusal.SCOPE_CONFLICT);
    }

    @Test
    void wholeWorktreeRequestConflictsWithAnyPathClaim() {
        var h = fresh();
        h.grant(claimIn("BRAVO", "LEAF", "main", "deep/down/file.py"), 1000);
        h.deny(claimIn("ALPHA", "X", "main"), 1000, Refusal.SCOPE_CONFLICT);
        h.deny(claimIn("ALPHA", "Y", "main", "/abs"), 1000, Refusal.SCOPE_CONFLICT);
        h.grant(claimIn("ALPHA", "Z", "main", "deep/up"), 1000);
    }
}
