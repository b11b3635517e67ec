package dev.synapsehub.core.claim;

import dev.synapsehub.core.undo.UndoLog;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A snapshot that keeps a live claim's owner, principal and scope (task update, checkpoint,
 * renewal) keeps its scope-index entry and quota charge; the claim must behave exactly as if
 * they had been removed and added again: it still conflicts, is charged once, frees its scope
 * and charge on release and expiry, rolls back, and replays to the same state.
 */
class SameHoldingReplacementTest {
    private final UndoLog undo = new UndoLog();
    private final ClaimRegistry registry = new ClaimRegistry(RegistryLimits.DEFAULTS, undo);
    private final List<CoordinationEvent> journal = new ArrayList<>();

    private Reply run(Command command, double t) {
        Decision d = registry.decide(command, t);
        for (CoordinationEvent e : d.events()) {
            registry.apply(e);
            journal.add(e);
        }
        return d.reply();
    }

    private static ClaimCommand claim(String agent, String task, String path) {
        return new ClaimCommand(agent, "p-" + agent, task, null, 600.0, "wt", List.of(path), null);
    }

    @Test
    void updatesAndCheckpointsKeepOneConflictingChargedHolding() {
        assertThat(run(claim("a", "T1", "src/x"), 0)).isInstanceOf(Reply.Granted.class);
        for (int i = 1; i <= 40; i++) {
            Command change = i % 2 == 0
                    ? new CheckpointCommand("a", "T1", "cp-" + i, null)
                    : new TaskUpdateCommand("a", "T1", i == 1 ? "working" : null, "note " + i, null, null, null);
            assertThat(run(change, i)).as("step %d", i).isInstanceOf(Reply.Granted.class);
        }
        assertThat(run(claim("a", "T1", "src/x"), 41)).isInstanceOf(Reply.Granted.class); // renewal
        assertThat(registry.charged("p-a")).isEqualTo(1);
        assertThat(registry.expiryQueueSize()).isLessThanOrEqualTo(2 * registry.liveCount() + 16);
        Reply denied = registry.decide(claim("b", "T2", "src/x/y"), 42).reply();
        assertThat(denied).isInstanceOf(Reply.Denied.class);
        assertThat(((Reply.Denied) denied).refusal()).isEqualTo(Refusal.SCOPE_CONFLICT);
        assertThat(((Reply.Denied) denied).conflictingTask()).isEqualTo("T1");

        assertThat(run(new ReleaseCommand("a", "T1", null), 43)).isInstanceOf(Reply.Granted.class);
        assertThat(registry.charged("p-a")).isZero();
        assertThat(run(claim("b", "T2", "src/x/y"), 44)).isInstanceOf(Reply.Granted.class);
        assertThat(replayed()).isEqualTo(registry.image());
    }

    @Test
    void anUpdatedClaimExpiresWithItsNewLeaseAndFreesItsScope() {
        run(claim("a", "T1", "src/x"), 0);
        run(new CheckpointCommand("a", "T1", "cp", null), 1);
        run(claim("a", "T1", "src/x"), 500); // renewed: lease until 1100, its first entry (600) goes stale
        assertThat(registry.liveClaim("T1", 700)).isPresent();
        assertThat(registry.charged("p-a")).isEqualTo(1);
        assertThat(registry.liveClaim("T1", 1100)).isEmpty();
        assertThat(registry.charged("p-a")).isZero();
        assertThat(registry.retainedCheckpoint("T1")).contains("cp");
        assertThat(run(claim("b", "T2", "src/x"), 1100)).isInstanceOf(Reply.Granted.class);
        assertThat(replayed()).isEqualTo(registry.image());
    }

    @Test
    void aRolledBackCheckpointLeavesTheClaimAsItWas() {
        run(claim("a", "T1", "src/x"), 0);
        StateImage.Claims before = registry.image();
        undo.begin();
        run(new CheckpointCommand("a", "T1", "cp", null), 1);
        undo.rollback();
        journal.remove(journal.size() - 1);
        assertThat(registry.image().live()).isEqualTo(before.live());
        assertThat(registry.charged("p-a")).isEqualTo(1);
        Reply denied = registry.decide(claim("b", "T2", "src/x"), 2).reply();
        assertThat(((Reply.Denied) denied).conflictingTask()).isEqualTo("T1");
        run(new ReleaseCommand("a", "T1", null), 3);
        assertThat(registry.charged("p-a")).isZero();
        assertThat(run(claim("b", "T2", "src/x"), 4)).isInstanceOf(Reply.Granted.class);
    }

    @Test
    void aHandoffMovesTheHoldingToTheRecipient() {
        run(claim("a", "T1", "src/x"), 0);
        run(new HandoffCommand("a", "T1", "b", true, "p-b", null, null), 1);
        assertThat(registry.charged("p-a")).isZero();
        assertThat(registry.charged("p-b")).isEqualTo(1);
        // the recipient's own claims may now overlap it; the former owner's may not
        assertThat(run(claim("b", "T2", "src/x/y"), 2)).isInstanceOf(Reply.Granted.class);
        Reply denied = registry.decide(claim("a", "T3", "src/x"), 3).reply();
        assertThat(((Reply.Denied) denied).refusal()).isEqualTo(Refusal.SCOPE_CONFLICT);
        assertThat(replayed()).isEqualTo(registry.image());
    }

    private StateImage.Claims replayed() {
        ClaimRegistry copy = new ClaimRegistry();
        journal.forEach(copy::apply);
        copy.advanceTo(registry.now());
        return copy.image();
    }
}
