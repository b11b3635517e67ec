package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Start-up from a snapshot stored in many chunks: a body of many chunks restores the state the hub
 * stopped with, and a body whose chunks are damaged (in the middle, in the last chunk), short,
 * long or missing one falls back to the previous snapshot with the reason {@link SnapshotStore#read}
 * gives for it (which `journal verify/inspect` print), the state rebuilt as the hub stopped with it.
 * The damage is chosen so that the damaged body still decodes: only the read's checks keep it
 * out. (Written for a start that decodes while it reads, docs/benchmarks.md "Restart toward 1 s,
 * seventh pass"; it holds for any way of loading a snapshot.)
 */
class ChunkedSnapshotRecoveryTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_000);
    private static final SnapshotPolicy MANUAL = new SnapshotPolicy(0, 0, 3, true);
    private static final int CLAIMS = 1_200;
    private static final int CHUNK = 8 * 1024;

    private String expected;
    private SnapshotStore.Info newest;
    private SnapshotStore.Info previous;
    private byte[] body;
    /** Where the stored chunks of the newest body start; the last starts inside the last claim. */
    private int[] starts;

    private Path db() {
        return dir.resolve("hub.db");
    }

    private DurableCoordination open(SnapshotPolicy policy) throws JournalException {
        return DurableCoordination.open(db(), clock, CoordinationState::new, ActorSettings.DEFAULTS, policy);
    }

    private static String authority(DurableCoordination hub, double now) {
        return await(hub.actor().read(s -> s.claims().snapshot(now) + "|" + s.claims().epochCounter() + "|"
                + s.idempotency().view() + "|" + s.lastSeq()));
    }

    @BeforeEach
    void twoSnapshotsTheNewestInManySmallChunks() throws Exception {
        try (DurableCoordination hub = open(MANUAL)) {
            List<CompletableFuture<dev.synapsehub.core.actor.Outcome>> pending = new ArrayList<>();
            for (int i = 0; i < CLAIMS / 2; i++) {
                pending.add(hub.actor().submit(Fixtures.claimOf("agent" + (i % 20), String.format("task-%05d", i))));
            }
            pending.forEach(f -> granted(await(f)));
            hub.snapshotter().takeNow();
            pending.clear();
            for (int i = CLAIMS / 2; i < CLAIMS; i++) {
                pending.add(hub.actor().submit(Fixtures.keyedClaim("agent" + (i % 20), String.format("task-%05d", i),
                        "k" + i)));
            }
            pending.forEach(f -> granted(await(f)));
            expected = authority(hub, clock.nowSeconds());
        } // the shutdown snapshot covers everything
        try (SqliteJournal j = SqliteJournal.open(db())) {
            List<SnapshotStore.Info> stored = j.snapshots().list();
            assertThat(stored).hasSize(2);
            newest = stored.get(0);
            previous = stored.get(1);
            body = j.snapshots().read(newest);
        }
        // chunks of 8 KiB, the last one from just before the last claim's task id to the end
        int last = lastIndexOf(body, String.format("task-%05d", CLAIMS - 1).getBytes(StandardCharsets.US_ASCII)) - 5;
        assertThat(last).isGreaterThan(CHUNK * 20);
        List<Integer> at = new ArrayList<>();
        for (int s = 0; s < last; s += CHUNK) {
            at.add(s);
        }
        at.add(last);
        starts = at.stream().mapToInt(Integer::intValue).toArray();
        store(chunks(body), newest.crc32c(), body.length);
        try (SqliteJournal j = SqliteJournal.open(db())) {
            assertThat(j.snapshots().list().get(0).chunks()).isEqualTo(starts.length).isGreaterThan(20);
        }
    }

    private List<byte[]> chunks(byte[] whole) {
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < starts.length; i++) {
            out.add(Arrays.copyOfRange(whole, starts[i], i + 1 < starts.length ? starts[i + 1] : whole.length));
        }
        return out;
    }

    /** Replaces the newest snapshot's chunks and header (chunk count, length, CRC-32C). */
    private void store(List<byte[]> chunks, long crc, long bytes) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db())) {
            try (Statement s = c.createStatement()) {
                s.executeUpdate("DELETE FROM snapshot_chunks WHERE snapshot_id = " + newest.id());
            }
            try (PreparedStatement q = c.prepareStatement(
                    "INSERT INTO snapshot_chunks(snapshot_id, idx, data) VALUES (?, ?, ?)")) {
                for (int i = 0; i < chunks.size(); i++) {
                    q.setLong(1, newest.id());
                    q.setInt(2, i);
                    q.setBytes(3, chunks.get(i));
                    q.executeUpdate();
                }
            }
            try (PreparedStatement q = c.prepareStatement(
                    "UPDATE snapshots SET chunks = ?, bytes = ?, crc32c = ? WHERE id = ?")) {
                q.setInt(1, starts.length);
                q.setLong(2, bytes);
                q.setLong(3, crc);
                q.setLong(4, newest.id());
                assertThat(q.executeUpdate()).isEqualTo(1);
            }
        }
    }

    @Test
    void aBodyOfManyChunksRestoresTheStoppedState() throws Exception {
        try (DurableCoordination hub = open(SnapshotPolicy.NEVER)) {
            assertThat(hub.recovery().fallbacks()).isEmpty();
            assertThat(hub.recovery().snapshot().id()).isEqualTo(newest.id());
            assertThat(hub.recovery().tail().rows()).isZero();
            assertThat(authority(hub, clock.nowSeconds())).isEqualTo(expected);
        }
    }

    @Test
    void aDamagedChunkInTheMiddleFallsBackAsBefore() throws Exception {
        int middle = starts.length / 2;
        List<byte[]> chunks = chunks(body);
        renameATask(chunks.get(middle));
        store(chunks, newest.crc32c(), body.length);
        fallsBackWith("CRC-32C");
    }

    @Test
    void aDamagedLastChunkFallsBackAsBefore() throws Exception {
        List<byte[]> chunks = chunks(body);
        renameATask(chunks.get(chunks.size() - 1));
        store(chunks, newest.crc32c(), body.length);
        fallsBackWith("CRC-32C");
    }

    @Test
    void aBodyShorterThanItsHeaderSaysFallsBackAsBefore() throws Exception {
        // the last chunk ends 12 bytes early
        List<byte[]> chunks = chunks(body);
        byte[] last = chunks.get(chunks.size() - 1);
        chunks.set(chunks.size() - 1, Arrays.copyOf(last, last.length - 12));
        store(chunks, newest.crc32c(), body.length);
        fallsBackWith("holds " + starts.length + " chunks, " + (body.length - 12) + " bytes; recorded");
    }

    @Test
    void aBodyLongerThanItsHeaderSaysFallsBackAsBefore() throws Exception {
        // the whole body is there and right, with 12 bytes more after it: still not the body recorded
        List<byte[]> chunks = chunks(body);
        byte[] last = chunks.get(chunks.size() - 1);
        chunks.set(chunks.size() - 1, Arrays.copyOf(last, last.length + 12));
        store(chunks, newest.crc32c(), body.length);
        fallsBackWith("holds " + starts.length + " chunks, " + (body.length + 12) + " bytes; recorded");
    }

    @Test
    void aMissingChunkInTheMiddleFallsBackAsBefore() throws Exception {
        store(chunks(body), newest.crc32c(), body.length);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db()); Statement s = c.createStatement()) {
            s.executeUpdate("DELETE FROM snapshot_chunks WHERE snapshot_id = " + newest.id() + " AND idx = "
                    + starts.length / 2);
        }
        fallsBackWith("chunk " + starts.length / 2 + " is missing");
    }

    /** Changes one letter of the first task id in {@code chunk} (the body still decodes, to another state). */
    private static void renameATask(byte[] chunk) {
        int at = indexOf(chunk, "task-".getBytes(StandardCharsets.US_ASCII));
        assertThat(at).isNotNegative();
        chunk[at] = 'T';
    }

    /**
     * Start-up skips the newest snapshot with the reason the whole-body read gives (so `journal
     * verify/inspect` name the same), takes the previous one and replays the rest: the state
     * the hub stopped with.
     */
    private void fallsBackWith(String reason) throws Exception {
        String readSays;
        try (SqliteJournal j = SqliteJournal.open(db())) {
            SnapshotStore.Info info = j.snapshots().list().get(0);
            assertThat(info.id()).isEqualTo(newest.id());
            CorruptSnapshotException e = org.junit.jupiter.api.Assertions.assertThrows(CorruptSnapshotException.class,
                    () -> j.snapshots().read(info));
            readSays = e.getMessage();
            assertThat(readSays).contains(reason);
            newest = info;
        }
        try (DurableCoordination hub = open(SnapshotPolicy.NEVER)) {
            assertThat(hub.recovery().fallbacks()).containsExactly(StateRecovery.describe(newest) + " is unusable: "
                    + readSays + "; falling back to " + StateRecovery.describe(previous));
            assertThat(hub.recovery().snapshot().id()).isEqualTo(previous.id());
            assertThat(hub.recovery().tail().rows()).isPositive();
            assertThat(authority(hub, clock.nowSeconds())).isEqualTo(expected);
        }
    }

    private static int indexOf(byte[] in, byte[] needle) { // Latin-1: one char per byte, the same indices
        return new String(in, StandardCharsets.ISO_8859_1).indexOf(new String(needle, StandardCharsets.ISO_8859_1));
    }

    private static int lastIndexOf(byte[] in, byte[] needle) { // Latin-1: one char per byte, the same indices
        return new String(in, StandardCharsets.ISO_8859_1).lastIndexOf(new String(needle, StandardCharsets.ISO_8859_1));
    }
}
