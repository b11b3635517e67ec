package dev.synapsehub.net.cockpit;

import dev.synapsehub.journal.EventCodec;
import dev.synapsehub.journal.MessagingEventCodec;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The stream's kinds are the journal's: none misspelt, none of the messaging kinds forgotten. */
class StreamKindsTest {
    @Test
    void everyKindTheStreamAcceptsIsOneTheJournalKnows() {
        EventCodec journal = new EventCodec();
        assertThat(StreamKinds.COMMITTED).allSatisfy(kind -> assertThat(journal.knows(kind)).as(kind).isTrue());
        assertThat(StreamKinds.COMMITTED).containsAll(MessagingEventCodec.KINDS).doesNotContain("idempotency");
    }
}
