package dev.synapsehub.core.state;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.Executor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link CoordinationState#restore(StateImage, Executor)}: the claims loaded on another thread
 * give exactly the state a one-thread restore gives, and a part refused on either thread is
 * thrown to the caller.
 */
class ParallelRestoreTest {
    /** Runs each task on a new thread, as start-up does. */
    private static final Executor OWN_THREAD = task -> new Thread(task, "restore-claims-test").start();

    private static void run(CoordinationState state, Command command, double now) {
        Decision d = state.decide(command, now);
        for (CoordinationEvent e : d.events()) {
            state.apply(e);
        }
    }

    private static CoordinationState source() {
        CoordinationState s = new CoordinationState();
        for (int i = 0; i < 200; i++) {
            run(s, ClaimCommand.of("agent-" + (i % 7), "T" + i), 1000 + i);
        }
        for (int i = 0; i < 200; i += 3) {
            run(s, new ReleaseCommand("agent-" + (i % 7), "T" + i, null), 1300 + i);
        }
        run(s, LedgerTaskCommand.of("A", "B1", "board task"), 1600);
        return s;
    }

    @Test
    void theClaimsLoadedOnAnotherThreadGiveTheSameStateAsOneThread() {
        StateImage image = source().image();
        CoordinationState one = new CoordinationState();
        one.restore(image);
        CoordinationState two = new CoordinationState();
        two.restore(image, OWN_THREAD);

        assertThat(two.image()).isEqualTo(one.image()).isEqualTo(image);
        assertThat(two.lastSeq()).isEqualTo(image.lastSeq());
        assertThat(two.claims().snapshot(1700)).extracting(Claim::taskId)
                .isEqualTo(one.claims().snapshot(1700).stream().map(Claim::taskId).toList());
        // and both decide the same future
        run(one, ClaimCommand.of("late", "T1"), 1701);
        run(two, ClaimCommand.of("late", "T1"), 1701);
        run(one, ClaimCommand.of("late", "T0"), 1702);
        run(two, ClaimCommand.of("late", "T0"), 1702);
        assertThat(two.image()).isEqualTo(one.image());
    }

    @Test
    void aPartRefusedOnEitherThreadIsThrownToTheCaller() {
        StateImage image = source().image();
        StateImage empty = new CoordinationState().image();
        // the claims thread refuses: its registry is not empty (an image at seq 0 loaded claims into it)
        CoordinationState loaded = new CoordinationState();
        loaded.restore(new StateImage(0, image.claims(), List.of(), empty.board(), empty.resources(),
                empty.messaging()));
        assertThatThrownBy(() -> loaded.restore(image, OWN_THREAD)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("restore needs an empty registry");

        // the calling thread refuses (no board), the claims load fine
        StateImage noBoard = new StateImage(7, image.claims(), image.idempotency(), null, image.resources(),
                image.messaging());
        assertThatThrownBy(() -> new CoordinationState().restore(noBoard, OWN_THREAD))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void aRunnerThatCannotStartTheClaimsLoadsEverythingOnTheCallingThread() {
        StateImage image = source().image();
        CoordinationState refused = new CoordinationState();
        refused.restore(image, task -> {
            throw new java.util.concurrent.RejectedExecutionException("no thread");
        });
        assertThat(refused.image()).isEqualTo(image);
        assertThat(refused.lastSeq()).isEqualTo(image.lastSeq());

        CoordinationState noNativeThread = new CoordinationState();
        noNativeThread.restore(image, task -> {
            throw new OutOfMemoryError("unable to create native thread");
        });
        assertThat(noNativeThread.image()).isEqualTo(image);
    }
}
