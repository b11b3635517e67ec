package dev.synapsehub.core.state;

import dev.synapsehub.core.board.NoteKind;
import dev.synapsehub.core.board.ProgressNote;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.LedgerProgressEvent;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A handoff's note and a release's assessment are decided with the change itself: one
 * decision, whose events carry both, so they are journaled in one batch and published together
 * (contract §5.7, §A11 R3). A refused change posts no note.
 */
class HubNoteDecisionTest {
    private final CoordinationState state = new CoordinationState();

    private void grant(ClaimCommand c, double at) {
        Decision d = state.decide(c, at);
        assertThat(d.reply().granted()).isTrue();
        d.events().forEach(state::apply);
    }

    private static ClaimCommand claim(String agent, String task) {
        return new ClaimCommand(agent, agent, task, null, null, task, List.of(), null);
    }

    @Test
    void aGrantedHandoffCarriesItsNoteInTheSameDecision() {
        grant(claim("A", "T1"), 100);
        Decision d = state.decide(new HandoffCommand("A", " T1 ", "B", true, "B", "  your turn ", null), 101);
        Reply.Granted granted = (Reply.Granted) d.reply();
        assertThat(granted.note()).isEqualTo(new ProgressNote("T1", "A", NoteKind.NOTE, "handed off to B: your turn", 101));
        assertThat(d.events()).hasSize(2);
        assertThat(d.events().get(0)).isInstanceOf(ClaimSnapshotEvent.class);
        assertThat(((LedgerProgressEvent) d.events().get(1)).note()).isEqualTo(granted.note());
        d.events().forEach(state::apply);
        assertThat(state.board().snapshot().progress()).containsExactly(granted.note());
    }

    @Test
    void aHandoffWithoutANoteSaysOnlyWhoGotIt() {
        grant(claim("A", "T1"), 100);
        Reply.Granted granted = (Reply.Granted) state.decide(new HandoffCommand("A", "T1", "B", true, "B", " ", null), 101)
                .reply();
        assertThat(granted.note().text()).isEqualTo("handed off to B");
    }

    @Test
    void aReleaseWithEvidenceCarriesItsAssessmentAndAPlainOneNone() {
        grant(claim("A", "T1"), 100);
        grant(claim("A", "T2"), 100);
        Decision withEvidence = state.decide(new ReleaseCommand("A", "T1", null, "release receipt: evidence=ok"), 102);
        assertThat(withEvidence.events()).extracting(CoordinationEvent::getClass)
                .containsExactly(ClaimReleasedEvent.class, LedgerProgressEvent.class);
        ProgressNote note = ((Reply.Granted) withEvidence.reply()).note();
        assertThat(note.kind()).isEqualTo(NoteKind.ASSESSMENT);
        assertThat(note.text()).isEqualTo("release receipt: evidence=ok");
        Decision plain = state.decide(new ReleaseCommand("A", "T2", null), 102);
        assertThat(plain.events()).extracting(CoordinationEvent::getClass).containsExactly(ClaimReleasedEvent.class);
        assertThat(((Reply.Granted) plain.reply()).note()).isNull();
    }

    @Test
    void aRefusedHandoffOrReleasePostsNothing() {
        grant(claim("A", "T1"), 100);
        assertThat(state.decide(new HandoffCommand("B", "T1", "C", true, "C", "x", null), 101).events()).isEmpty();
        assertThat(state.decide(new HandoffCommand("A", "T1", "C", false, null, "x", null), 101).events()).isEmpty();
        assertThat(state.decide(new ReleaseCommand("B", "T1", null, "evidence"), 101).events()).isEmpty();
    }
}
