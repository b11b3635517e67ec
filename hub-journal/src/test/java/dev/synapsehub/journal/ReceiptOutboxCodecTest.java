package dev.synapsehub.journal;

import dev.synapsehub.core.event.DeliveryReceiptDeferredEvent;
import dev.synapsehub.core.event.DeliveryReceiptExpiredEvent;
import dev.synapsehub.core.event.ReceiptsDeliveredEvent;
import dev.synapsehub.core.messaging.OwedReceipt;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The receipt outbox in the journal (contract §8.5): its settle event round-trips, a snapshot
 * (format 3 and up) carries the owed receipts, and a format-2 snapshot still reads, owing none.
 */
class ReceiptOutboxCodecTest {
    private final EventCodec codec = new EventCodec();

    @Test
    void theSettleEventRoundTrips() throws Exception {
        ReceiptsDeliveredEvent e = new ReceiptsDeliveredEvent(3.5, "p/\u00e9",
                List.of("delivery-receipt:7:deferred", "delivery-receipt:9:expired"));
        String payload = codec.encode(e);
        assertThat(payload).isEqualTo("{\"sender\":\"p/\\u00E9\",\"notification_ids\":"
                + "[\"delivery-receipt:7:deferred\",\"delivery-receipt:9:expired\"]}");
        assertThat(codec.decode(e.kind(), e.ts(), payload)).contains(e);
        assertThatThrownBy(() -> codec.decode(e.kind(), 1.0, "{\"notification_ids\":[]}"))
                .isInstanceOf(EventCodec.CorruptPayloadException.class);
    }

    private static StateImage imageOwing() {
        CoordinationState state = new CoordinationState();
        state.apply(new DeliveryReceiptDeferredEvent(1.0, "ann", "bob", 1, 4, List.of("bob"), "bob", "c-1"));
        state.apply(new DeliveryReceiptExpiredEvent(2.0, "ann", null, 2, 5, "pending_window_evicted", null));
        return state.image();
    }

    @Test
    void aSnapshotCarriesTheOwedReceipts() throws Exception {
        StateImage image = imageOwing();
        assertThat(image.messaging().owedReceipts()).hasSize(2);
        StateSnapshot back = SnapshotCodec.decode(SnapshotCodec.encode(new StateSnapshot(3.0, 0, 0, image)));
        assertThat(back.image()).isEqualTo(image);
        CoordinationState restored = new CoordinationState();
        restored.restore(back.image());
        assertThat(restored.messaging().owedReceipts()).extracting(OwedReceipt::notificationId)
                .containsExactly("delivery-receipt:4:deferred", "delivery-receipt:5:expired");
    }

    @Test
    void aFormatTwoSnapshotStillReadsAndOwesNothing() throws Exception {
        StateImage image = new CoordinationState().image();
        int seq = SnapshotCodec.LAST_SEQUENTIAL_FORMAT; // the last body without a section table
        byte[] current = SnapshotCodec.encode(new StateSnapshot(3.0, 0, 0, image), seq);
        assertThat(current[8]).isEqualTo((byte) seq); // the format follows the 8-byte magic
        // format 2 is this body without the sections formats 3 and up added (each an empty count,
        // one zero byte, before the end magic)
        int added = SnapshotCodec.sectionsAfterChannels(seq) - SnapshotCodec.sectionsAfterChannels(2);
        byte[] two = new byte[current.length - added];
        System.arraycopy(current, 0, two, 0, current.length - 8 - added);
        System.arraycopy(current, current.length - 8, two, current.length - 8 - added, 8);
        two[8] = 2;
        for (int i = 0; i < added; i++) {
            assertThat(current[current.length - 9 - i]).isZero();
        }
        StateSnapshot back = SnapshotCodec.decode(two);
        assertThat(back.image()).isEqualTo(image);
        // and a format-7 body cut the same way is refused, not misread
        byte[] cut = Arrays.copyOf(two, two.length);
        cut[8] = (byte) seq;
        assertThatThrownBy(() -> SnapshotCodec.decode(cut)).isInstanceOf(CorruptSnapshotException.class);
    }
}
