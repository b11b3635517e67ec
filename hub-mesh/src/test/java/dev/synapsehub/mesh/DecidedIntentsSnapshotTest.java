package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.journal.SnapshotCodec;
import dev.synapsehub.journal.StateSnapshot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The decided intents a leader answers retries and replays from (exactly-once forwarding) are
 * carried by snapshots: a node restarted from its snapshot remembers the same intent ids as the
 * nodes that applied every record, so when it leads it does not decide again a write that
 * committed before the snapshot. Format 1 snapshots (without them) are still read.
 */
class DecidedIntentsSnapshotTest {
    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aNodeRestartedFromItsSnapshotRemembersTheIntentIdsCommittedBeforeIt() throws Exception {
        cluster = new TestCluster(dir, 3, new MeshCompaction(8, 8 << 10));
        MeshNode leader = cluster.awaitLeader();
        MeshNode follower = cluster.follower(leader);
        long seq = 0;
        for (int i = 0; i < 20; i++) { // the leader's own strong writes: each record names its intent id
            Outcome o = submit(leader, Mutation.of(claim("snap", "S" + i)));
            assertThat(o).as("S" + i).isInstanceOf(Outcome.Decided.class);
            seq = OutcomeCodec.lastSeq(o);
        }
        cluster.awaitApplied(seq);
        TestCluster.await("the follower snapshotted", () -> follower.snapshotStatus().lastSnapshotIndex() > 0);
        List<String> remembered = leader.decidedIntentIds().get(10, TimeUnit.SECONDS);
        assertThat(remembered).as("one id per strong write").hasSize(20);
        assertThat(follower.decidedIntentIds().get(10, TimeUnit.SECONDS)).isEqualTo(remembered);

        String id = follower.nodeId();
        cluster.stop(id);
        MeshNode restarted = cluster.start(id);
        assertThat(restarted.snapshotStatus().loadedIndex()).as("started from its snapshot").isPositive();
        long last = seq;
        TestCluster.await("the restarted node holds seq " + last, () -> restarted.status().appliedSeq() >= last);
        assertThat(restarted.decidedIntentIds().get(10, TimeUnit.SECONDS))
                .as("the ids before the snapshot come from it, the rest from the log tail").isEqualTo(remembered);
    }

    @Test
    void theDecidedIntentsRoundTripAndAFormatOneSnapshotIsReadWithNone() throws Exception {
        CoordinationState state = new CoordinationState();
        Decision d = state.decide(claim("alice", "T1"), 1000.0);
        d.events().forEach(state::apply);
        Map<String, DecidedIntents.Decided> intents = new LinkedHashMap<>();
        intents.put("intent-2", new DecidedIntents.Decided(new ReplyCodec().write(d.reply()), "stored",
                List.of(new JournaledEvent(7, d.events().get(0)))));
        intents.put("intent-1", new DecidedIntents.Decided(new ReplyCodec().write(d.reply()), null, List.of()));
        MeshSnapshotFile file = new MeshSnapshotFile(3, 42, 1000.0, Map.of("n1", 5L), state.image(), intents);

        MeshSnapshotFile back = MeshSnapshotFile.decode(file.encode());
        assertThat(back.intents().keySet()).as("oldest first, as remembered").containsExactly("intent-2", "intent-1");
        for (String id : intents.keySet()) { // the reply compared as a reply: JSON number node types may differ
            assertThat(new ReplyCodec().read(back.intents().get(id).reply())).isEqualTo(d.reply());
            assertThat(back.intents().get(id).storedResponse()).isEqualTo(intents.get(id).storedResponse());
            assertThat(back.intents().get(id).committed()).isEqualTo(intents.get(id).committed());
        }
        DecidedIntents restored = new DecidedIntents();
        back.intents().forEach(restored::remember);
        Outcome.Decided answer = restored.outcome("intent-2");
        assertThat(answer.reply()).isEqualTo(d.reply());
        assertThat(answer.committed()).extracting(JournaledEvent::seq).containsExactly(7L);
        assertThat(answer.storedResponse()).isEqualTo("stored");

        MeshSnapshotFile old = MeshSnapshotFile.decode(formatOne(3, 42, state));
        assertThat(old.intents()).isEmpty();
        assertThat(old.image()).isEqualTo(state.image());
    }

    @Test
    void aFormatTwoSnapshotIsReadWithIdsOfUnknownOrigin() throws Exception {
        CoordinationState state = new CoordinationState();
        Decision d = state.decide(claim("alice", "T1"), 1000.0);
        d.events().forEach(state::apply);
        byte[] reply = MeshJson.bytes(MeshJson.MAPPER.createObjectNode().<com.fasterxml.jackson.databind.node.ObjectNode>
                set("reply", new ReplyCodec().write(d.reply())).put("firstSeq", 0)
                .set("events", MeshJson.MAPPER.createArrayNode()));
        MeshSnapshotFile old = MeshSnapshotFile.decode(formatTwo(3, 42, state, List.of("old-2", "old-1"), reply));
        assertThat(old.intents().keySet()).containsExactly("old-2", "old-1");
        assertThat(old.memory().remembered()).extracting(DecidedIntents.Remembered::origin)
                .containsOnly(DecidedIntents.UNKNOWN_ORIGIN);
        assertThat(old.memory().holds()).isEmpty();
        assertThat(old.image()).isEqualTo(state.image());

        DecidedIntents restored = new DecidedIntents(2);
        restored.restore(old.memory());
        assertThat(restored.outcome("old-2").reply()).isEqualTo(d.reply());
        restored.remember("new", new DecidedIntents.Decided(new ReplyCodec().write(d.reply()), null, List.of()));
        assertThat(restored.ids()).as("past the window, an id of unknown origin goes as before")
                .containsExactly("old-1", "new");
    }

    /** A snapshot file as format 2 wrote it: decided intents without origin or index. */
    private static byte[] formatTwo(long term, long index, CoordinationState state, List<String> ids, byte[] decided)
            throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.write("SYNMSNAP".getBytes(StandardCharsets.US_ASCII));
            out.writeInt(2);
            out.writeLong(term);
            out.writeLong(index);
            out.writeDouble(1000.0);
            out.writeInt(0);
            out.writeInt(ids.size());
            for (String id : ids) {
                out.writeUTF(id);
                out.writeInt(decided.length);
                out.write(decided);
            }
            byte[] body = SnapshotCodec.encode(new StateSnapshot(1000.0, 0, 0, state.image()));
            out.writeInt(body.length);
            out.write(body);
            out.flush();
            CRC32C crc = new CRC32C();
            crc.update(bytes.toByteArray(), 0, bytes.size());
            out.writeLong(crc.getValue());
        }
        return bytes.toByteArray();
    }

    /** A snapshot file as format 1 wrote it: no decided intents. */
    private static byte[] formatOne(long term, long index, CoordinationState state) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.write("SYNMSNAP".getBytes(StandardCharsets.US_ASCII));
            out.writeInt(1);
            out.writeLong(term);
            out.writeLong(index);
            out.writeDouble(1000.0);
            out.writeInt(0);
            byte[] body = SnapshotCodec.encode(new StateSnapshot(1000.0, 0, 0, state.image()));
            out.writeInt(body.length);
            out.write(body);
            out.flush();
            CRC32C crc = new CRC32C();
            crc.update(bytes.toByteArray(), 0, bytes.size());
            out.writeLong(crc.getValue());
        }
        return bytes.toByteArray();
    }
}
