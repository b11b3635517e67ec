package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.state.CoordinationState;
import org.apache.ratis.protocol.Message;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Seed 001 §3, §6, §8: envelopes carry every field, stale epochs and bases are fenced everywhere alike. */
class FencingTest {
    private final List<Long> accepted = new ArrayList<>();
    private final MeshStateMachine machine = new MeshStateMachine(new MeshStateMachine.Replica() {
        @Override
        public void committed(long index, MeshEnvelope record, ReplicatedBatch batch) {
            accepted.add(index);
        }

        @Override
        public void leaderReady() {
        }

        @Override
        public CompletableFuture<Message> forwarded(byte[] request) {
            throw new AssertionError();
        }
    }, "n2");

    /** A record n1 decided in {@code term} on base {@code base}, as MeshJournal builds it. */
    static MeshEnvelope record(String leader, long term, long base, long originSeq) {
        CoordinationState state = new CoordinationState();
        Decision d = state.decide(new ClaimCommand("a", "a", "T1", null, 60.0, "", List.of(), null), 1000.0);
        List<CoordinationEvent> events = d.events();
        ReplicatedBatch batch = new ReplicatedBatch(1, events, List.of(new ReplicatedBatch.Decision(leader, null,
                new ReplyCodec().write(d.reply()), null, events.size())));
        ObjectNode precondition = MeshJson.MAPPER.createObjectNode().put("baseIndex", base).put("expectedEpoch", term);
        return new MeshEnvelope(MeshProtocol.PROTOCOL, MeshProtocol.VERSION, leader + ":" + originSeq,
                MeshEnvelope.BATCH, "syn-test", leader, originSeq, WriteClass.of(events),
                term, new FenceToken(term, leader, base).wire(), "intent-" + originSeq, EnvelopeState.INTENT, 1000.0,
                null, batch.toJson(new EventsJson()), precondition);
    }

    @Test
    void aRecordCarriesEveryEnvelopeFieldOfTheContract() {
        ObjectNode json = record("n1", 3, 0, 1).toJson();
        assertThat(json.fieldNames()).toIterable().contains("protocol", "version", "recordId", "entityType",
                "entityId", "originNodeId", "originSeq", "writeClass", "leaseEpoch", "fenceToken", "intentId",
                "state", "createdAt", "payload", "precondition");
        assertThat(json.path("protocol").asText()).isEqualTo("fusion.shared-mesh");
        assertThat(json.path("version").asText()).isEqualTo("1.0");
        assertThat(json.path("writeClass").asText()).isEqualTo("strong");
        assertThat(json.path("fenceToken").asText()).isEqualTo("3:n1:0");
        byte[] bytes = record("n1", 3, 0, 1).toBytes();
        assertThat(MeshEnvelope.fromBytes(bytes).toBytes()).isEqualTo(bytes);
    }

    @Test
    void anotherProtocolOrMajorVersionIsRefusedAndANewerMinorIsRead() {
        ObjectNode json = record("n1", 3, 0, 1).toJson();
        json.put("version", "2.0");
        assertThatThrownBy(() -> MeshEnvelope.fromBytes(MeshJson.bytes(json))).hasMessageContaining("major");
        json.put("version", "1.7");
        json.put("someFutureMember", true);
        assertThat(MeshEnvelope.fromBytes(MeshJson.bytes(json)).version()).isEqualTo("1.7");
        json.put("protocol", "other");
        assertThatThrownBy(() -> MeshEnvelope.fromBytes(MeshJson.bytes(json))).hasMessageContaining("protocol");
    }

    @Test
    void recordsOfTheCurrentTermOnTheLastAcceptedBaseAreAcceptedInOrder() {
        assertThat(machine.judge(record("n1", 2, 0, 1).toBytes(), 2, 5).committed()).isTrue();
        assertThat(machine.judge(record("n1", 2, 5, 2).toBytes(), 2, 6).committed()).isTrue();
        assertThat(accepted).containsExactly(5L, 6L);
    }

