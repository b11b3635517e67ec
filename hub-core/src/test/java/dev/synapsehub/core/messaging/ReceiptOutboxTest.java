package dev.synapsehub.core.messaging;

import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.AckCommand;
import dev.synapsehub.core.command.ChatCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.ReceiptsDeliveredCommand;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.Durability;
import dev.synapsehub.core.event.ReceiptsDeliveredEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The receipt notification outbox (contract §8.5) in the core: a deferred or expired receipt is
 * owed from its decision until it is settled for its sender, once; it is state, so replay and
 * images rebuild it and a rolled-back batch leaves it as it was.
 */
class ReceiptOutboxTest {
    private static final ChatFrameRenderer FRAME = s -> "{\"msg_id\":" + s.msgId() + "}";
    private final List<JournaledEvent> journal = new ArrayList<>();

    private Decision run(CoordinationState s, Command c, double t) {
        Decision d = s.decide(c, t);
        for (CoordinationEvent e : d.events()) {
            s.apply(e);
            journal.add(new JournaledEvent(s.lastSeq(), e));
        }
        return d;
    }

    /** ALICE's receipted chat to an offline BOB, acked by BOB: returns the chat's seq. */
    private long ackedChat(CoordinationState s, double t) {
        run(s, new ChatCommand("ALICE", "BOB", null, null, null, true, List.of(), FRAME), t);
        long seq = journal.stream().filter(j -> j.event() instanceof ChatEvent).mapToLong(JournaledEvent::seq).max()
                .orElseThrow();
        run(s, new AckCommand("BOB", null, List.of(), seq, null), t + 1);
        return seq;
    }

    @Test
    void aDeferredReceiptIsOwedUntilSettledForItsSenderOnce() {
        CoordinationState s = new CoordinationState();
        long seq = ackedChat(s, 10);
        String id = "delivery-receipt:" + seq + ":deferred";
        assertThat(s.messaging().owedReceipts()).singleElement().satisfies(r -> {
            assertThat(r.notificationId()).isEqualTo(id);
            assertThat(r.sender()).isEqualTo("ALICE");
            assertThat(r.recipients()).containsExactly("BOB");
            assertThat(r.expired()).isFalse();
        });
        // someone else cannot settle ALICE's receipt, nor an id that is not owed
        assertThat(run(s, new ReceiptsDeliveredCommand("MALLORY", List.of(id)), 12).events()).isEmpty();
        assertThat(run(s, new ReceiptsDeliveredCommand("ALICE", List.of("delivery-receipt:99:deferred")), 12)
                .events()).isEmpty();
        assertThat(s.messaging().owedReceipts()).hasSize(1);
        Decision settled = run(s, new ReceiptsDeliveredCommand("ALICE", List.of(id, id)), 13);
        assertThat(settled.events()).containsExactly(new ReceiptsDeliveredEvent(13, "ALICE", List.of(id)));
        assertThat(settled.events().get(0).durability()).isEqualTo(Durability.NORMAL);
        assertThat(s.messaging().owedReceipts()).isEmpty();
        // settled once: a second report decides nothing
        assertThat(run(s, new ReceiptsDeliveredCommand("ALICE", List.of(id)), 14).events()).isEmpty();
    }

    @Test
    void anExpiredReceiptIsOwedToo() {
        CoordinationState s = new CoordinationState(dev.synapsehub.core.claim.RegistryLimits.DEFAULTS, 100,
                dev.synapsehub.core.board.BoardLimits.DEFAULTS, dev.synapsehub.core.resource.ResourceLimits.DEFAULTS,
                new MessagingLimits(100, 200, MessagingLimits.SEVEN_DAYS, 0, 512, 100, 100, 1));
        run(s, new ChatCommand("ALICE", "BOB", null, null, null, true, List.of(), FRAME), 1);
        long first = journal.stream().filter(j -> j.event() instanceof ChatEvent).findFirst().orElseThrow().seq();
        run(s, new ChatCommand("CAROL", "BOB", null, null, null, true, List.of(), FRAME), 2);
        assertThat(s.messaging().owedReceipts()).singleElement().satisfies(r -> {
            assertThat(r.notificationId()).isEqualTo("delivery-receipt:" + first + ":expired");
            assertThat(r.sender()).isEqualTo("ALICE");
            assertThat(r.reason()).isEqualTo(MessagingRegistry.EVICTED);
        });
    }

    @Test
    void replayAndImagesRebuildTheOutboxAndRollbackRestoresIt() {
        CoordinationState s = new CoordinationState();
        long a = ackedChat(s, 10);
        long b = ackedChat(s, 20);
        run(s, new ReceiptsDeliveredCommand("ALICE", List.of("delivery-receipt:" + a + ":deferred")), 30);
        assertThat(s.messaging().owedReceipts()).extracting(OwedReceipt::messageSeq).containsExactly(b);

        CoordinationState replayed = new CoordinationState();
        journal.forEach(replayed::apply);
        assertThat(replayed.messaging().owedReceipts()).isEqualTo(s.messaging().owedReceipts());

        CoordinationState restored = new CoordinationState();
        restored.restore(s.image());
        assertThat(restored.messaging().owedReceipts()).isEqualTo(s.messaging().owedReceipts());

        List<OwedReceipt> before = s.messaging().owedReceipts();
        s.beginBatch();
        Decision d = s.decide(new ReceiptsDeliveredCommand("ALICE", List.of("delivery-receipt:" + b + ":deferred")), 40);
        d.events().forEach(s::apply);
        assertThat(s.messaging().owedReceipts()).isEmpty();
        s.rollbackBatch();
        assertThat(s.messaging().owedReceipts()).isEqualTo(before);
    }
}
