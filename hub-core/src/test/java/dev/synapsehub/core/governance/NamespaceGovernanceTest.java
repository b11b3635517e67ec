package dev.synapsehub.core.governance;

import dev.synapsehub.core.command.AuditRecordCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The governance a state applies from the federation records: partitions entered, updated and
 * healed, quarantines and their recovery; refused claims only where governed; the same set after
 * an image round trip; nothing changed by a payload it cannot read. Leases are untouched
 * (INV-RR-3).
 */
class NamespaceGovernanceTest {
    private static final double T = 1_700_000_000;

    @Test
    void aGovernedStateRefusesClaimsInAPartitionedNamespaceUntilItHealsAndNothingElse() {
        CoordinationState state = new CoordinationState();
        state.governClaims(Map.of("proj", "hub-m"));
        apply(state, "multihub_partition", "{\"namespace\":\"proj\",\"owner_hub_id\":\"hub-m\","
                + "\"contesting_hubs\":[\"hub-c\",\"hub-b\"],\"transition\":\"entered\",\"n\":1.5,\"x\":{\"a\":[1,{}]}}");

        Decision refused = state.decide(ClaimCommand.of("proj/ann", "T-1"), T);
        assertThat(refused.reply()).isInstanceOf(Reply.Denied.class);
        Reply.Denied d = (Reply.Denied) refused.reply();
        assertThat(d.refusal()).isEqualTo(Refusal.PARTITIONED);
        assertThat(d.holder()).isEqualTo("hub-m");
        assertThat(d.taskId()).isEqualTo("T-1");
        assertThat(refused.events()).isEmpty();
        assertThat(state.governance().partitions().get("proj").contestingHubs()).containsExactly("hub-b", "hub-c");
        assertThat(state.decide(ClaimCommand.of("lab/ann", "T-2"), T).reply().granted()).as("not governed").isTrue();

        apply(state, "multihub_heal", "{\"namespace\":\"proj\",\"previous_contesting_hubs\":[\"hub-b\",\"hub-c\"]}");
        assertThat(state.decide(ClaimCommand.of("proj/ann", "T-1"), T).reply().granted()).isTrue();
        assertThat(state.claims().snapshot(T)).as("the records made and altered no lease").isEmpty();
    }

    @Test
    void anUngovernedStateAppliesTheRecordsButRefusesNothing() {
        CoordinationState state = new CoordinationState();
        apply(state, "multihub_partition", "{\"namespace\":\"proj\",\"owner_hub_id\":\"hub-m\",\"contesting_hubs\":[\"hub-b\"]}");
        assertThat(state.governance().partitions()).containsOnlyKeys("proj");
        assertThat(state.decide(ClaimCommand.of("proj/ann", "T-1"), T).reply().granted()).isTrue();
    }

    @Test
    void quarantinesAndAnImageRoundTripAndAnUnreadablePayloadChangesNothing() {
        CoordinationState state = new CoordinationState();
        state.governClaims(Map.of("proj", "hub-m"));
        apply(state, "multihub_partition", "{\"namespace\":\"proj\",\"owner_hub_id\":\"hub-m\",\"contesting_hubs\":[\"h\\u00e9\"]}");
        apply(state, "multihub_equivocation", "{\"peer_id\":\"hub-b\",\"seq\":4,\"accepted_fingerprint\":\"sha256:a\","
                + "\"conflicting_fingerprint\":\"sha256:b\"}");
        apply(state, "multihub_equivocation", "{\"peer_id\":\"hub-c\",\"accepted_fingerprint\":\"sha256:c\"}");
        apply(state, "multihub_equivocation_recovery", "{\"peer_id\":\"hub-c\"}");
        apply(state, "multihub_partition", "{\"namespace\":\"lab\",\"contesting_hubs\":[\"hub-b\"}"); // not JSON
        assertThat(state.governance().quarantines()).containsOnlyKeys("hub-b");
        assertThat(state.governance().committedQuarantines()).as("the edge's view (/health)").containsExactly("hub-b");
        assertThat(state.governance().quarantines().get("hub-b")).contains("sha256:a").contains("sha256:b");
        assertThat(state.governance().partitions()).containsOnlyKeys("proj");
        assertThat(state.governance().partitions().get("proj").contestingHubs()).containsExactly("h\u00e9");

        CoordinationState restored = new CoordinationState();
        restored.governClaims(Map.of("proj", "hub-m"));
        restored.restore(state.image());
        assertThat(restored.governance().image()).isEqualTo(state.governance().image());
        assertThat(restored.decide(ClaimCommand.of("proj/ann", "T-1"), T).reply()).isInstanceOf(Reply.Denied.class);
        CoordinationState replaced = new CoordinationState();
        replaced.governClaims(Map.of("proj", "hub-m"));
        replaced.replaceWith(state.image());
        assertThat(replaced.governance().image()).isEqualTo(state.governance().image());
        assertThat(replaced.governance().committedQuarantines()).as("a snapshot installed").containsExactly("hub-b");
        assertThat(replaced.decide(ClaimCommand.of("proj/ann", "T-1"), T).reply()).as("governing kept over a replace")
                .isInstanceOf(Reply.Denied.class);
    }

