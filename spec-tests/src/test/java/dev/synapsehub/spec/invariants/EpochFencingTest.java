package dev.synapsehub.spec.invariants;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;
import java.util.function.LongFunction;

import static dev.synapsehub.spec.invariants.Registries.checkpoint;
import static dev.synapsehub.spec.invariants.Registries.claimIn;
import static dev.synapsehub.spec.invariants.Registries.fresh;
import static dev.synapsehub.spec.invariants.Registries.handoff;
import static dev.synapsehub.spec.invariants.Registries.release;
import static dev.synapsehub.spec.invariants.Registries.ttl;
import static dev.synapsehub.spec.invariants.Registries.with;
import static org.assertj.core.api.Assertions.assertThat;

/** Pins INV-EF-1 (fresh, strictly increasing epochs) and INV-EF-2 (stale epochs fenced out). */
class EpochFencingTest {

    private static TaskUpdateCommand updateAt(String agent, String task, String status, long epoch) {
        return new TaskUpdateCommand(agent, task, status, null, null, epoch, null);
    }

    // ---- INV-EF-1 ---------------------------------------------------------------------------

    @Test
    void firstClaimCarriesEpochOneAndEachGrantTheNext() {
        var h = fresh();
        assertThat(h.grant(claimIn("A", "T1", "", "a"), 1000).epoch()).isEqualTo(1);
        assertThat(h.grant(claimIn("A", "T2", "", "b"), 1000).epoch()).isEqualTo(2);
        assertThat(h.grant(claimIn("A", "T3", "", "c"), 1000).epoch()).isEqualTo(3);
        assertThat(h.grant(claimIn("B", "T4", "", "d"), 1000).epoch()).isEqualTo(4);
    }

    @Test
    void renewalStampsAFreshEpoch() {
        var h = fresh();
        assertThat(h.grant(claimIn("A", "T1", "wt"), 1000).epoch()).isEqualTo(1);
        assertThat(h.grant(claimIn("A", "T1", "wt"), 1001).epoch()).isEqualTo(2);
    }

    @Test
    void handoffStampsAnEpochGreaterThanTheGivers() {
        var h = fresh();
        Claim given = h.grant(claimIn("A", "T1", "wt"), 1000);
        h.grant(claimIn("C", "T9", "other"), 1000);
        Claim moved = h.grant(handoff("A", "T1", "B"), 1001);
        assertThat(moved.epoch()).isGreaterThan(given.epoch()).isEqualTo(3);
        assertThat(h.registry.epochCounter()).isEqualTo(3);
    }

