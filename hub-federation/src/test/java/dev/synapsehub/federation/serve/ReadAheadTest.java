package dev.synapsehub.federation.serve;

import dev.synapsehub.journal.StoredEvent;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Pages read ahead are found by the exact pull they answer, taken once, held up to the capacity and for a bounded time. */
class ReadAheadTest {
    private long now;

    private static List<StoredEvent> page(long seq) {
        return List.of(new StoredEvent(seq, 1.0, "claim", "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    @Test
    void aPageIsTakenOnceAndOnlyByTheSamePull() {
        ReadAhead ahead = new ReadAhead(2, 1_000, () -> now);
        List<StoredEvent> p11 = page(11);
        ahead.keep(10, 5000, p11);
        assertThat(ahead.take(10, 4999)).isNull();
        assertThat(ahead.take(9, 5000)).isNull();
        assertThat(ahead.take(10, 5000)).isSameAs(p11);
        assertThat(ahead.take(10, 5000)).isNull();
    }

    @Test
    void beyondItsCapacityTheOldestPageGoes() {
        ReadAhead ahead = new ReadAhead(2, 1_000, () -> now);
        List<StoredEvent> p21 = page(21);
        List<StoredEvent> p31 = page(31);
        ahead.keep(10, 5000, page(11));
        ahead.keep(20, 5000, p21);
        ahead.keep(30, 5000, p31);
        assertThat(ahead.size()).isEqualTo(2);
        assertThat(ahead.take(10, 5000)).isNull();
        assertThat(ahead.take(20, 5000)).isSameAs(p21);
        assertThat(ahead.take(30, 5000)).isSameAs(p31);
    }

    @Test
    void aPageOlderThanItsBoundIsNotServedAndGoesWhenAnotherIsKept() {
        ReadAhead ahead = new ReadAhead(2, 1_000, () -> now);
        ahead.keep(10, 5000, page(11));
        now += 1_001;
        assertThat(ahead.take(10, 5000)).isNull();
        ahead.keep(20, 5000, page(21));
        now += 1_001;
        List<StoredEvent> p31 = page(31);
        ahead.keep(30, 5000, p31);
        assertThat(ahead.size()).as("the expired page went when the next was kept").isEqualTo(1);
        now += 1_000;
        assertThat(ahead.take(30, 5000)).as("at its bound it is still served").isSameAs(p31);
    }
}