    @Test
    void thePayloadReaderKeepsTopLevelTextAndRefusesWhatIsNotOneObject() {
        AuditPayload p = AuditPayload.read(" {\"a\" : \"x\\\"y\\n\", \"l\":[\"1\", 2, \"3\", null, [\"n\"]], \"b\":true,"
                + " \"o\":{\"a\":\"inner\"}, \"z\":-1.5e3} ");
        assertThat(p.text("a")).isEqualTo("x\"y\n");
        assertThat(p.texts("l")).containsExactly("1", "3");
        assertThat(p.text("o")).isNull();
        assertThat(p.text("b")).isNull();
        assertThat(p.texts("missing")).isEmpty();
        assertThatThrownBy(() -> AuditPayload.read("{\"a\":\"x\"} trailing")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AuditPayload.read("{\"a\":")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AuditPayload.read("{\"a\" \"x\"}")).isInstanceOf(IllegalArgumentException.class);
    }

    /** Decides and applies one audit record, as the actor does. */
    @Test
    void theEdgesViewShowsAPartitionOnlyOnceItsBatchEndsAndNeverOneRolledBack() {
        CoordinationEvent partition = new CoordinationState().decide(new AuditRecordCommand("hub-m", "multihub_partition",
                "{\"namespace\":\"lab\",\"owner_hub_id\":\"hub-x\",\"contesting_hubs\":[\"hub-b\"]}"), T).events().get(0);
        CoordinationEvent heal = new CoordinationState().decide(new AuditRecordCommand("hub-m", "multihub_heal",
                "{\"namespace\":\"lab\",\"previous_contesting_hubs\":[\"hub-b\"]}"), T).events().get(0);
        dev.synapsehub.core.undo.UndoLog undo = new dev.synapsehub.core.undo.UndoLog();
        NamespaceGovernance g = new NamespaceGovernance(undo); // not governing lab: the edge's view holds it all the same

        undo.begin();
        g.apply(partition);
        assertThat(g.committedPartitions()).as("not before the batch ends").isEmpty();
        undo.rollback();
        assertThat(g.committedPartitions()).as("rolled back: never shown").isEmpty();

        undo.begin();
        g.apply(partition);
        undo.commit();
        assertThat(g.committedPartitions()).containsExactly("lab");
        g.apply(heal); // outside a batch: at once
        assertThat(g.committedPartitions()).isEmpty();

        CoordinationEvent quarantine = new CoordinationState().decide(new AuditRecordCommand("hub-m",
                "multihub_equivocation", "{\"peer_id\":\"hub-b\",\"accepted_fingerprint\":\"sha256:a\"}"), T)
                .events().get(0);
        undo.begin();
        g.apply(quarantine);
        assertThat(g.committedQuarantines()).as("not before the batch ends").isEmpty();
        undo.rollback();
        assertThat(g.committedQuarantines()).as("rolled back: never shown").isEmpty();
        undo.begin();
        g.apply(quarantine);
        undo.commit();
        assertThat(g.committedQuarantines()).containsExactly("hub-b");
    }

    private static void apply(CoordinationState state, String kind, String payload) {
        List<CoordinationEvent> events = state.decide(new AuditRecordCommand("hub-m", kind, payload), T).events();
        for (CoordinationEvent e : events) {
            assertThat(e).isInstanceOf(AuditRecordEvent.class);
            state.apply(e);
        }
    }
}
