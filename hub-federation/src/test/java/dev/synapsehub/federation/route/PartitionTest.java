package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Federation;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.federation.AuditJournal;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.journal.DurableCoordination;
import dev.synapsehub.journal.Retention;
import dev.synapsehub.journal.SnapshotPolicy;
import dev.synapsehub.journal.StoredEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * INV-CR-4: a namespace contested by a watched hub that is neither its owner nor this hub is
 * partitioned and refuses every grant; entering and healing are journaled and an unresolved
 * partition is restored at start-up. Ungoverned namespaces grant nothing either.
 */
class PartitionTest {
    static final Duration WAIT = Duration.ofSeconds(15);
    @TempDir
    Path dir;
    final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T keep(T c) {
        open.add(c);
        return c;
    }

    @Test
    void aContestedNamespaceRefusesEveryGrantUntilItHealsAndThePartitionSurvivesARestart() throws Exception {
        Pki pki = new Pki(dir);
        Pki.HubCerts aCerts = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("c-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(aCerts.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        // hub-c wrongly believes it may grant in proj (it has no ownership map): it is the contester
        FedHub c = keep(FedHub.serving(pki.hub("hub-c"), dir.resolve("c.db"), ServingTrust.load(policy, m -> { })));
        HubClient c1 = c.agent("proj/c1");
        assertThat(FedHub.claim(c1, "proj/c1", "C-1", "src/c").path("type").asText()).isEqualTo("claim_granted");

        FederationSettings aSettings = Federation.follower(aCerts, List.of(Federation.peer("hub-c", c.uri(), c.certs)),
                Map.of("proj", "hub-a"));
        Path aDb = dir.resolve("a.db");
        FedHub a = new FedHub(aCerts, aDb, aSettings);
        Await.until("hub-a sees the partition", WAIT, () -> a.federation.partitions().containsKey("proj"));
        HubClient a1 = a.agent("proj/a1");
        ObjectNode refused = FedHub.claim(a1, "proj/a1", "T-1", "src/a");
        assertThat(refused.path("type").asText()).isEqualTo("claim_denied");
        assertThat(refused.path("ownership").asText()).isEqualTo("partitioned");
        assertThat(refused.path("owner_hub_id").asText()).isEqualTo("hub-a");
        assertThat(refused.has("reason_code")).isFalse();
        List<StoredEvent> audit = auditRows(a);
        assertThat(audit).extracting(StoredEvent::kind).containsExactly("multihub_partition");
        assertThat(audit.get(0).payload()).contains("\"contesting_hubs\":[\"hub-c\"]")
                .contains("\"transition\":\"entered\"").contains("\"outcome\":\"partitioned\"");
        a.close();

        FedHub restarted = keep(new FedHub(aCerts, aDb, aSettings));
        assertThat(restarted.federation.partitions()).containsKey("proj"); // restored before any poll
        HubClient again = restarted.agent("proj/a1");
        assertThat(FedHub.claim(again, "proj/a1", "T-2", "src/b").path("ownership").asText()).isEqualTo("partitioned");

        ObjectNode release = c1.frame("proj/c1", "release");
        release.put("task_id", "C-1");
        c1.send(release);
        c1.awaitType("release_granted", WAIT);
        Await.until("the partition heals", WAIT, () -> restarted.federation.partitions().isEmpty());
        assertThat(auditRows(restarted)).extracting(StoredEvent::kind)
                .containsExactly("multihub_partition", "multihub_heal"); // not entered twice
        assertThat(auditRows(restarted).get(1).payload()).contains("\"previous_contesting_hubs\":[\"hub-c\"]")
                .contains("\"outcome\":\"local\"").contains("\"observation_refreshed\":true");
        assertThat(FedHub.claim(again, "proj/a1", "T-3", "src/c").path("type").asText()).isEqualTo("claim_granted");

        // INV-CR-1: a keyed claim granted before the namespace turned partitioned is retried: its first answer
        ObjectNode first = keyedClaim(again, "K-1", "k-1");
        assertThat(first.path("type").asText()).as(first.toString()).isEqualTo("claim_granted");
        assertThat(FedHub.claim(c1, "proj/c1", "C-2", "src/c2").path("type").asText()).isEqualTo("claim_granted");
        Await.until("the partition is entered again", WAIT, () -> restarted.federation.partitions().containsKey("proj"));
        ObjectNode retry = keyedClaim(again, "K-1", "k-1");
        assertThat(retry.path("type").asText()).as(retry.toString()).isEqualTo("claim_granted");
        assertThat(retry.path("epoch").asLong()).isEqualTo(first.path("epoch").asLong());
        assertThat(keyedClaim(again, "K-2", "k-2").path("ownership").asText()).isEqualTo("partitioned");
    }

    @Test
    void anUnresolvedPartitionWhoseRowRetentionDeletedIsRestoredAndHeals() throws Exception {
        Pki pki = new Pki(dir);
        Pki.HubCerts aCerts = pki.hub("hub-a");
        Path aDb = dir.resolve("a.db");
        NamespaceOwners owners = new NamespaceOwners("hub-a", Map.of("proj", "hub-a"));
        long partitionSeq;
        try (DurableCoordination hub = DurableCoordination.open(aDb, Clock.system(), CoordinationState::new,
                ActorSettings.DEFAULTS, new SnapshotPolicy(0, 0, 2, false), new Retention(0))) {
            claim(hub, "X-1");
            hub.snapshotter().takeNow();
            // proj entered a partition a while before the stop; two snapshots are taken after it
            assertThat(new AuditJournal(hub.actor(), "hub-a").record("multihub_partition",
                    PartitionTracker.partitionPayload(owners, "proj", Set.of("hub-c"), true)).get()).isTrue();
            partitionSeq = hub.journal().lastSeq();
            hub.snapshotter().takeNow();
            claim(hub, "X-2");
            hub.snapshotter().takeNow(); // the older kept snapshot covers the partition row
            assertThat(hub.journal().compactedThrough()).as("retention compacts up to the partition row only")
                    .isEqualTo(partitionSeq - 1);
        }
        // nobody contests proj any more: the restored partition heals at the first refresh
        FedHub restarted = keep(new FedHub(aCerts, aDb, new FederationSettings(ServingTrust.none(),
                WatchSettings.none(), owners, ForwardSettings.none(), null,
                new FederationSettings.RelayPolicy(false, false))));
        Await.until("the restored partition heals", WAIT, () -> healed(restarted));
        HubClient a1 = restarted.agent("proj/a1");
        assertThat(FedHub.claim(a1, "proj/a1", "T-1", "src/a").path("type").asText())
                .as("claims in proj are granted again").isEqualTo("claim_granted");
    }

    private static ObjectNode keyedClaim(HubClient agent, String task, String idemKey) throws Exception {
        ObjectNode f = agent.frame("proj/a1", "claim");
        f.put("task_id", task);
        f.put("idem_key", idemKey);
        agent.send(f);
        return agent.await(r -> ("claim_granted".equals(r.path("type").asText()) || "claim_denied".equals(
                r.path("type").asText())) && task.equals(r.path("task_id").asText()), WAIT);
    }

    private static void claim(DurableCoordination hub, String task) throws Exception {
        hub.actor().submit(Mutation.of(new ClaimCommand("other/x", "other/x", task, null, null, task, List.of(), null)))
                .get();
    }

    private static boolean healed(FedHub hub) {
        try {
            return auditRows(hub).stream().anyMatch(e -> e.kind().equals("multihub_heal"));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static List<StoredEvent> auditRows(FedHub hub) throws Exception {
        return hub.durable.actor().read(s -> {
            try {
                return hub.durable.journal().readStored(0, 1000, Long.MAX_VALUE);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get().stream().filter(e -> e.kind().startsWith("multihub_")).toList();
    }
}
