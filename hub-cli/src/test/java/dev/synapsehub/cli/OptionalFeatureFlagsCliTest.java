package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The issue-14 hub flags reach the running hub from the command line: {@code --relay-log} and
 * {@code --relay-max-lines} (contract A5.2, on a single hub and a mesh node), {@code --max-findings-per-agent}
 * (A12 PM5).
 */
class OptionalFeatureFlagsCliTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final LoopbackHub hub = new LoopbackHub();
    @TempDir
    Path dir;

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    @Test
    void relayLogAndFindingQuotaFlagsTakeEffect() throws Exception {
        Path log = dir.resolve("logs/relay.ndjson");
        hub.start("--port", "0", "--relay-log", log.toString(), "--relay-max-lines", "100",
                "--max-findings-per-agent", "1");
        try (HubClient alice = HubClient.connect(URI.create(hub.url()), WAIT)) {
            alice.register("p/alice", null, WAIT);
            ObjectNode f = alice.frame("finding");
            f.put("statement", "s").put("subkind", "decision");
            f.putObject("provenance");
            f.putObject("validity");
            alice.send(f);
            alice.awaitType("finding_recorded", WAIT);
            alice.send(f);
            assertThat(alice.awaitType("finding_rejected", WAIT).path("payload").asText())
                    .isEqualTo("Agent 'p/alice' has reached the 1 durable-finding quota.");
        }
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!(Files.exists(log) && Files.readString(log).contains("\"ty\":\"finding_recorded\""))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no finding_recorded line in " + log);
            }
            Thread.sleep(20);
        }
        assertThat(Files.readString(log)).doesNotContain("finding_rejected"); // private: never mirrored
    }

    @Test
    void aMeshNodeMirrorsItsFanOutToItsRelayLog() throws Exception {
        Path log = dir.resolve("n1-relay.ndjson");
        int raft = HubProcess.freePort();
        hub.start("--port", "0", "--db", dir.resolve("n1.db").toString(), "--mesh-id", "n1", "--mesh-peers",
                "n1=127.0.0.1:" + raft, "--relay-log", log.toString());
        try (HubClient alice = HubClient.connect(URI.create(hub.url()), WAIT)) {
            alice.register("p/alice", null, WAIT);
            ObjectNode claim = alice.frame("claim");
            claim.put("task_id", "T1");
            alice.send(claim);
            alice.awaitType("claim_granted", Duration.ofSeconds(30));
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!(Files.exists(log) && Files.readString(log).contains("\"ty\":\"claim_granted\""))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no claim_granted line in " + log);
            }
            Thread.sleep(20);
        }
    }

    @Test
    void aRelayMaxLinesBelowOneIsRefused() {
        assertThatThrownBy(() -> hub.start("--port", "0", "--relay-log", dir.resolve("r.ndjson").toString(),
                "--relay-max-lines", "0")).hasMessageContaining("--relay-max-lines must be at least 1");
    }

    /** A relay log that cannot be opened refuses the start and closes what was opened: the journal's lock is free again. */
    @Test
    void anUnopenableRelayLogRefusesTheStartAndReleasesTheJournal() throws Exception {
        String db = dir.resolve("hub.db").toString();
        assertThatThrownBy(() -> hub.start("--port", "0", "--db", db, "--relay-log", dir.toString()))
                .hasMessageContaining("--relay-log: cannot open");
        hub.start("--port", "0", "--db", db);
        assertThat(hub.url()).startsWith("ws://127.0.0.1:");
    }
}
