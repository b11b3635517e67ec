package dev.synapsehub.core.state;

import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.OperatorReleaseCommand;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A two-person operator relay decided by the writer (a mesh): the first principal's approval is
 * state (journaled, so a replay or a snapshot image keeps it), the same principal again changes
 * nothing, a distinct one consumes it and releases the task, once.
 */
class RelayApprovalsTest {
    private final CoordinationState state = new CoordinationState();
    /** Every event applied, in order: what a journal replay would apply. */
    private final List<CoordinationEvent> journal = new ArrayList<>();

    private Decision apply(Decision d) {
        d.events().forEach(e -> {
            state.apply(e);
            journal.add(e);
        });
        return d;
    }

    private static OperatorReleaseCommand approval(String principal) {
        return new OperatorReleaseCommand(principal, "proj", "T1", "{\"peer\":\"" + principal + "\"}", principal);
    }

    @Test
    void theFirstApprovalIsRecordedTheSameOneIgnoredAndADistinctOneReleasesOnce() {
        Decision claimed = apply(state.decide(new ClaimCommand("proj/alice", "proj/alice", "T1", null, null, "T1",
                List.of(), null), 100));
        assertThat(claimed.reply().granted()).isTrue();

        Reply first = apply(state.decide(approval("hub-a"), 101)).reply();
        assertThat(first).isInstanceOf(Reply.Denied.class);
        assertThat(((Reply.Denied) first).refusal()).isEqualTo(Refusal.AWAITING_SECOND_OPERATOR);
        assertThat(((Reply.Denied) first).message()).isEqualTo("recorded; awaiting approval by a second operator");
        assertThat(RelayApprovals.pending(state.idempotency()))
                .containsExactly(new RelayApprovals.Pending("release", "proj", "T1", "hub-a"));
        assertThat(state.claims().liveClaim("T1", 101)).isPresent();

        Decision again = state.decide(approval("hub-a"), 102);
        assertThat(((Reply.Denied) again.reply()).message())
                .isEqualTo("already recorded by this verified principal; awaiting a distinct principal");
        assertThat(again.events()).as("nothing changes").isEmpty();

        // the approval is journaled state: a replay of the events, and an image of the state, both hold it
        CoordinationState replayed = new CoordinationState();
        journal.forEach(replayed::apply);
        assertThat(RelayApprovals.pending(replayed.idempotency())).hasSize(1);
        CoordinationState restored = new CoordinationState();
        restored.restore(state.image());
        assertThat(RelayApprovals.pending(restored.idempotency())).hasSize(1);

        Decision second = apply(state.decide(approval("hub-c"), 103));
        assertThat(second.reply().granted()).isTrue();
        assertThat(second.events()).filteredOn(e -> e instanceof AuditRecordEvent).hasSize(1);
        assertThat(state.claims().liveClaim("T1", 103)).isEmpty();
        assertThat(RelayApprovals.pending(state.idempotency())).as("consumed").isEmpty();

        // a later approval starts a new quorum: nothing is released on one principal's word
        Reply later = apply(state.decide(approval("hub-c"), 104)).reply();
        assertThat(((Reply.Denied) later).refusal()).isEqualTo(Refusal.AWAITING_SECOND_OPERATOR);
    }

    @Test
    void pendingApprovalsAreListedOldestFirstAfterAReplayAndARestoreToo() {
        // recorded in an order their keys do not sort in: T3 (in zeta), then T1, then T2 (in alpha)
        String[][] tasks = {{"zeta", "T3"}, {"alpha", "T1"}, {"alpha", "T2"}};
        double t = 100;
        for (String[] task : tasks) {
            apply(state.decide(new ClaimCommand(task[0] + "/alice", task[0] + "/alice", task[1], null, null, task[1],
                    List.of(), null), t++));
        }
        for (String[] task : tasks) {
            Reply r = apply(state.decide(new OperatorReleaseCommand("hub-a", task[0], task[1], "{}", "hub-a"), t++))
                    .reply();
            assertThat(((Reply.Denied) r).refusal()).isEqualTo(Refusal.AWAITING_SECOND_OPERATOR);
        }
        // the same principal again changes nothing, so it does not move its approval either
        assertThat(state.decide(new OperatorReleaseCommand("hub-a", "zeta", "T3", "{}", "hub-a"), t++).events()).isEmpty();
        List<RelayApprovals.Pending> oldestFirst = List.of(new RelayApprovals.Pending("release", "zeta", "T3", "hub-a"),
                new RelayApprovals.Pending("release", "alpha", "T1", "hub-a"),
                new RelayApprovals.Pending("release", "alpha", "T2", "hub-a"));
        assertThat(RelayApprovals.pending(state.idempotency())).containsExactlyElementsOf(oldestFirst);

        CoordinationState replayed = new CoordinationState();
        journal.forEach(replayed::apply);
        assertThat(RelayApprovals.pending(replayed.idempotency())).containsExactlyElementsOf(oldestFirst);
        CoordinationState restored = new CoordinationState();
        restored.restore(state.image());
        assertThat(RelayApprovals.pending(restored.idempotency())).containsExactlyElementsOf(oldestFirst);
    }

    @Test
    void withoutAnApproverOneOperatorReleases() {
        apply(state.decide(new ClaimCommand("proj/alice", "proj/alice", "T1", null, null, "T1", List.of(), null), 100));
        Decision d = state.decide(new OperatorReleaseCommand("hub-a", "proj", "T1", "{}"), 101);
        assertThat(d.reply().granted()).isTrue();
        assertThat(RelayApprovals.pending(state.idempotency())).isEmpty();
    }
}
