package dev.synapsehub.spec.invariants;

import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.claim.GitContext;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.event.ClaimDeniedEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

import static dev.synapsehub.spec.invariants.Registries.cap;
import static dev.synapsehub.spec.invariants.Registries.checkpoint;
import static dev.synapsehub.spec.invariants.Registries.claimIn;
import static dev.synapsehub.spec.invariants.Registries.fresh;
import static dev.synapsehub.spec.invariants.Registries.handoff;
import static dev.synapsehub.spec.invariants.Registries.release;
import static dev.synapsehub.spec.invariants.Registries.update;
import static dev.synapsehub.spec.invariants.Registries.with;
import static org.assertj.core.api.Assertions.assertThat;

/** Pins the claim_denial evidence of INV-ME-1 (#2, #13, #15) and its audit-only replay (INV-RR-3). */
class DenialEvidenceTest {

    private static ClaimDeniedEvent evidence(Decision d) {
        assertThat(d.reply().granted()).isFalse();
        assertThat(d.events()).hasSize(1);
        CoordinationEvent e = d.events().get(0);
        assertThat(e).isInstanceOf(ClaimDeniedEvent.class);
        assertThat(e.kind()).isEqualTo("claim_denial");
        return (ClaimDeniedEvent) e;
    }

    static String sha256(String s) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void everyClaimRefusalCarriesEvidenceWithItsReasonCode() {
        var h = with(cap(1));
        h.grant(claimIn("A", "T1", "wt", "src"), 0);
        h.grant(claimIn("Q", "Q1", "q"), 0);
        List<Object[]> cases = List.of(
                new Object[] {claimIn("B", "  ", "x"), Refusal.TASK_ID_REQUIRED},
                new Object[] {claimIn("B", "T1", "x"), Refusal.LEASE_LIVE},
                new Object[] {claimIn("B", "T2", "wt", "src/a"), Refusal.SCOPE_CONFLICT},
                new Object[] {claimIn("Q", "Q2", "q2"), Refusal.QUOTA_EXCEEDED});
        for (Object[] c : cases) {
            Decision d = h.run((Command) c[0], 1);
            assertThat(((Reply.Denied) d.reply()).refusal()).isEqualTo(c[1]);
            assertThat(evidence(d).reasonCode()).isEqualTo(((Refusal) c[1]).name());
        }
    }

    @Test
    void evidenceHoldsDigestsNeverTheRawTaskIdPathsNoteOrBranch() throws Exception {
        var h = fresh();
        h.grant(claimIn("ALPHA", "private-task", "/secret/repository", "private/source.py"), 0);
        Decision d = h.run(new ClaimCommand("BETA", "BETA", "blocked-task", "secret note", null, "/secret/repository",
                List.of("private/source.py"), new GitContext("secret-branch", "main", "merge")), 1);
        ClaimDeniedEvent e = evidence(d);
        assertThat(e.reasonCode()).isEqualTo("SCOPE_CONFLICT");
        assertThat(e.claimant()).isEqualTo("BETA");
        assertThat(e.claimantSha256()).isEqualTo(sha256("BETA"));
        assertThat(e.claimantTruncated()).isFalse();
        assertThat(e.pathCount()).isEqualTo(1);
        assertThat(e.taskIdSha256()).isEqualTo(sha256("blocked-task"));
        // SHA-256 of {"paths":["private/source.py"],"worktree":"/secret/repository"}, computed independently
        assertThat(e.scopeSha256()).isEqualTo("cf0a9cd5d8efab101f0b857ff63756ee58a586ad7e71b9efa2bb7ab84a4737ee");
        String text = e.toString();
        for (String secret : List.of("blocked-task", "private", "source.py", "/secret/repository", "secret note",
                "secret-branch")) {
            assertThat(text).doesNotContain(secret);
        }
    }

    @Test
    void scopeDigestKeepsNonAsciiLiteralAndUsesNormalisedPaths() throws Exception {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 0);
        ClaimDeniedEvent e = evidence(h.run(claimIn("B", "T2", "wt", "./café//notes/"), 1));
        assertThat(e.scopeSha256()).isEqualTo("a3c9a03f87ae4f34e875a5417734be61361c24ba92ec67545b52b774c8c9bf89");
        assertThat(e.scopeSha256()).isEqualTo(sha256("{\"paths\":[\"café/notes\"],\"worktree\":\"wt\"}"));
    }

    @Test
    void scopeDigestEscapesLikeCompactJson() throws Exception {
        var h = fresh();
        h.grant(claimIn("A", "T1", "w\"t\\\u0001"), 0);
        ClaimDeniedEvent e = evidence(h.run(claimIn("B", "T2", "w\"t\\\u0001", "/"), 1));
        // json.dumps({"paths":[""],"worktree":"w\"t\\\x01"}, sort_keys=True, separators=(",",":"), ensure_ascii=False)
        assertThat(e.scopeSha256()).isEqualTo("5e540c0423b846612392a8578610742e1c0685a2d559345af3238ff0a84acfa0");
    }

    @Test
    void pathCountReflectsWideningAndTheEmptyScope() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 0);
        assertThat(evidence(h.run(claimIn("B", "T2", "wt"), 1)).pathCount()).isZero();
        assertThat(evidence(h.run(claimIn("B", "T2", "wt", "a", "b", "../c"), 1)).pathCount()).isEqualTo(1);
        assertThat(evidence(h.run(claimIn("B", "T2", "wt", "a", "b", "a/"), 1)).pathCount()).isEqualTo(2);
    }

    @Test
    void longClaimantNamesAreTruncatedButDigestedWhole() throws Exception {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 0);
        String name = "é".repeat(300);
        ClaimDeniedEvent e = evidence(h.run(claimIn(name, "T1", "x"), 1));
        assertThat(e.claimant()).isEqualTo("é".repeat(256));
        assertThat(e.claimantTruncated()).isTrue();
        assertThat(e.claimantSha256()).isEqualTo(sha256(name));
        String exact = "n".repeat(256);
        ClaimDeniedEvent notTruncated = evidence(h.run(claimIn(exact, "T1", "x"), 1));
        assertThat(notTruncated.claimant()).isEqualTo(exact);
        assertThat(notTruncated.claimantTruncated()).isFalse();
    }

    @Test
    void grantsAndOtherVerbsWriteNoDenialEvidence() {
        var h = fresh();
        assertThat(h.run(claimIn("A", "T1", "wt"), 0).events()).noneMatch(e -> e instanceof ClaimDeniedEvent);
        for (Command c : List.of(release("B", "T1"), update("B", "T1", "working"), handoff("B", "T1", "C"),
                checkpoint("B", "T1", "x"), release("A", "GHOST"))) {
            Decision d = h.run(c, 1);
            assertThat(d.reply().granted()).isFalse();
            assertThat(d.events()).isEmpty();
        }
    }

    @Test
    void applyingDenialEvidenceChangesNoLease() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 0);
        var before = h.state(1, "T1");
        Decision d = h.run(claimIn("B", "T1", "x"), 1);
        d.events().forEach(h.registry::apply);
        assertThat(h.state(1, "T1")).isEqualTo(before);
        var replayed = h.replay();
        assertThat(Registries.State.of(replayed, 1, "T1")).isEqualTo(before);
        assertThat(replayed.epochCounter()).isEqualTo(1);
    }
}
