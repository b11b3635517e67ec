package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;

/** The binary search for the first row written at or after a time: edges, and past compacted rows. */
class RowsSinceTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_000);

    private static void tenRows(DurableCoordination hub, String prefix) {
        for (int i = 0; i < 5; i++) {
            granted(await(hub.actor().submit(Fixtures.claimOf("alice", prefix + i))));
            granted(await(hub.actor().submit(Mutation.of(new ReleaseCommand("alice", prefix + i, null)))));
        }
    }

    private static long first(WriterAccess writer, DurableCoordination hub, double ts) throws Exception {
        return writer.run(s -> RowsSince.firstSeq(hub.journal(), ts));
    }

    @Test
    void findsTheFirstRowAtOrAfterATime() throws Exception {
        try (DurableCoordination hub = DurableCoordination.open(dir.resolve("hub.db"), clock, CoordinationState::new,
                ActorSettings.DEFAULTS, new SnapshotPolicy(0, 0, 2, false), new Retention(0))) {
            WriterAccess writer = WriterAccess.actor(hub.actor(), 60);
            tenRows(hub, "a"); // seqs 1..10 at 1000
            clock.set(2_000);
            tenRows(hub, "b"); // 11..20 at 2000
            clock.set(3_000);
            tenRows(hub, "c"); // 21..30 at 3000
            assertThat(first(writer, hub, 500)).isEqualTo(1);
            assertThat(first(writer, hub, 1_000)).isEqualTo(1);
            assertThat(first(writer, hub, 1_500)).isEqualTo(11);
            assertThat(first(writer, hub, 2_000)).isEqualTo(11);
            assertThat(first(writer, hub, 2_500)).isEqualTo(21);
            assertThat(first(writer, hub, 9_000)).as("every row older").isEqualTo(31);

            hub.snapshotter().takeNow();
            hub.snapshotter().takeNow(); // two snapshots at seq 30: retention deletes every row
            assertThat(hub.journal().compactedThrough()).isEqualTo(30);
            clock.set(4_000);
            tenRows(hub, "d"); // 31..40 at 4000
            assertThat(first(writer, hub, 500)).as("past the compacted rows").isEqualTo(31);
            assertThat(first(writer, hub, 3_500)).isEqualTo(31);
            assertThat(first(writer, hub, 4_500)).isEqualTo(41);
        }
    }
}
