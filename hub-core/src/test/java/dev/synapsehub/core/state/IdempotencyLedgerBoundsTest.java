package dev.synapsehub.core.state;

import dev.synapsehub.core.event.IdempotencyRecordedEvent;
import dev.synapsehub.core.undo.UndoLog;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The ledger is bounded by keys and by its responses' characters together, the oldest forgotten first. */
class IdempotencyLedgerBoundsTest {
    private static IdempotencyRecordedEvent keyed(String key, String response) {
        return new IdempotencyRecordedEvent(1, key, "digest-" + key, response);
    }

    @Test
    void aLargeResponseForgetsAsManyOfTheOldestAsItNeedsAndTheNewestIsAlwaysKept() {
        IdempotencyLedger ledger = new IdempotencyLedger(100, 10, new UndoLog());
        ledger.apply(keyed("a", "aaa"));
        ledger.apply(keyed("b", "bbb"));
        ledger.apply(keyed("c", "ccc"));
        assertThat(ledger.chars()).isEqualTo(9);
        ledger.apply(keyed("d", "dddddddd")); // 8 more: a, b and c make room
        assertThat(ledger.view().keySet()).containsExactly("d");
        assertThat(ledger.findCommitted("a")).isEmpty();
        assertThat(ledger.chars()).isEqualTo(8);
        ledger.apply(keyed("e", "more than ten")); // alone over the bound: kept, the rest forgotten
        assertThat(ledger.view().keySet()).containsExactly("e");
        assertThat(ledger.findCommitted("e")).isPresent();
        ledger.apply(keyed("e", "e")); // re-recorded smaller
        assertThat(ledger.chars()).isEqualTo(1);
    }

    @Test
    void aRolledBackBatchPutsBackEverythingItsResponsesForgotInTheirOrder() {
        UndoLog undo = new UndoLog();
        IdempotencyLedger ledger = new IdempotencyLedger(100, 10, undo);
        for (String k : List.of("a", "b", "c")) {
            ledger.apply(keyed(k, k + k + k));
        }
        undo.begin();
        ledger.apply(keyed("b", "B"));
        ledger.apply(keyed("d", "dddddddd"));
        assertThat(ledger.view().keySet()).containsExactly("b", "d");
        undo.rollback();
        assertThat(ledger.view().keySet()).containsExactly("a", "b", "c");
        assertThat(ledger.find("b")).map(IdempotencyLedger.Entry::response).contains("bbb");
        assertThat(ledger.chars()).isEqualTo(9);
        assertThat(ledger.findCommitted("a")).isPresent();
        ledger.apply(keyed("x", "xx")); // the eviction order is the one before the batch
        assertThat(ledger.view().keySet()).containsExactly("b", "c", "x");
    }

    @Test
    void aRestoredImageKeepsWhatRecordingItInOrderKeeps() {
        List<IdempotencyRecordedEvent> events = List.of(keyed("a", "aaaa"), keyed("b", "bbbb"), keyed("c", "cccc"),
                keyed("d", "d"));
        IdempotencyLedger recorded = new IdempotencyLedger(100, 10, new UndoLog());
        events.forEach(recorded::apply);
        IdempotencyLedger unbounded = new IdempotencyLedger(100, 1_000, new UndoLog());
        events.forEach(unbounded::apply);
        IdempotencyLedger restored = new IdempotencyLedger(100, 10, new UndoLog());
        restored.restore(unbounded.image());
        assertThat(restored.image()).isEqualTo(recorded.image());
        assertThat(restored.chars()).isEqualTo(recorded.chars()).isEqualTo(9);
        IdempotencyLedger oneLarge = new IdempotencyLedger(100, 0, new UndoLog());
        oneLarge.restore(unbounded.image());
        assertThat(oneLarge.view().keySet()).as("the newest, even alone over the bound").containsExactly("d");
    }
}
