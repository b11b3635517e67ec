package dev.synapsehub.spec.invariants;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.synapsehub.spec.invariants.Registries.claim;
import static dev.synapsehub.spec.invariants.Registries.fresh;
import static dev.synapsehub.spec.invariants.Registries.release;
import static dev.synapsehub.spec.invariants.Registries.ttl;
import static dev.synapsehub.spec.invariants.Registries.update;
import static dev.synapsehub.spec.invariants.Registries.with;
import static org.assertj.core.api.Assertions.assertThat;

/** Pins INV-ME-1 (at most one live owner per task) at the registry level. */
class OneOwnerPerTaskTest {

    @Test
    void secondOwnerIsRefusedLeaseLiveAndIncumbentUntouched() {
        var h = with(ttl(300));
        Claim incumbent = h.grant(claim("A", "TASK-2"), 1000);
        Reply.Denied denied = h.deny(claim("B", "TASK-2"), 1010, Refusal.LEASE_LIVE);
        assertThat(denied.message()).contains("already claimed by A");
        assertThat(denied.holder()).isEqualTo("A");
        assertThat(h.owned("TASK-2", 1010)).isEqualTo(incumbent);
        assertThat(h.registry.snapshot(1010)).containsExactly(incumbent);
    }

    @Test
    void ownerReclaimSucceedsWithLaterExpiry() {
        var h = with(ttl(300));
        Claim first = h.grant(claim("A", "TASK-3"), 1000);
        Claim second = h.grant(claim("A", "TASK-3"), 1050);
        assertThat(second.owner()).isEqualTo("A");
        assertThat(second.leaseExpiresAt()).isGreaterThan(first.leaseExpiresAt());
        assertThat(h.registry.snapshot(1050)).hasSize(1);
    }

    @Test
    void blankTaskIdIsRefusedRequired() {
        var h = fresh();
        Reply.Denied denied = h.deny(claim("A", "   "), 1000, Refusal.TASK_ID_REQUIRED);
        assertThat(denied.message()).contains("required");
        assertThat(h.registry.snapshot(1000)).isEmpty();
        assertThat(h.registry.epochCounter()).isZero();
    }

    @Test
    void taskIdAndNoteAreStrippedAndExpiryIsExact() {
        var h = with(ttl(300));
        Claim c = h.grant(new ClaimCommand("A", "A", "  TASK-1  ", "  do work  ", null, "", List.of(), null), 1000);
        assertThat(c.taskId()).isEqualTo("TASK-1");
        assertThat(c.owner()).isEqualTo("A");
        assertThat(c.note()).isEqualTo("do work");
        assertThat(c.leaseExpiresAt()).isEqualTo(1300.0);
        assertThat(h.owned("TASK-1", 1000)).isEqualTo(c);
    }

    @Test
    void lapsedLeaseIsTakenOverByAnotherAgent() {
        var h = with(ttl(60));
        h.grant(claim("A", "TASK-4"), 1000);
        Claim taken = h.grant(claim("B", "TASK-4"), 1070);
        assertThat(taken.owner()).isEqualTo("B");
        assertThat(h.owned("TASK-4", 1070).owner()).isEqualTo("B");
    }

    @Test
    void nonOwnerReleaseIsRefusedNamingTheOwner() {
        var h = fresh();
        Claim held = h.grant(claim("A", "TASK-10"), 1000);
        Reply.Denied denied = h.deny(release("B", "TASK-10"), 1001, Refusal.NOT_OWNER);
        assertThat(denied.message()).contains("A");
        assertThat(h.owned("TASK-10", 1001)).isEqualTo(held);
    }

    @Test
    void ownerReleaseRemovesTheTask() {
        var h = fresh();
        h.grant(claim("A", "TASK-11"), 1000);
        Decision d = h.run(release("A", "TASK-11"), 1001);
        assertThat(d.reply().granted()).isTrue();
        assertThat(((Reply.Granted) d.reply()).message()).contains("released");
        assertThat(h.live("TASK-11", 1001)).isEmpty();
        assertThat(h.registry.charged("A")).isZero();
    }

    @Test
    void releaseOfUnknownOrBlankTaskIsRefused() {
        var h = fresh();
        assertThat(h.deny(release("A", "GHOST"), 1000, Refusal.NOT_CLAIMED).message())
                .contains("not currently claimed");
        assertThat(h.deny(release("A", "  "), 1000, Refusal.TASK_ID_REQUIRED).message()).contains("required");
    }

    @Test
    void ownershipIsCheckedBeforeStatusLegalityOnUpdate() {
        var h = fresh();
        Claim held = h.grant(claim("A", "TASK-7"), 1000);
        Reply.Denied denied = h.deny(update("B", "TASK-7", "blocked"), 1001, Refusal.NOT_OWNER);
        assertThat(denied.message()).contains("A");
        assertThat(h.owned("TASK-7", 1001)).isEqualTo(held);
        assertThat(h.deny(update("A", "NOPE", "working"), 1001, Refusal.NOT_FOUND).message()).contains("not found");
    }

    @Test
    void refusedClaimNeverConsumesAnEpochNorTouchesTheIncumbent() {
        var h = fresh();
        Claim incumbent = h.grant(claim("A", "T1"), 1000);
        for (int i = 0; i < 5; i++) {
            h.deny(claim("B" + i, "T1"), 1001 + i, Refusal.LEASE_LIVE);
        }
        assertThat(h.registry.epochCounter()).isEqualTo(1);
        assertThat(h.owned("T1", 1010)).isEqualTo(incumbent);
        assertThat(h.grant(Registries.claimIn("C", "T2", "other"), 1010).epoch()).isEqualTo(2);
    }

    @Test
    void decidingAloneChangesNothing() {
        var h = fresh();
        Decision d = h.registry.decide(claim("A", "T1"), 1000);
        assertThat(d.reply().granted()).isTrue();
        assertThat(h.live("T1", 1000)).isEmpty();
        assertThat(h.registry.epochCounter()).isZero();
        d.events().forEach(h.registry::apply);
        assertThat(h.owned("T1", 1000).status()).isEqualTo(ClaimStatus.CLAIMED);
    }

    @Test
    void everyTaskHasExactlyOneRecordKeyedByItsId() {
        var h = with(ttl(1000));
        String[] agents = {"A", "B", "C"};
        String[] tasks = {"T1", "T2", "T3"};
        java.util.Random random = new java.util.Random(7);
        for (int step = 0; step < 400; step++) {
            String agent = agents[random.nextInt(3)];
            String task = tasks[random.nextInt(3)];
            switch (random.nextInt(4)) {
                case 0 -> h.run(Registries.claimIn(agent, task, "wt-" + task), step);
                case 1 -> h.run(release(agent, task), step);
                case 2 -> h.run(new TaskUpdateCommand(agent, task, "working", null, null, null, null), step);
                default -> h.run(Registries.handoff(agent, task, agents[random.nextInt(3)]), step);
            }
            List<Claim> snapshot = h.registry.snapshot(step);
            assertThat(snapshot).extracting(Claim::taskId).doesNotHaveDuplicates();
            for (Claim c : snapshot) {
                assertThat(h.owned(c.taskId(), step)).isEqualTo(c);
            }
        }
    }
}
