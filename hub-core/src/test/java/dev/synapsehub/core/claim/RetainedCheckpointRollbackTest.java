package dev.synapsehub.core.claim;

import dev.synapsehub.core.undo.UndoLog;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * INV-RR-1 across a rolled-back batch: a batch that re-claims a task consumes its retained
 * checkpoint, and the rollback must put that checkpoint back at its original place in the
 * retention order, so the state (and the next eviction by the retention bound) is exactly the
 * one a replay of the committed events rebuilds. The scenario is the one the spec suite's
 * model test shrank seed -1017225570734131400 to.
 */
class RetainedCheckpointRollbackTest {

    private static final RegistryLimits TWO_RETAINED = new RegistryLimits(60, 10, 10, 2);

    /** A live registry plus every event it committed, so a replay can be built from them. */
    private static final class Live {
        final UndoLog undo = new UndoLog();
        final ClaimRegistry registry = new ClaimRegistry(TWO_RETAINED, undo);
        final List<CoordinationEvent> committed = new ArrayList<>();

        void grant(Command command, double t) {
            var decision = registry.decide(command, t);
            assertThat(decision.reply().granted()).as("%s", decision.reply()).isTrue();
            decision.events().forEach(registry::apply);
            committed.addAll(decision.events());
        }

        /** Decides and applies {@code commands} at {@code times} in one batch, then rolls it back. */
        void failedBatch(List<Command> commands, List<Double> times) {
            undo.begin();
            for (int i = 0; i < commands.size(); i++) {
                var decision = registry.decide(commands.get(i), times.get(i));
                decision.events().forEach(registry::apply);
            }
            undo.rollback();
        }

        /** The state a fresh registry rebuilds from the committed events, at the same time. */
        StateImage.Claims replay() {
            ClaimRegistry fresh = new ClaimRegistry(TWO_RETAINED);
            committed.forEach(fresh::apply);
            fresh.advanceTo(registry.now());
            return fresh.image();
        }
    }

    private static ClaimCommand claim(String agent, String task, double ttl) {
        return new ClaimCommand(agent, agent, task, null, ttl, "wt-" + task, List.of(), null);
    }

    private static List<String> retainedTasks(StateImage.Claims image) {
        return image.retained().stream().map(StateImage.Retained::taskId).toList();
    }

    /** T1 then T2 lapse with checkpoints, so T1 is the older retained entry. */
    private static Live twoRetained() {
        Live live = new Live();
        live.grant(claim("A", "T1", 30), 0);
        live.grant(new CheckpointCommand("A", "T1", "step-3", null), 1);
        live.grant(claim("C", "T2", 60), 2);
        live.grant(new CheckpointCommand("C", "T2", "cp-1", null), 3);
        live.registry.advanceTo(100); // T1 lapses at 30, T2 at 62
        assertThat(retainedTasks(live.registry.image())).containsExactly("T1", "T2");
        return live;
    }

    @Test
    void rollingBackAReclaimPutsItsCheckpointBackInPlace() {
        Live live = twoRetained();

        live.failedBatch(List.of(claim("C", "T1", 60)), List.of(100.0));

        assertThat(retainedTasks(live.registry.image())).containsExactly("T1", "T2");
        assertThat(live.registry.image()).isEqualTo(live.replay());
    }

    @Test
    void afterTheRollbackTheBoundEvictsWhatAReplayEvicts() {
        Live live = twoRetained();
        live.failedBatch(List.of(claim("C", "T1", 60)), List.of(100.0));

        live.grant(claim("D", "T3", 30), 110);
        live.grant(new CheckpointCommand("D", "T3", "t3", null), 111);
        live.registry.advanceTo(200); // T3 lapses: the bound of two drops the oldest, T1

        assertThat(retainedTasks(live.registry.image())).containsExactly("T2", "T3");
        assertThat(live.registry.retainedCheckpoint("T1")).isEmpty();
        assertThat(live.registry.retainedCheckpoint("T2")).contains("cp-1");
        assertThat(live.registry.image()).isEqualTo(live.replay());
    }

    @Test
    void aReleasedReclaimRolledBackStillMatchesTheReplay() {
        Live live = twoRetained();

        // Re-claim T1 (consuming its checkpoint), save over it and release, all rolled back.
        live.failedBatch(List.of(
                claim("C", "T1", 60),
                new CheckpointCommand("C", "T1", "other", null),
                new ReleaseCommand("C", "T1", null)), List.of(100.0, 100.0, 100.0));

        assertThat(live.registry.retainedCheckpoint("T1")).contains("step-3");
        assertThat(live.registry.image()).isEqualTo(live.replay());
    }

    @Test
    void aCheckpointThatLapsesInsideTheRolledBackBatchEvictsWhatAReplayEvicts() {
        Live live = twoRetained();
        live.grant(claim("D", "T3", 30), 100);
        live.grant(new CheckpointCommand("D", "T3", "t3", null), 101);

        // The batch re-claims T2 (room for one more), then a later decision lapses T3. Expiry
        // is not undone, so the rollback must re-apply the bound: a replay, where T2 never
        // left, dropped the oldest (T1) when T3 lapsed.
        live.failedBatch(List.of(claim("E", "T2", 60), claim("E", "T9", 60)), List.of(102.0, 140.0));

        assertThat(retainedTasks(live.registry.image())).containsExactly("T2", "T3");
        assertThat(live.registry.image()).isEqualTo(live.replay());
    }
}
