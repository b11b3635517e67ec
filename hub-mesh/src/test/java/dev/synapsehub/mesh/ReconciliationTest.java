package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.reply.AuditRecordedReply;
import dev.synapsehub.core.reply.ChannelReply;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Seed 001 §10: what a replay's decision becomes. */
class ReconciliationTest {
    private static Outcome denied(Refusal r) {
        return new Outcome.Decided(new Reply.Denied("T1", r, "why"), List.of(), null);
    }

    @Test
    void aReplayRefusedBecauseItsIdMayHaveBeenForgottenEndsAsConflictRequiresMergeAlsoAfterTheWire() {
        Outcome refused = MeshSite.forgotten("intent-7");
        OutcomeCodec codec = new OutcomeCodec();
        Outcome forwarded = codec.read(MeshJson.tree(MeshJson.bytes(codec.write(refused)))); // as a follower gets it
        for (Outcome o : List.of(refused, forwarded)) {
            Reconciliation.Result r = Reconciliation.of(o);
            assertThat(r).as("never left queued to be decided later").isNotNull();
            assertThat(r.outcome()).isEqualTo(ReplayOutcome.CONFLICT_REQUIRES_MERGE);
            assertThat(r.detail()).startsWith("intent_forgotten: ").contains("intent-7");
        }
        assertThat(MeshSite.isForgotten(new Outcome.Refused(Outcome.Reason.COMMIT_UNKNOWN, "x"))).isFalse();
    }

    @Test
    void eachDecisionMapsToOneExplicitOutcomeAndUndecidedOnesStayQueued() {
        assertThat(Reconciliation.of(new Outcome.Decided(new AuditRecordedReply("k"), List.of(), null)).outcome())
                .isEqualTo(ReplayOutcome.APPLIED);
        assertThat(Reconciliation.of(new Outcome.Replayed("{}")).outcome()).isEqualTo(ReplayOutcome.NOOP_ALREADY_APPLIED);
        assertThat(Reconciliation.of(new Outcome.IdempotencyConflict("{}")).outcome())
                .isEqualTo(ReplayOutcome.CONFLICT_REQUIRES_MERGE);
        assertThat(Reconciliation.of(denied(Refusal.STALE_EPOCH)).outcome()).isEqualTo(ReplayOutcome.REJECTED_FENCED);
        for (Refusal moved : List.of(Refusal.NOT_CLAIMED, Refusal.NOT_OWNER, Refusal.NOT_FOUND)) {
            assertThat(Reconciliation.of(denied(moved)).outcome()).as(moved.name()).isEqualTo(ReplayOutcome.SUPERSEDED);
        }
        for (Refusal clash : List.of(Refusal.LEASE_LIVE, Refusal.SCOPE_CONFLICT, Refusal.VERSION_CONFLICT,
                Refusal.QUOTA_EXCEEDED)) {
            Reconciliation.Result r = Reconciliation.of(denied(clash));
            assertThat(r.outcome()).as(clash.name()).isEqualTo(ReplayOutcome.CONFLICT_REQUIRES_MERGE);
            assertThat(r.detail()).startsWith(clash.name());
        }
        for (Outcome.Reason reason : Outcome.Reason.values()) {
            assertThat(Reconciliation.of(new Outcome.Refused(reason, "x"))).as(reason.name()).isNull();
        }
        Reconciliation.Result refusedChannel = Reconciliation.of(new Outcome.Decided(
                new ChannelReply("ops", false, "channel 'ops' already exists", List.of()), List.of(), null));
        assertThat(refusedChannel.outcome()).as("a refused channel verb").isEqualTo(ReplayOutcome.CONFLICT_REQUIRES_MERGE);
        assertThat(refusedChannel.detail()).isEqualTo("channel_result: channel 'ops' already exists");
        assertThat(Reconciliation.of(new Outcome.Decided(new ChannelReply("ops", true, "joined 'ops'",
                List.of("ann", "bob")), List.of(), null)).outcome()).isEqualTo(ReplayOutcome.APPLIED);
        assertThat(ReplayOutcome.fromWire("conflict_requires_merge")).isEqualTo(ReplayOutcome.CONFLICT_REQUIRES_MERGE);
        assertThat(ReplayOutcome.NOOP_ALREADY_APPLIED.wire()).isEqualTo("noop_already_applied");
    }
}