    @Test
    void aRecordDecidedInAnOlderTermIsRejectedFenced() {
        MeshStateMachine.Verdict v = machine.judge(record("n1", 2, 0, 1).toBytes(), 3, 7);
        assertThat(v.committed()).isFalse();
        assertThat(v.reason()).startsWith("stale epoch");
        assertThat(accepted).isEmpty();
        assertThat(machine.rejected()).isEqualTo(1);
    }

    @Test
    void aRecordDecidedOnAStaleBaseIsRejectedFenced() {
        assertThat(machine.judge(record("n1", 2, 0, 1).toBytes(), 2, 5).committed()).isTrue();
        // decided before index 5 was accepted (its proposer rolled back and went on): fenced
        MeshStateMachine.Verdict v = machine.judge(record("n1", 2, 0, 2).toBytes(), 2, 6);
        assertThat(v.committed()).isFalse();
        assertThat(v.reason()).startsWith("stale base");
        assertThat(machine.judge(record("n1", 2, 5, 3).toBytes(), 2, 7).committed()).isTrue();
        assertThat(accepted).containsExactly(5L, 7L);
    }

    @Test
    void aMalformedRecordIsRejectedNotApplied() {
        MeshStateMachine.Verdict v = machine.judge("{not json".getBytes(), 2, 5);
        assertThat(v.committed()).isFalse();
        assertThat(v.reason()).startsWith("malformed record");
        assertThat(accepted).isEmpty();
    }

    @Test
    void theOriginSeqOfThisNodesRecordsIsRebuiltFromTheLog() {
        machine.judge(record("n2", 2, 0, 41).toBytes(), 2, 5);
        machine.judge(record("n1", 2, 99, 7).toBytes(), 2, 6); // rejected, still seen
        assertThat(machine.highestOwnOriginSeq()).isEqualTo(41);
    }

    @Test
    void quorumIsAMajorityOfTheVoters() {
        for (int voters = 1; voters <= 7; voters++) {
            List<MeshPeer> peers = new ArrayList<>();
            for (int i = 1; i <= voters; i++) {
                peers.add(new MeshPeer("n" + i, "127.0.0.1", 9000 + i));
            }
            assertThat(MeshConfig.of("n1", peers, java.nio.file.Path.of("x")).quorum()).isEqualTo(voters / 2 + 1);
        }
    }

    @Test
    void writeClassesFollowTheContractMatrix() {
        Decision d = new CoordinationState().decide(new ClaimCommand("a", "a", "T", null, 60.0, "", List.of(), null),
                1000.0);
        assertThat(d.reply()).isInstanceOf(Reply.Granted.class);
        assertThat(d.events()).allSatisfy(e -> assertThat(WriteClass.of(e)).isEqualTo(WriteClass.STRONG));
        assertThat(WriteClass.fromWire("append-only")).isEqualTo(WriteClass.APPEND_ONLY);
        assertThat(WriteClass.of(new dev.synapsehub.core.event.ChatEvent(1, 1, "a", "all", null, false, List.of(), "{}")))
                .isEqualTo(WriteClass.APPEND_ONLY);
        assertThat(WriteClass.of(new dev.synapsehub.core.event.ClaimDeniedEvent(1, "a", "h", false, 0, "LEASE_LIVE", "s",
                "t"))).as("audit").isEqualTo(WriteClass.APPEND_ONLY);
        assertThat(WriteClass.of(new dev.synapsehub.core.event.ClaimReleasedEvent(1, "T"))).isEqualTo(WriteClass.STRONG);
        assertThat(WriteClass.APPEND_ONLY.wire()).isEqualTo("append-only");
        var note = new dev.synapsehub.core.board.ProgressNote("B", "a", dev.synapsehub.core.board.NoteKind.NOTE, "x", 1);
        assertThat(WriteClass.of(new dev.synapsehub.core.event.LedgerProgressEvent(1, note))).as("progress note")
                .isEqualTo(WriteClass.APPEND_ONLY);
        var task = new dev.synapsehub.core.board.BoardTask("B", "t", "", List.of(),
                dev.synapsehub.core.board.BoardStatus.OPEN, "", "", 1, "a", 1, 1);
        assertThat(WriteClass.of(new dev.synapsehub.core.event.LedgerTaskEvent(1, task, null))).as("board task")
                .isEqualTo(WriteClass.STRONG);
    }
}