    @Test
    void counterIsAMaxOverHistoryAndNeverReused() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        h.grant(release("A", "T1"), 1001);
        assertThat(h.registry.epochCounter()).isEqualTo(1);
        assertThat(h.grant(claimIn("A", "T1", "wt"), 1002).epoch()).isEqualTo(2);
    }

    @Test
    void randomSequencesKeepEpochsStrictlyIncreasingAndWithinTheCounter() {
        var h = with(ttl(1000));
        String[] agents = {"A", "B", "C"};
        Random random = new Random(42);
        long highest = 0;
        for (int step = 0; step < 2000; step++) {
            String agent = agents[random.nextInt(3)];
            String task = "T" + random.nextInt(3);
            Command command = switch (random.nextInt(5)) {
                case 0, 1 -> claimIn(agent, task, "wt-" + task);
                case 2 -> release(agent, task);
                case 3 -> new TaskUpdateCommand(agent, task, "working", null, null, null, null);
                default -> handoff(agent, task, agents[random.nextInt(3)]);
            };
            Reply reply = h.run(command, step).reply();
            if (reply instanceof Reply.Granted g && !(command instanceof TaskUpdateCommand)
                    && !(command instanceof dev.synapsehub.core.command.ReleaseCommand)) {
                assertThat(g.claim().epoch()).isGreaterThan(highest);
                highest = g.claim().epoch();
            }
            assertThat(h.registry.epochCounter()).isEqualTo(highest);
            for (Claim c : h.registry.snapshot(step)) {
                assertThat(c.epoch()).isBetween(1L, h.registry.epochCounter());
            }
        }
        assertThat(h.registry.snapshot(1e9)).isEmpty();
    }

    @Test
    void replayRestoresTheCounterAndEveryClaimExactly() {
        var h = with(ttl(300));
        h.grant(claimIn("A", "T1", "wt1", "src"), 1000);
        h.grant(claimIn("B", "T2", "wt2"), 1000);
        h.grant(new TaskUpdateCommand("A", "T1", "working", "n", "mem://k", null, null), 1001);
        h.grant(checkpoint("A", "T1", "cp-1"), 1002);
        h.grant(handoff("B", "T2", "C"), 1003);
        h.grant(claimIn("D", "T3", "wt3"), 1004);
        h.grant(release("D", "T3"), 1005);
        h.deny(claimIn("E", "T1", "wt1"), 1006, Refusal.LEASE_LIVE);
        ClaimRegistry replayed = h.replay();
        assertThat(Registries.State.of(replayed, 1010, "T1", "T2", "T3"))
                .isEqualTo(h.state(1010, "T1", "T2", "T3"));
        assertThat(replayed.epochCounter()).isEqualTo(4);
        assertThat(replayed.liveClaim("T1", 1010).orElseThrow().version()).isEqualTo(2);
    }

    // ---- INV-EF-2 ---------------------------------------------------------------------------

    @Test
    void releaseWithCurrentEpochSucceedsAndStaleIsFenced() {
        var h = fresh();
        Claim c = h.grant(claimIn("A", "T1", "wt"), 1000);
        assertThat(h.deny(release("A", "T1", 999), 1001, Refusal.STALE_EPOCH).message()).contains("epoch is stale");
        assertThat(h.owned("T1", 1001)).isEqualTo(c);
        h.grant(release("A", "T1", c.epoch()), 1002);
        assertThat(h.live("T1", 1002)).isEmpty();
    }

    @Test
    void updateWithCurrentEpochSucceedsAndStaleIsFenced() {
        var h = fresh();
        Claim c = h.grant(claimIn("A", "T1", "wt"), 1000);
        h.deny(updateAt("A", "T1", "done", 999), 1001, Refusal.STALE_EPOCH);
        assertThat(h.owned("T1", 1001)).isEqualTo(c);
        assertThat(h.grant(updateAt("A", "T1", "working", c.epoch()), 1002).status()).isEqualTo(ClaimStatus.WORKING);
    }

    @Test
    void handoffWithStaleEpochIsFenced() {
        var h = fresh();
        Claim c = h.grant(claimIn("A", "T1", "wt"), 1000);
        h.deny(handoff("A", "T1", "B", 999), 1001, Refusal.STALE_EPOCH);
        assertThat(h.owned("T1", 1001)).isEqualTo(c);
        assertThat(h.grant(handoff("A", "T1", "B", c.epoch()), 1002).owner()).isEqualTo("B");
    }

    @Test
    void checkpointWithStaleEpochIsFenced() {
        var h = fresh();
        Claim c = h.grant(claimIn("A", "T1", "wt"), 1000);
        h.deny(checkpoint("A", "T1", "cp", 999), 1001, Refusal.STALE_EPOCH);
        assertThat(h.owned("T1", 1001)).isEqualTo(c);
        assertThat(h.grant(checkpoint("A", "T1", "cp", c.epoch()), 1002).checkpoint()).isEqualTo("cp");
    }

    @Test
    void aSupersededEpochIsFencedOnEveryVerbAfterRenewal() {
        List<LongFunction<Command>> verbs = List.of(
                e -> release("A", "T1", e),
                e -> updateAt("A", "T1", "working", e),
                e -> handoff("A", "T1", "B", e),
                e -> checkpoint("A", "T1", "cp", e));
        for (LongFunction<Command> verb : verbs) {
            var h = fresh();
            long old = h.grant(claimIn("A", "T1", "wt"), 1000).epoch();
            Claim renewed = h.grant(claimIn("A", "T1", "wt"), 1001);
            h.deny(verb.apply(old), 1002, Refusal.STALE_EPOCH);
            assertThat(h.owned("T1", 1002)).isEqualTo(renewed);
            assertThat(h.run(verb.apply(renewed.epoch()), 1003).reply().granted()).isTrue();
        }
    }

    @Test
    void aStaleEpochFromANonOwnerGetsTheOwnershipRefusal() {
        List<LongFunction<Command>> verbs = List.of(
                e -> release("B", "T1", e),
                e -> updateAt("B", "T1", "working", e),
                e -> handoff("B", "T1", "C", e),
                e -> checkpoint("B", "T1", "cp", e));
        for (LongFunction<Command> verb : verbs) {
            var h = fresh();
            Claim c = h.grant(claimIn("A", "T1", "wt"), 1000);
            assertThat(h.deny(verb.apply(999), 1001, Refusal.NOT_OWNER).message()).contains("A");
            assertThat(h.deny(verb.apply(c.epoch()), 1001, Refusal.NOT_OWNER).holder()).isEqualTo("A");
            assertThat(h.owned("T1", 1001)).isEqualTo(c);
        }
    }

    @Test
    void handoffFencesTheGiverOut() {
        var h = fresh();
        Claim c = h.grant(claimIn("A", "T1", "wt"), 1000);
        Claim moved = h.grant(handoff("A", "T1", "B"), 1001);
        h.deny(release("A", "T1", c.epoch()), 1002, Refusal.NOT_OWNER);
        h.deny(release("B", "T1", c.epoch()), 1002, Refusal.STALE_EPOCH);
        h.grant(release("B", "T1", moved.epoch()), 1003);
    }

    @Test
    void selfTargetIsCheckedBeforeTheEpoch() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        h.deny(handoff("A", "T1", "A", 999), 1001, Refusal.ALREADY_OWNER);
    }

    @Test
    void noEpochMeansUnfenced() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 1000);
        h.grant(claimIn("A", "T1", "wt"), 1001);
        h.grant(Registries.update("A", "T1", "working"), 1002);
        h.grant(checkpoint("A", "T1", "cp"), 1003);
        h.grant(handoff("A", "T1", "B"), 1004);
        h.grant(release("B", "T1"), 1005);
    }
}
