package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.claim.Claim;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.stream.Stream;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.claims;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Snapshots and log compaction: restart from snapshot plus log tail, catch-up by install, corrupt files refused. */
class MeshSnapshotTest {
    /** A snapshot every 8 entries, 8 KiB log segments: a few dozen claims compact the log. */
    private static final MeshCompaction SMALL = new MeshCompaction(8, 8 << 10);

    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * Grants {@code count} fresh tasks through {@code node}; returns the last seq. Each claim is
     * keyed and asked again with the same key while its outcome is undecided (a leader change on
     * a loaded host answers commit_unknown or busy; the ledger makes the retry safe), at most 10
     * times.
     */
    private static long grant(MeshNode node, String prefix, int count) throws Exception {
        long seq = 0;
        for (int i = 0; i < count; i++) {
            String task = prefix + i;
            TestEdge.Verb verb = new TestEdge.Verb("claim");
            Idempotency key = new Idempotency(Idempotency.key("snap", "claim", task), "digest-" + task,
                    TestEdge.renderer(verb));
            Outcome o = null;
            for (int attempt = 0; attempt < 10 && !(o instanceof Outcome.Decided || o instanceof Outcome.Replayed);
                 attempt++) {
                o = submit(node, new Mutation(claim("snap", task), key, verb));
            }
            if (o instanceof Outcome.Replayed replayed) { // an earlier attempt committed: this node applied it
                assertThat(replayed.response()).as(task).contains("\"granted\":true");
                seq = node.status().appliedSeq();
            } else {
                assertThat(o).as(task).isInstanceOf(Outcome.Decided.class);
                assertThat(((Outcome.Decided) o).reply().granted()).as(task).isTrue();
                seq = OutcomeCodec.lastSeq(o);
            }
        }
        return seq;
    }

    /** Grants 40 tasks through {@code leader}, waits until {@code follower} snapshotted and compacted its log; the last seq. */
    private long grantUntilCompacted(MeshNode leader, MeshNode follower, String prefix) throws Exception {
        long seq = grant(leader, prefix, 40);
        cluster.awaitApplied(seq);
        TestCluster.await("the follower snapshotted and compacted its log", () -> {
            MeshNode.SnapshotStatus s = follower.snapshotStatus();
            return s.lastSnapshotIndex() > 0 && s.logStartIndex() > 0;
        });
        return seq;
    }

    private static String claimKind() {
        return dev.synapsehub.core.event.ClaimSnapshotEvent.Kind.CLAIM.label();
    }

    private record SnapshotFile(Path path, long index) {
    }

    /** The node's snapshot files on disk, newest first. */
    private List<SnapshotFile> snapshotFiles(String id) throws IOException {
        try (Stream<Path> files = Files.walk(dir.resolve(id + ".db.raft"))) {
            return files.map(p -> {
                Matcher m = SimpleStateMachineStorage.SNAPSHOT_REGEX.matcher(p.getFileName().toString());
                return m.matches() ? new SnapshotFile(p, Long.parseLong(m.group(2))) : null;
            }).filter(f -> f != null).sorted(Comparator.comparingLong(SnapshotFile::index).reversed()).toList();
        }
    }

