package dev.synapsehub.journal;

import dev.synapsehub.core.card.PersistentCard;
import dev.synapsehub.core.event.CapabilityCardEvent;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Persistent cards in the journal: the event round-trips strictly; snapshots (format 4 and up) carry them. */
class CardCodecTest {
    private final EventCodec codec = new EventCodec();

    @Test
    void theCardEventRoundTripsAndACardlessPayloadIsCorrupt() throws Exception {
        CapabilityCardEvent e = new CapabilityCardEvent(2.5, "p/seat", "{\"agent\":\"p/seat\",\"skills\":[\"java\"]}");
        String payload = codec.encode(e);
        assertThat(payload).isEqualTo("{\"agent\":\"p/seat\",\"card\":{\"agent\":\"p/seat\",\"skills\":[\"java\"]}}");
        assertThat(codec.decode("capability_card", 2.5, payload)).contains(e);
        assertThatThrownBy(() -> codec.decode("capability_card", 1.0, "{\"agent\":\"p/seat\",\"card\":\"x\"}"))
                .isInstanceOf(EventCodec.CorruptPayloadException.class);
        assertThatThrownBy(() -> codec.decode("capability_card", 1.0, "{\"card\":{}}"))
                .isInstanceOf(EventCodec.CorruptPayloadException.class);
    }

    @Test
    void theCardRemovalRoundTripsAndAnAgentlessOneIsCorrupt() throws Exception {
        var removed = new dev.synapsehub.core.event.CapabilityCardRemovedEvent(3.5, "p/seat");
        String payload = codec.encode(removed);
        assertThat(payload).isEqualTo("{\"agent\":\"p/seat\"}");
        assertThat(codec.decode("capability_card_removed", 3.5, payload)).contains(removed);
        assertThatThrownBy(() -> codec.decode("capability_card_removed", 1.0, "{}"))
                .isInstanceOf(EventCodec.CorruptPayloadException.class);
    }

    @Test
    void aSnapshotCarriesPersistentCardsAndAFormatThreeBodyReadsWithout() throws Exception {
        CoordinationState state = new CoordinationState();
        state.apply(new CapabilityCardEvent(1.0, "p/seat", "{\"agent\":\"p/seat\"}"));
        StateImage image = state.image();
        StateSnapshot back = SnapshotCodec.decode(SnapshotCodec.encode(new StateSnapshot(2.0, 0, 0, image)));
        assertThat(back.image().cards()).containsExactly(new PersistentCard("p/seat", "{\"agent\":\"p/seat\"}", 1.0));
        assertThat(back.image()).isEqualTo(image);

        StateImage empty = new CoordinationState().image();
        byte[] current = SnapshotCodec.encode(new StateSnapshot(3.0, 0, 0, empty), SnapshotCodec.LAST_SEQUENTIAL_FORMAT);
        assertThat(current[8]).isEqualTo((byte) SnapshotCodec.LAST_SEQUENTIAL_FORMAT);
        // format 3 is the last table-less body without the sections formats 4 and up added (an empty
        // count, one zero byte, each) before the end magic
        int added = SnapshotCodec.sectionsAfterChannels(SnapshotCodec.LAST_SEQUENTIAL_FORMAT) - SnapshotCodec.sectionsAfterChannels(3);
        byte[] three = new byte[current.length - added];
        System.arraycopy(current, 0, three, 0, current.length - 8 - added);
        System.arraycopy(current, current.length - 8, three, current.length - 8 - added, 8);
        three[8] = 3;
        assertThat(SnapshotCodec.decode(three).image()).isEqualTo(empty);
    }
}
