package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.List;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Start-up from format-8 snapshots: the state rebuilt from one (its claims decoded on a second
 * thread) is the state the hub stopped with, and a snapshot whose checksum is right but whose
 * claims section does not decode is skipped loudly for the previous one, changing nothing.
 */
class SectionedSnapshotRecoveryTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_000);
    private static final SnapshotPolicy MANUAL = new SnapshotPolicy(0, 0, 3, true);

    private Path db() {
        return dir.resolve("hub.db");
    }

    private DurableCoordination open(SnapshotPolicy policy) throws JournalException {
        return DurableCoordination.open(db(), clock, CoordinationState::new, ActorSettings.DEFAULTS, policy);
    }

    private static String authority(DurableCoordination hub, double now) {
        return await(hub.actor().read(s -> s.claims().snapshot(now) + "|" + s.claims().epochCounter() + "|"
                + s.claims().retainedCheckpoint("t2") + "|" + s.idempotency().view() + "|" + s.lastSeq()));
    }

    @Test
    void aSectionedSnapshotRestoresTheStateAndADamagedClaimsSectionFallsBackToThePreviousOne() throws Exception {
        String expected;
        try (DurableCoordination hub = open(MANUAL)) {
            granted(await(hub.actor().submit(Fixtures.claimOf("alice", "t1"))));
            granted(await(hub.actor().submit(Mutation.of(Fixtures.claim("bob", "t2", 30.0)))));
            granted(await(hub.actor().submit(Mutation.of(new CheckpointCommand("bob", "t2", "ck-b", null)))));
            hub.snapshotter().takeNow();
            granted(await(hub.actor().submit(Fixtures.keyedClaim("carol", "t3", "k"))));
            granted(await(hub.actor().submit(Fixtures.claimOf("dave", "t4"))));
            expected = authority(hub, clock.nowSeconds());
        } // the shutdown snapshot covers everything
        List<SnapshotStore.Info> stored;
        try (SqliteJournal j = SqliteJournal.open(db())) {
            stored = j.snapshots().list();
        }
        assertThat(stored).hasSize(2).allMatch(info -> info.format() == SnapshotCodec.FORMAT);

        try (DurableCoordination hub = open(SnapshotPolicy.NEVER)) {
            assertThat(hub.recovery().snapshot().id()).isEqualTo(stored.get(0).id());
            assertThat(hub.recovery().fallbacks()).isEmpty();
            assertThat(hub.recovery().tail().rows()).isZero();
            assertThat(authority(hub, clock.nowSeconds())).isEqualTo(expected);
        }

        // damage a live claim's status inside the newest body and store it with a matching checksum
        SnapshotStore.Info newest = stored.get(0);
        byte[] body;
        try (SqliteJournal j = SqliteJournal.open(db())) {
            body = j.snapshots().read(newest);
        }
        assertThat(newest.chunks()).isEqualTo(1);
        byte[] status = "\u0008claimed".getBytes(StandardCharsets.US_ASCII);
        int at = indexOf(body, status);
        assertThat(at).isNotNegative();
        body[at + 3] = 'X';
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db());
             PreparedStatement chunk = c.prepareStatement(
                     "UPDATE snapshot_chunks SET data = ? WHERE snapshot_id = ? AND idx = 0");
             PreparedStatement crc = c.prepareStatement("UPDATE snapshots SET crc32c = ? WHERE id = ?")) {
            chunk.setBytes(1, body);
            chunk.setLong(2, newest.id());
            assertThat(chunk.executeUpdate()).isEqualTo(1);
            crc.setLong(1, SnapshotCodec.crc32c(body));
            crc.setLong(2, newest.id());
            assertThat(crc.executeUpdate()).isEqualTo(1);
        }

        try (DurableCoordination hub = open(SnapshotPolicy.NEVER)) {
            assertThat(hub.recovery().fallbacks()).singleElement().asString()
                    .contains("snapshot #" + newest.id()).contains("claims section")
                    .contains("unknown claim status clXimed")
                    .contains("falling back to snapshot #" + stored.get(1).id());
            assertThat(hub.recovery().snapshot().id()).isEqualTo(stored.get(1).id());
            assertThat(hub.recovery().tail().rows()).isPositive();
            assertThat(authority(hub, clock.nowSeconds())).isEqualTo(expected);
        }
    }

    private static int indexOf(byte[] body, byte[] needle) { // Latin-1: one char per byte, the same indices
        return new String(body, StandardCharsets.ISO_8859_1).indexOf(new String(needle, StandardCharsets.ISO_8859_1));
    }
}
