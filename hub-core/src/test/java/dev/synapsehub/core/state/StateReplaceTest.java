package dev.synapsehub.core.state;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link CoordinationState#replaceWith}: what a mesh node does when it installs a leader's snapshot. */
class StateReplaceTest {
    private static void run(CoordinationState state, Command command, double now) {
        Decision d = state.decide(command, now);
        for (CoordinationEvent e : d.events()) {
            state.apply(e);
        }
    }

    private static CoordinationState leader() {
        CoordinationState s = new CoordinationState();
        run(s, ClaimCommand.of("A", "T1"), 1000);
        run(s, ClaimCommand.of("B", "T2"), 1001);
        run(s, LedgerTaskCommand.of("A", "B1", "board task"), 1002);
        run(s, new ReleaseCommand("B", "T2", null), 1003);
        return s;
    }

    @Test
    void aStateThatHeldSomethingElseHoldsExactlyTheImageAfterwards() {
        CoordinationState source = leader();
        CoordinationState lagging = new CoordinationState();
        run(lagging, ClaimCommand.of("Z", "OLD"), 900);

        lagging.replaceWith(source.image());

        assertThat(lagging.image()).isEqualTo(source.image());
        assertThat(lagging.lastSeq()).isEqualTo(source.lastSeq());
        assertThat(lagging.claims().snapshot(1004)).extracting(Claim::taskId).containsExactly("T1");
        // and both go on identically from there
        run(source, ClaimCommand.of("C", "T3"), 1005);
        run(lagging, ClaimCommand.of("C", "T3"), 1005);
        assertThat(lagging.image()).isEqualTo(source.image());
    }

    @Test
    void aBatchOpenAcrossTheReplacementRollsBackOnlyWhatCameAfterIt() {
        CoordinationState source = leader();
        CoordinationState target = new CoordinationState();
        run(target, ClaimCommand.of("Z", "OLD"), 900);
        target.beginBatch();
        target.replaceWith(source.image());
        run(target, ClaimCommand.of("C", "T3"), 1005);
        target.rollbackBatch();

        // the registry's clock never goes back (by design), everything else is the image's
        StateImage after = target.image();
        StateImage expected = source.image();
        assertThat(after.lastSeq()).isEqualTo(expected.lastSeq());
        assertThat(after.claims().live()).isEqualTo(expected.claims().live());
        assertThat(after.claims().orderCounter()).isEqualTo(expected.claims().orderCounter());
        assertThat(after.board()).isEqualTo(expected.board());
        assertThat(target.claims().snapshot(1004)).extracting(Claim::taskId).containsExactly("T1");
    }

    @Test
    void anImageARegistryRefusesLeavesTheStateAsItWas() {
        CoordinationState target = leader();
        StateImage before = target.image();
        StateImage other = new CoordinationState().image();
        // the claims and ledger would load, the board cannot: nothing may be swapped in
        StateImage bad = new StateImage(99, other.claims(), other.idempotency(), null, other.resources(),
                other.messaging());

        assertThatThrownBy(() -> target.replaceWith(bad)).isInstanceOf(RuntimeException.class);
        assertThat(target.image()).isEqualTo(before);
    }
}
