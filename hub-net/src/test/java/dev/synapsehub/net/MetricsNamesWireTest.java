package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** Every metric name contract §10 lists is on {@code /metrics}, with the value the hub's state and traffic give. */
class MetricsNamesWireTest {
    /** The contract's §10 list, verbatim. */
    private static final List<String> CONTRACT_NAMES = List.of("synapse_up", "synapse_journal_corrupt_rows",
            "synapse_connected_clients", "synapse_online_agents", "synapse_active_claims", "synapse_resource_offers",
            "synapse_chat_history_messages", "synapse_blackboard_tasks", "synapse_messages_total",
            "synapse_live_waiters", "synapse_dead_letter_targets", "synapse_dead_letters",
            "synapse_claims_granted_total", "synapse_claims_denied_total", "synapse_releases_granted_total",
            "synapse_chat_directed_total", "synapse_chat_broadcast_total", "synapse_auth_failures_total",
            "synapse_rate_limited_total", "synapse_durable_ingress_refused_total", "synapse_federation_denied_total",
            "synapse_forwarded_claims_total", "synapse_forwarded_claims_granted_total",
            "synapse_forwarded_claims_denied_total", "synapse_forwarded_claim_timeouts_total", "synapse_takeovers_total",
            "synapse_takeover_quarantines_total", "synapse_atomic_operations_inserted_total",
            "synapse_atomic_operations_replayed_total", "synapse_atomic_operations_conflicts_total",
            "synapse_operation_outbox_pending");

    private static String metrics(TestHub hub) throws Exception {
        return HttpGet.body(hub.port, "/metrics");
    }

    @Test
    void everyNameOfTheContractIsExportedWithItsMeasuredValue() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true))) {
            String before = metrics(hub);
            for (String name : CONTRACT_NAMES) {
                if (!name.contains("forward") && !name.equals("synapse_federation_denied_total")) {
                    // the federation names come from hub-federation's module, plugged in by the daemon
                    assertThat(before).as(name).containsPattern("(?m)^" + name + " ");
                }
            }
            assertThat(before).contains("synapse_messages_total 0\n").contains("synapse_resource_offers 0\n")
                    .contains("synapse_atomic_operations_inserted_total 0\n");

            HubClient alpha = hub.agent("p/alpha");
            HubClient beta = hub.agent("p/beta");
            ObjectNode everyone = alpha.frame("chat");
            everyone.put("target", "all").put("payload", "hello");
            alpha.send(everyone);
            alpha.await(f -> "chat".equals(f.path("type").asText()) && "hello".equals(f.path("payload").asText()), WAIT);
            ObjectNode direct = alpha.frame("chat");
            direct.put("target", "p/beta").put("payload", "for you");
            alpha.send(direct);
            beta.await(f -> "chat".equals(f.path("type").asText()) && "for you".equals(f.path("payload").asText()), WAIT);
            ObjectNode task = alpha.frame("ledger_task");
            task.put("task_id", "B1").put("title", "Build it");
            alpha.send(task);
            alpha.awaitType("ledger_task_posted", WAIT);
            ObjectNode offer = alpha.frame("resource_offer");
            offer.put("kind", "gpu").put("name", "a100").put("ttl_seconds", 600.0);
            alpha.send(offer);
            alpha.awaitType("resource_offered", WAIT);
            ObjectNode claim = alpha.frame("claim");
            claim.put("task_id", "T1").put("worktree", "w").put("idem_key", "once");
            claim.putArray("paths").add("src");
            alpha.send(claim);
            alpha.awaitType("claim_granted", WAIT);
            alpha.send(claim.deepCopy());
            alpha.awaitType("claim_granted", WAIT); // the keyed retry, answered from the record

            for (int i = 0; i < 2; i++) { // to a name nobody holds: dead-lettered, twice to one target
                ObjectNode away = alpha.frame("chat");
                away.put("target", "p/away").put("payload", "later " + i);
                alpha.send(away);
                String text = "later " + i;
                alpha.await(f -> "chat".equals(f.path("type").asText()) && text.equals(f.path("payload").asText()), WAIT);
            }
            String listing = TestHub.state(alpha).path("snapshot").path("dead_letters").toString();
            String after = metrics(hub);
            assertThat(after).contains("synapse_messages_total 4\n").contains("synapse_chat_broadcast_total 1\n")
                    .contains("synapse_chat_directed_total 3\n").contains("synapse_chat_history_messages 4\n")
                    .contains("synapse_blackboard_tasks 1\n").contains("synapse_resource_offers 1\n")
                    .contains("synapse_active_claims 1\n").contains("synapse_atomic_operations_inserted_total 1\n")
                    .contains("synapse_atomic_operations_replayed_total 1\n")
                    .contains("synapse_dead_letter_targets 1\n").contains("synapse_dead_letters 2\n");
            assertThat(listing).as("the state's own listing agrees").contains("\"p/away\"").contains("\"count\":2");
        }
    }

    @Test
    void identitiesTheMailboxDroppedWithChatsPendingAreCounted(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        // a mailbox of two identities: the third with a chat pending pushes the oldest out
        dev.synapsehub.core.messaging.MessagingLimits two = new dev.synapsehub.core.messaging.MessagingLimits(100, 10,
                dev.synapsehub.core.messaging.MessagingLimits.SEVEN_DAYS, 0, 2, 100, 100, 10);
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true), dir.resolve("hub.db"),
                () -> new dev.synapsehub.core.state.CoordinationState(dev.synapsehub.core.claim.RegistryLimits.DEFAULTS,
                        dev.synapsehub.core.state.CoordinationState.DEFAULT_IDEMPOTENCY_CAPACITY,
                        dev.synapsehub.core.board.BoardLimits.DEFAULTS, dev.synapsehub.core.resource.ResourceLimits.DEFAULTS,
                        two))) {
            assertThat(metrics(hub)).contains("synapse_mailbox_dropped_with_pending 0\n");
            HubClient alpha = hub.agent("p/alpha");
            for (int i = 1; i <= 5; i++) {
                ObjectNode away = alpha.frame("chat");
                away.put("target", "p/c" + i).put("payload", "later " + i);
                alpha.send(away);
                String text = "later " + i;
                alpha.await(f -> "chat".equals(f.path("type").asText()) && text.equals(f.path("payload").asText()), WAIT);
            }
            String after = metrics(hub);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^synapse_mailbox_dropped_with_pending (\\d+)$")
                    .matcher(after);
            assertThat(m.find()).as(after).isTrue();
            assertThat(Long.parseLong(m.group(1))).as("five identities with a chat pending, two kept, two parked")
                    .isEqualTo(1);
        }
    }
}
