package dev.synapsehub.journal;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.AuditRecordCommand;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Federation audit records (contract §12.3–12.4) go through the actor into the one journal at
 * FULL, are served and read back byte for byte, and change no state on replay (INV-RR-3).
 */
class AuditRecordJournalTest {
    @TempDir
    Path dir;

    @Test
    void anAuditRecordIsJournaledAtFullAndReplaysWithoutChangingState() throws Exception {
        Path db = dir.resolve("hub.db");
        String payload = "{\"namespace\":\"proj\",\"local_hub_id\":\"hub-a\",\"contesting_hubs\":[\"hub-c\"],"
                + "\"outcome\":\"partitioned\",\"transition\":\"entered\",\"note\":\"caf\\u00e9\"}";
        DurableCoordination d = DurableCoordination.open(db, Clock.system());
        Outcome outcome = d.actor().submit(Mutation.of(new AuditRecordCommand("hub-a", "multihub_partition", payload)))
                .get();
        assertThat(outcome).isInstanceOf(Outcome.Decided.class);
        assertThat(d.journal().synchronousOfLastCommit()).isEqualTo(dev.synapsehub.core.event.Durability.FULL);
        List<StoredEvent> rows = d.actor().read(s -> {
            try {
                return d.journal().readStored(0, 10, Long.MAX_VALUE);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get();
        assertThat(rows).singleElement().satisfies(r -> {
            assertThat(r.kind()).isEqualTo("multihub_partition");
            assertThat(r.payload()).isEqualTo(payload);
        });
        d.actor().close();

        DurableCoordination again = DurableCoordination.open(db, Clock.system());
        List<JournaledEvent> read = again.actor().read(s -> {
            try {
                return again.journal().readAfter(0, 10, Set.of("multihub_partition"));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get();
        assertThat(read).singleElement().satisfies(e ->
                assertThat(((AuditRecordEvent) e.event()).payloadJson()).isEqualTo(payload));
        assertThat(again.actor().read(CoordinationState::lastSeq).get()).isEqualTo(1);
        assertThat(again.actor().read(s -> s.claims().liveCount()).get()).isZero();
        again.actor().close();
    }

    @Test
    void onlyTheFederationAuditKindsWithAnObjectPayloadAreRecords() {
        assertThatThrownBy(() -> new AuditRecordEvent(1, "claim", "{}")).hasMessageContaining("not an audit record kind");
        assertThatThrownBy(() -> new AuditRecordEvent(1, "multihub_heal", "[]")).hasMessageContaining("JSON object");
    }
}
