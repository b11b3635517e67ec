package dev.synapsehub.core.claim;

import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.undo.UndoLog;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The claim family's text members are trimmed as the reference trims them, with Python's
 * {@code str.strip()} (contract §5.4–§5.7): U+00A0, U+2007, U+202F and U+0085 are whitespace.
 */
class ClaimFieldTrimTest {
    private final ClaimRegistry registry = new ClaimRegistry(RegistryLimits.DEFAULTS, new UndoLog());

    private Reply run(Command command, double t) {
        Decision d = registry.decide(command, t);
        d.events().forEach(registry::apply);
        return d.reply();
    }

    private static Claim claimOf(Reply r) {
        assertThat(r).isInstanceOf(Reply.Granted.class);
        return ((Reply.Granted) r).claim();
    }

    @Test
    void taskIdsNotesAndReferencesAreTrimmedOfPythonWhitespace() {
        Claim held = claimOf(run(new ClaimCommand("p/a", null, "\u00A0T1\u2007", "\u202Fhi\u0085", 600.0, "wa",
                List.of(), null), 0));
        assertThat(held.taskId()).isEqualTo("T1");
        assertThat(held.note()).isEqualTo("hi");

        Reply second = run(new ClaimCommand("p/b", null, "T1\u202F", null, 600.0, "wb", List.of(), null), 1);
        assertThat(second).isInstanceOf(Reply.Denied.class);
        assertThat(((Reply.Denied) second).refusal()).isEqualTo(Refusal.LEASE_LIVE);
        assertThat(((Reply.Denied) second).taskId()).isEqualTo("T1");

        Claim updated = claimOf(run(new TaskUpdateCommand("p/a", "\u0085T1", "\u00A0working\u2007", "\u00A0busy\u00A0",
                "\u202Fmem://x\u2007", null, null), 2));
        assertThat(updated.status()).isEqualTo(ClaimStatus.fromWire("working").orElseThrow());
        assertThat(updated.note()).isEqualTo("busy");
        assertThat(updated.dataRef()).isEqualTo("mem://x");

        Claim kept = claimOf(run(new HandoffCommand("p/a", "T1\u00A0", "\u2007p/b\u00A0", true, null, "\u202F", null), 3));
        assertThat(kept.owner()).isEqualTo("p/b");
        assertThat(kept.note()).as("a blank handoff note keeps the claim's note").isEqualTo("busy");
        Claim moved = claimOf(run(new HandoffCommand("p/b", "T1", "p/a", true, null, "\u00A0yours\u0085", null), 4));
        assertThat(moved.note()).isEqualTo("yours");

        assertThat(run(new ReleaseCommand("p/a", "\u2007T1\u202F", null, null), 5)).isInstanceOf(Reply.Granted.class);
        assertThat(registry.liveCount()).isZero();
    }

    @Test
    void gitContextFromTheWireIsTrimmedOfPythonWhitespace() {
        GitContext git = GitContext.fromWire("\u00A0feat\u2007", "\u202F", "\u0085commit\u00A0");
        assertThat(git).isEqualTo(new GitContext("feat", "main", "commit"));
        assertThat(GitContext.fromWire(null, null, null)).isEqualTo(new GitContext(null, null, null));
    }

    /** The constructor also decodes journals and snapshots: a stored value decodes as it did before. */
    @Test
    void aStoredGitContextDecodesUnchanged() {
        GitContext stored = new GitContext("\u00A0feat", "\u2007", "merge");
        assertThat(stored.branch()).isEqualTo("\u00A0feat");
        assertThat(stored.base()).isEqualTo("\u2007");
    }
}