    private static void corrupt(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length / 2] ^= 0x5A;
        Files.write(file, bytes);
    }

    @Test
    void aRestartedNodeStartsFromItsSnapshotPlusTheLogTail() throws Exception {
        cluster = new TestCluster(dir, 3, SMALL);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        long seq = grantUntilCompacted(leader, follower, "R");
        List<Claim> reference = claims(leader);
        String id = follower.nodeId();
        cluster.stop(id);

        MeshNode restarted = cluster.start(id);
        MeshNode.SnapshotStatus status = restarted.snapshotStatus();
        assertThat(status.loadedIndex()).as("started from its snapshot").isPositive();
        assertThat(status.logStartIndex()).as("the log before it is gone").isPositive();
        TestCluster.await("the restarted node holds seq " + seq, () -> restarted.status().appliedSeq() >= seq);
        assertThat(claims(restarted)).isEqualTo(reference);
        assertThat(restarted.actor().read(s -> s.lastSeq()).get()).isEqualTo(seq);

        // and it goes on applying what commits next
        long next = grant(leader, "N", 3);
        TestCluster.await("the restarted node applies new records", () -> restarted.status().appliedSeq() >= next);
        assertThat(claims(restarted)).isEqualTo(claims(leader));
    }

    /**
     * A host crash keeps what the copy's last FULL commit synced and loses the WAL frames after
     * it. Every snapshot must find its rows synced (the Raft log forgets them), and a restart
     * copies the rest again from the log tail: the copy ends up whole, nothing marked compacted.
     */
    @Test
    void aHostCrashLosesNoCopiedRowThatASnapshotCovers() throws Exception {
        cluster = new TestCluster(dir, 3, SMALL);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        long seq = grantUntilCompacted(leader, follower, "H");
        String id = follower.nodeId();
        cluster.stop(id);
        Path db = dir.resolve(id + ".db");
        long synced = loseUnsyncedRows(db);
        assertThat(synced).as("the copy was synced when a snapshot was captured").isPositive();

        MeshNode restarted = cluster.start(id);
        assertThat(restarted.snapshotStatus().loadedIndex()).as("started from its snapshot").isPositive();
        TestCluster.await("the restarted node holds seq " + seq, () -> restarted.status().appliedSeq() >= seq);
        TestCluster.await("the copy holds seq " + seq + " again", () -> restarted.journalLastSeq() >= seq);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*), MIN(seq), MAX(seq) FROM events WHERE seq <= " + seq)) {
                rs.next();
                assertThat(List.of(rs.getLong(1), rs.getLong(2), rs.getLong(3))).as("every row, once")
                        .isEqualTo(List.of(seq, 1L, seq));
            }
            try (ResultSet rs = s.executeQuery("SELECT value FROM meta WHERE key = 'compacted_through'")) {
                assertThat(rs.next()).as("no row skipped as compacted").isFalse();
            }
        }
    }

    /**
     * Leaves the copy at {@code db} as a host crash would: the rows after its last synced point
     * gone with the numbering; returns that point (0 when it was never synced).
     */
    private static long loseUnsyncedRows(Path db) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             Statement s = c.createStatement()) {
            long synced = 0;
            try (ResultSet rs = s.executeQuery("SELECT value FROM meta WHERE key = 'copies_synced_through'")) {
                if (rs.next()) {
                    synced = Long.parseLong(rs.getString(1).split("/")[0]);
                }
            }
            s.executeUpdate("DELETE FROM events WHERE seq > " + synced);
            s.executeUpdate("UPDATE sqlite_sequence SET seq = " + synced + " WHERE name = 'events'");
            return synced;
        }
    }

    @Test
    void aNodeDownWhileTheLogWasCompactedCatchesUpBySnapshotInstall() throws Exception {
        cluster = new TestCluster(dir, 3, SMALL);
        MeshNode leader = cluster.awaitLeader();
        MeshNode lagging = cluster.follower(leader);
        cluster.awaitApplied(grant(leader, "A", 2));
        String id = lagging.nodeId();
        long downAt = lagging.status().appliedIndex();
        cluster.stop(id);

        long seq = grant(leader, "B", 60);
        TestCluster.await("the leader compacted past the lagging node", () ->
                leader.snapshotStatus().logStartIndex() > downAt + 1);
        MeshNode back = cluster.start(id);
        TestCluster.await("the lagging node catches up", () -> back.status().appliedSeq() >= seq);

        assertThat(back.snapshotStatus().loadedIndex()).as("it installed the leader's snapshot")
                .isGreaterThan(downAt + 1);
        assertThat(claims(back)).isEqualTo(claims(leader));
        long next = grant(leader, "C", 2);
        TestCluster.await("it applies what commits next", () -> back.status().appliedSeq() >= next);
        assertThat(claims(back)).isEqualTo(claims(leader));
        // its local journal copy skipped what only the snapshot holds, so later records keep their seqs
        TestCluster.await("the local copy holds seq " + next, () -> back.journalLastSeq() >= next);
        assertThat(back.journalLastSeq()).isEqualTo(next);
        List<Long> copied = back.actor().read(s -> {
            try {
                return back.journal().readAfter(seq, 10, java.util.Set.of(claimKind())).stream()
                        .map(dev.synapsehub.core.journal.JournaledEvent::seq).toList();
            } catch (dev.synapsehub.core.journal.JournalException e) {
                throw new IllegalStateException(e);
            }
        }).get();
        // the two C claims, numbered after seq (keyed claims journal their ledger entry beside them)
        assertThat(copied).hasSize(2).allMatch(v -> v > seq && v <= next);
    }

    @Test
    void aCorruptSnapshotIsRefusedAndTheNodeFallsBackToThePreviousOneAndTheLog() throws Exception {
        cluster = new TestCluster(dir, 3, SMALL);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        String id = follower.nodeId();
        long seq = grant(leader, "K", 30);
        cluster.awaitApplied(seq);
        TestCluster.await("two snapshots on the follower", () -> follower.snapshotStatus().taken() >= 2);
        List<Claim> reference = claims(leader);
        cluster.stop(id);
        List<SnapshotFile> files = snapshotFiles(id);
        assertThat(files).hasSizeGreaterThanOrEqualTo(2);
        corrupt(files.get(0).path());

        MeshNode restarted = cluster.start(id);
        MeshNode.SnapshotStatus status = restarted.snapshotStatus();
        assertThat(status.corrupt()).as("the corrupt file was refused").isEqualTo(1);
        assertThat(status.loadedIndex()).as("it fell back to the previous snapshot").isEqualTo(files.get(1).index());
        assertThat(files.get(0).path().resolveSibling(files.get(0).path().getFileName() + ".corrupt")).exists();
        TestCluster.await("the restarted node holds seq " + seq, () -> restarted.status().appliedSeq() >= seq);
        assertThat(claims(restarted)).isEqualTo(reference);
    }

    @Test
    void withNoUsableSnapshotAndACompactedLogTheNodeRefusesToStart() throws Exception {
        cluster = new TestCluster(dir, 3, SMALL);
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        String id = follower.nodeId();
        cluster.awaitApplied(grant(leader, "X", 40));
        TestCluster.await("the follower compacted its log", () -> follower.snapshotStatus().logStartIndex() > 0
                && follower.snapshotStatus().taken() >= 1);
        cluster.stop(id);
        for (SnapshotFile f : snapshotFiles(id)) {
            corrupt(f.path());
        }

        // the journal too: a node started on its old journal with no Raft log is refused as a single hub's
        assertThatThrownBy(() -> cluster.start(id)).hasStackTraceContaining("cannot rebuild its state")
                .hasStackTraceContaining("move its Raft directory and its journal (--db, with its -wal and -shm files) aside")
                .hasStackTraceContaining("remove it (mesh remove-node)").hasStackTraceContaining("add it (mesh add-node)");
    }
}
