package dev.synapsehub.core.state;

import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Live, every decision advances the hub clock (claims.advanceTo in decide), and a snapshot
 * images that clock; a replay advances it on every event's time too, so restarted at a wall
 * time earlier than the last non-claim event (a clock stepped back during the downtime), a
 * full replay and a snapshot plus tail run on the same hub clock (INV-RR-1).
 */
class ReplayHubClockTest {
    private static List<JournaledEvent> live(CoordinationState s) {
        List<JournaledEvent> rows = new ArrayList<>();
        Decision claim = s.decide(new ClaimCommand("alice", "alice", "T1", null, null, "T1", List.of(), null), 50);
        Decision task = s.decide(new LedgerTaskCommand("bob", "B1", "title", "d", List.of(), null, null, null, null), 100);
        for (Decision d : List.of(claim, task)) {
            for (CoordinationEvent e : d.events()) {
                s.apply(e);
                rows.add(new JournaledEvent(s.lastSeq(), e));
            }
        }
        return rows;
    }

    @Test
    void aFullReplayAndASnapshotRestoreSettleOnTheSameHubClock() {
        CoordinationState running = new CoordinationState();
        List<JournaledEvent> rows = live(running);
        StateImage image = running.image(); // what a snapshot at the end stores

        CoordinationState fromSnapshot = new CoordinationState();
        fromSnapshot.restore(image);
        fromSnapshot.settle(60, rows.get(rows.size() - 1).seq()); // restart: wall clock now reads 60

        CoordinationState fullReplay = new CoordinationState();
        rows.forEach(fullReplay::apply);
        fullReplay.settle(60, rows.get(rows.size() - 1).seq());

        assertThat(fullReplay.claims().now()).as("hub clock after a full replay")
                .isEqualTo(fromSnapshot.claims().now());
    }
}
