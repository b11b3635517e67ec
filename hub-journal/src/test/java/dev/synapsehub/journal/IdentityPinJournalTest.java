package dev.synapsehub.journal;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.IdentityPinCommand;
import dev.synapsehub.core.event.IdentityPinEvent;
import dev.synapsehub.core.event.IdentityPinReclaimEvent;
import dev.synapsehub.core.identity.IdentityPin;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.IdentityPinReply;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Identity pins (contract A2) are journaled state: their events round-trip strictly, a journaled
 * hub replays them identically, a reclaim journals approval, removal and application with the
 * seqs it names, and state snapshots (format 3) carry pins while format 2 bodies stay readable.
 */
class IdentityPinJournalTest {
    private static final String KEY_A = Base64.getEncoder().encodeToString(new byte[32]);
    private static final String KEY_B = Base64.getEncoder().encodeToString(filled(32, 7));

    @TempDir
    Path dir;

    private final EventCodec codec = new EventCodec();

    private static byte[] filled(int n, int v) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) v);
        return b;
    }

    @Test
    void pinAndReclaimEventsRoundTrip() throws Exception {
        List<? extends dev.synapsehub.core.event.CoordinationEvent> events = List.of(
                new IdentityPinEvent(1.5, IdentityPinEvent.Op.PIN, "p/ann", "machine-0123", KEY_A),
                new IdentityPinEvent(2.5, IdentityPinEvent.Op.UNPIN, "p/ann", "machine-0123", KEY_A),
                new IdentityPinReclaimEvent(3.0, "ops/root", "k-op", "p/ann", "machine-0123", "lost laptop \u00e9",
                        true, true, false, false, "approved", false, null, null),
                new IdentityPinReclaimEvent(3.0, "ops/root", "k-op", "p/ann", "machine-0123", "lost laptop",
                        true, true, false, false, "applied", true, 41L, true));
        for (var e : events) {
            String payload = codec.encode(e);
            assertThat(codec.decode(e.kind(), e.ts(), payload)).contains(e);
            assertThat(codec.decode(e.kind(), e.ts(), payload.getBytes(StandardCharsets.UTF_8))).contains(e);
        }
        assertThat(codec.encode(events.get(3))).contains("\"approved_seq\":41").contains("\"evicted_live_socket\":true")
                .contains("\"status\":\"applied\"");
        assertThat(codec.encode(events.get(2))).doesNotContain("approved_seq");
    }

    @Test
    void pinPayloadsTheHubCouldNotHaveWrittenAreCorrupt() {
        for (String bad : List.of(
                "{\"op\":\"steal\",\"name\":\"p/ann\",\"key_id\":\"k\",\"public_key\":\"" + KEY_A + "\"}",
                "{\"op\":\"pin\",\"name\":\" \",\"key_id\":\"k\",\"public_key\":\"" + KEY_A + "\"}",
                "{\"op\":\"pin\",\"name\":\"p/ann\",\"public_key\":\"" + KEY_A + "\"}",
                "{\"op\":\"pin\",\"name\":\"p/ann\",\"key_id\":\"k\",\"public_key\":\"AAAA\"}",
                "{\"op\":\"pin\",\"name\":\"p/ann\",\"key_id\":\"k\",\"public_key\":\"not base64!\"}",
                "[]")) {
            assertThatThrownBy(() -> codec.decode("identity_pin", 1.0, bad)).as(bad)
                    .isInstanceOf(EventCodec.CorruptPayloadException.class);
        }
        assertThatThrownBy(() -> codec.decode("identity_pin_reclaim", 1.0, "{\"operator\":\"o\",\"operator_key_id\":\"k\","
                + "\"pin_name\":\"p\",\"expected_key_id\":\"k\",\"reason\":\"r\",\"status\":\"applied\",\"applied\":false}"))
                .isInstanceOf(EventCodec.CorruptPayloadException.class);
    }

    @Test
    void pinsAreJournaledAndReplayIdentically() throws Exception {
        Path db = dir.resolve("hub.db");
        DurableCoordination d = DurableCoordination.open(db, Clock.system());
        pin(d, "ops/root", "k-op", KEY_B);
        Outcome first = pin(d, "p/ann", "k-ann", KEY_A);
        assertThat(((IdentityPinReply) ((Outcome.Decided) first).reply()).outcome())
                .isEqualTo(IdentityPinReply.Outcome.PINNED);
        assertThat(d.journal().synchronousOfLastCommit()).isEqualTo(dev.synapsehub.core.event.Durability.FULL);
        Outcome again = pin(d, "p/ann", "k-ann", KEY_A);
        assertThat(((IdentityPinReply) ((Outcome.Decided) again).reply()).outcome())
                .isEqualTo(IdentityPinReply.Outcome.ALREADY_PINNED);
        Outcome other = pin(d, "p/ann", "k-other", KEY_B);
        IdentityPinReply mismatch = (IdentityPinReply) ((Outcome.Decided) other).reply();
        assertThat(mismatch.outcome()).isEqualTo(IdentityPinReply.Outcome.MISMATCH);
        assertThat(mismatch.pin().keyId()).isEqualTo("k-ann");
        assertThat(d.actor().committedPin("p/ann")).map(IdentityPin::keyId).contains("k-ann");
        List<IdentityPin> before = d.actor().read(s -> s.pins().image()).get();
        d.actor().close();

        DurableCoordination back = DurableCoordination.open(db, Clock.system());
        assertThat(back.actor().read(s -> s.pins().image()).get()).isEqualTo(before);
        assertThat(back.actor().committedPin("p/ann")).map(IdentityPin::publicKey).contains(KEY_A);

        Outcome reclaimed = back.actor().submit(Mutation.of(new IdentityPinCommand.Reclaim("ops/root", "p/ann", "k-ann",
                "lost laptop", false, false, false, false))).get();
        Outcome.Decided decided = (Outcome.Decided) reclaimed;
        IdentityPinReply reply = (IdentityPinReply) decided.reply();
        assertThat(reply.outcome()).isEqualTo(IdentityPinReply.Outcome.RECLAIMED);
        List<JournaledEvent> committed = decided.committed();
        assertThat(committed).extracting(j -> j.event().kind())
                .containsExactly("identity_pin_reclaim", "identity_pin", "identity_pin_reclaim");
        IdentityPinReclaimEvent applied = (IdentityPinReclaimEvent) committed.get(2).event();
        assertThat(applied.approvedSeq()).as("the applied record names its approval's seq").isEqualTo(committed.get(0).seq());
        assertThat(reply.auditSeq()).isEqualTo(committed.get(2).seq());
        assertThat(applied.evictedLiveSocket()).isFalse();
        assertThat(back.actor().committedPin("p/ann")).isEmpty();
        back.actor().close();

        DurableCoordination third = DurableCoordination.open(db, Clock.system());
        assertThat(third.actor().committedPin("p/ann")).as("the reclaim replays").isEmpty();
        assertThat(third.actor().committedPin("ops/root")).isPresent();
        List<JournaledEvent> audit = third.actor().read(s -> {
            try {
                return third.journal().readAfter(0, 100, Set.of("identity_pin_reclaim"));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get();
        assertThat(audit).extracting(j -> ((IdentityPinReclaimEvent) j.event()).status())
                .containsExactly("approved", "applied");
        third.actor().close();
    }

    @Test
    void aReclaimChecksTheOperatorsPinThenTheTargetAndItsKey() {
        CoordinationState state = new CoordinationState();
        var reclaim = new IdentityPinCommand.Reclaim("ops/root", "p/ann", "k-ann", "r", false, false, false, false);
        assertThat(((IdentityPinReply) state.decide(reclaim, 1.0).reply()).message())
                .isEqualTo("the operator identity is not cryptographically bound");
        state.apply(new IdentityPinEvent(1.0, IdentityPinEvent.Op.PIN, "ops/root", "k-op", KEY_B));
        assertThat(((IdentityPinReply) state.decide(reclaim, 1.0).reply()).message())
                .isEqualTo("the target has no identity pin");
        state.apply(new IdentityPinEvent(1.0, IdentityPinEvent.Op.PIN, "p/ann", "k-other", KEY_A));
        assertThat(((IdentityPinReply) state.decide(reclaim, 1.0).reply()).message())
                .isEqualTo("the current pin does not match the expected key id");
        assertThat(state.decide(reclaim, 1.0).events()).isEmpty();
    }

    @Test
    void aRolledBackPinIsNeverVisibleToTheEdge() {
        CoordinationState state = new CoordinationState();
        state.beginBatch();
        state.apply(new IdentityPinEvent(1.0, IdentityPinEvent.Op.PIN, "p/ann", "k", KEY_A));
        assertThat(state.pins().find("p/ann")).isPresent();
        assertThat(state.pins().findCommitted("p/ann")).as("not committed yet").isEmpty();
        state.rollbackBatch();
        assertThat(state.pins().find("p/ann")).isEmpty();
        assertThat(state.pins().findCommitted("p/ann")).isEmpty();
        state.beginBatch();
        state.apply(new IdentityPinEvent(1.0, IdentityPinEvent.Op.PIN, "p/ann", "k", KEY_A));
        state.commitBatch();
        assertThat(state.pins().findCommitted("p/ann")).isPresent();
    }

    @Test
    void aSnapshotCarriesPinsAndAFormat2BodyStillReads() throws Exception {
        CoordinationState state = new CoordinationState();
        state.apply(new IdentityPinEvent(1.25, IdentityPinEvent.Op.PIN, "p/ann", "k-ann", KEY_A));
        state.apply(new IdentityPinEvent(1.5, IdentityPinEvent.Op.PIN, "p/bob", "k-bob", KEY_B));
        StateImage image = state.image();
        assertThat(image.pins()).extracting(IdentityPin::name).containsExactly("p/ann", "p/bob");
        StateSnapshot back = SnapshotCodec.decode(SnapshotCodec.encode(new StateSnapshot(2.0, 0, 0, image)));
        assertThat(back.image()).isEqualTo(image);
        CoordinationState restored = new CoordinationState();
        restored.restore(back.image());
        assertThat(restored.pins().findCommitted("p/bob")).contains(new IdentityPin("p/bob", "k-bob", KEY_B, 1.5));

        // a format 4 body: the same sections without those formats 5 and up added (the pins count
        // and later ones, one zero byte each for an empty state), under format number 4
        StateImage noPins = new CoordinationState().image();
        byte[] v3 = SnapshotCodec.encode(new StateSnapshot(2.0, 0, 0, noPins), SnapshotCodec.LAST_SEQUENTIAL_FORMAT);
        assertThat(v3[8]).as("format varint after the 8-byte magic").isEqualTo((byte) SnapshotCodec.LAST_SEQUENTIAL_FORMAT);
        int added = SnapshotCodec.sectionsAfterChannels(SnapshotCodec.LAST_SEQUENTIAL_FORMAT) - SnapshotCodec.sectionsAfterChannels(4);
        for (int i = 0; i < added; i++) {
            assertThat(v3[v3.length - 9 - i]).as("an empty section").isZero();
        }
        byte[] v2 = new byte[v3.length - added];
        System.arraycopy(v3, 0, v2, 0, v3.length - 8 - added);
        System.arraycopy(v3, v3.length - 8, v2, v3.length - 8 - added, 8);
        v2[8] = 4;
        assertThat(SnapshotCodec.decode(v2).image()).isEqualTo(noPins);
        assertThatThrownBy(() -> {
            byte[] v4 = v3.clone();
            v4[8] = (byte) (SnapshotCodec.FORMAT + 1);
            SnapshotCodec.decode(v4);
        }).isInstanceOf(CorruptSnapshotException.class);
    }

    private static Outcome pin(DurableCoordination d, String name, String keyId, String key) throws Exception {
        return d.actor().submit(Mutation.of(new IdentityPinCommand.Pin(name, keyId, key))).get();
    }
}
