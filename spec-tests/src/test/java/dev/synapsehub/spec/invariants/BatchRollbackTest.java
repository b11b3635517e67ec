package dev.synapsehub.spec.invariants;

import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.reply.Refusal;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static dev.synapsehub.spec.invariants.Registries.checkpoint;
import static dev.synapsehub.spec.invariants.Registries.claimIn;
import static dev.synapsehub.spec.invariants.Registries.fresh;
import static dev.synapsehub.spec.invariants.Registries.handoff;
import static dev.synapsehub.spec.invariants.Registries.release;
import static dev.synapsehub.spec.invariants.Registries.ttl;
import static dev.synapsehub.spec.invariants.Registries.with;
import static org.assertj.core.api.Assertions.assertThat;

/** Pins the registry half of INV-JA-2: a rolled-back batch restores the exact previous state. */
class BatchRollbackTest {

    private static final String[] TASKS = {"FIRST", "SECOND", "T1", "T2", "T3"};

    /** Decides and applies {@code command} inside a batch, then rolls it back. */
    private static void applyThenRollback(Registries.Harness h, Command command, double t) {
        var d = h.registry.decide(command, t);
        assertThat(d.reply().granted()).as("%s", d.reply()).isTrue();
        h.undo.begin();
        d.events().forEach(h.registry::apply);
        h.undo.rollback();
    }

    private static Registries.Harness seeded() {
        var h = with(ttl(1000));
        h.grant(new ClaimCommand("B", "pB", "FIRST", null, null, "main", List.of("src/app.py"), null), 0);
        h.grant(new ClaimCommand("C", "pA", "SECOND", null, null, "main", List.of("src/lib"), null), 0);
        h.grant(claimIn("A", "T1", "wt1"), 0);
        h.grant(checkpoint("A", "T1", "cp1"), 1);
        h.grant(new ClaimCommand("D", "D", "T2", null, 30.0, "wt2", List.of(), null), 1);
        h.grant(checkpoint("D", "T2", "resume-here"), 2);
        h.registry.snapshot(40); // T2 expired: its checkpoint is retained
        return h;
    }

    private static void assertConflictOrderIntact(Registries.Harness h, double t) {
        var d = h.registry.decide(claimIn("Z", "NEW", "main", "src"), t);
        assertThat(d.reply()).isInstanceOfSatisfying(dev.synapsehub.core.reply.Reply.Denied.class,
                r -> assertThat(r.conflictingTask()).isEqualTo("FIRST"));
    }

    @Test
    void rollingBackEachVerbRestoresTheExactState() {
        List<Command> commands = List.of(
                claimIn("E", "T3", "wt3"),                                               // new claim
                claimIn("E", "T2", "wt2"),                                               // takeover: consumes retained
                new ClaimCommand("B", "pA", "FIRST", null, null, "main", List.of("src/app.py"), null), // renewal, principal moves
                new TaskUpdateCommand("A", "T1", "working", "n", "d", null, null),      // update
                checkpoint("A", "T1", "cp2"),                                            // checkpoint
                new HandoffCommand("B", "FIRST", "F", true, "pA", null, null),                // handoff, charge moves
                release("B", "FIRST"),                                                   // release (first in order)
                release("A", "T1"));                                                     // release with checkpoint
        for (Command command : commands) {
            var h = seeded();
            var before = h.state(41, TASKS);
            applyThenRollback(h, command, 41);
            assertThat(h.state(41, TASKS)).as("after rolling back %s", command).isEqualTo(before);
            assertConflictOrderIntact(h, 41);
            assertThat(h.registry.decide(claimIn("Y", "T9", "wt9"), 41).reply().granted()).isTrue();
        }
    }

    @Test
    void rollingBackAWholeBatchOfSeveralEventsRestoresTheState() {
        var h = seeded();
        var before = h.state(41, TASKS);
        h.undo.begin();
        for (Command c : List.of(release("B", "FIRST"), claimIn("E", "FIRST", "main", "src/app.py"),
                claimIn("E", "T2", "wt2"), handoff("A", "T1", "E"), claimIn("E", "T3", "wt3"))) {
            var d = h.registry.decide(c, 41);
            assertThat(d.reply().granted()).as("%s", d.reply()).isTrue();
            d.events().forEach(h.registry::apply);
        }
        assertThat(h.registry.epochCounter()).isGreaterThan(before.epochCounter());
        h.undo.rollback();
        assertThat(h.state(41, TASKS)).isEqualTo(before);
        assertConflictOrderIntact(h, 41);
        assertThat(h.registry.retainedCheckpoint("T2")).contains("resume-here");
    }

    @Test
    void committedBatchKeepsItsChanges() {
        var h = seeded();
        var d = h.registry.decide(claimIn("E", "T3", "wt3"), 41);
        h.undo.begin();
        d.events().forEach(h.registry::apply);
        h.undo.commit();
        h.undo.rollback(); // nothing left to undo
        assertThat(h.owned("T3", 41).owner()).isEqualTo("E");
    }

    @Test
    void epochsAreReissuedAfterARollback() {
        var h = fresh();
        h.grant(claimIn("A", "T1", "wt"), 0);
        applyThenRollback(h, claimIn("A", "T2", "wt2"), 1);
        assertThat(h.registry.epochCounter()).isEqualTo(1);
        assertThat(h.grant(claimIn("A", "T2", "wt2"), 1).epoch()).isEqualTo(2);
    }

    @Test
    void rollbackMatchesAReplayOfTheCommittedEventsOnly() {
        var h = with(ttl(500));
        Random random = new Random(5);
        String[] agents = {"A", "B", "C"};
        double t = 0;
        for (int step = 0; step < 600; step++) {
            t += random.nextInt(20);
            String agent = agents[random.nextInt(3)];
            String task = "T" + random.nextInt(4);
            Command command = switch (random.nextInt(5)) {
                case 0, 1 -> claimIn(agent, task, random.nextBoolean() ? "wt" : "wt-" + task, "p" + random.nextInt(3));
                case 2 -> release(agent, task);
                case 3 -> checkpoint(agent, task, "cp" + step);
                default -> handoff(agent, task, agents[random.nextInt(3)]);
            };
            var d = h.registry.decide(command, t);
            if (random.nextInt(3) == 0) {
                var before = h.state(t, "T0", "T1", "T2", "T3");
                h.undo.begin();
                d.events().forEach(h.registry::apply);
                h.undo.rollback();
                assertThat(h.state(t, "T0", "T1", "T2", "T3")).as("step %d %s", step, command).isEqualTo(before);
            } else {
                d.events().forEach(e -> {
                    h.registry.apply(e);
                    h.journal.add(e);
                });
            }
        }
        ClaimRegistry replayed = h.replay();
        assertThat(Registries.State.of(replayed, t, "T0", "T1", "T2", "T3")).isEqualTo(h.state(t, "T0", "T1", "T2", "T3"));
    }

    @Test
    void aRefusalNeedsNoRollback() {
        var h = seeded();
        var before = h.state(41, TASKS);
        h.deny(claimIn("Z", "FIRST", "x"), 41, Refusal.LEASE_LIVE);
        assertThat(h.state(41, TASKS)).isEqualTo(before);
    }
}
