package dev.synapsehub.federation.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.journal.StoredEvent;
import dev.synapsehub.net.wire.PythonFloatFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A page streamed straight to bytes (no tree) carries exactly what the journal holds: each
 * event's seq, kind, its ts written as the wire writes floats, and the stored payload as is,
 * non-ASCII text included, inside the usual envelope.
 */
class LogPageBytesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void theServedPageIsTheJournalEventByEvent() throws Exception {
        Pki pki = new Pki(dir);
        Pki.HubCerts a = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(a.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        try (FedHub b = FedHub.serving(pki.hub("hub-b"), dir.resolve("b.db"), ServingTrust.load(policy, m -> { }))) {
            HubClient agent = b.agent("proj/b1");
            assertThat(FedHub.claim(agent, "proj/b1", "T-é", "src/ü/𝄞.txt").path("type").asText()).isEqualTo("claim_granted");
            ObjectNode chat = agent.frame("proj/b1", "chat");
            chat.put("payload", "naïve \"quoted\" \\ text, 𝄞 and \u0001");
            agent.send(chat);
            long end = b.durable.journal().lastSeq();
            List<StoredEvent> stored = b.durable.actor().read(s -> {
                try {
                    return b.durable.journal().readStored(0, 100, Long.MAX_VALUE);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }).get();
            assertThat(stored.stream().map(StoredEvent::kind)).contains("claim");

            HubClient peer = b.connect(b.pinned().withClientCertificate(a.clientFiles().cert(), a.clientFiles().key()));
            peer.awaitType("welcome", FedHub.WAIT);
            peer.send(peer.frame("hub-a", "heartbeat"));
            ObjectNode request = peer.frame("hub-a", "multihub_log_request");
            request.put("after_seq", 0);
            peer.send(request);
            ObjectNode page = peer.awaitType("multihub_log_snapshot", FedHub.WAIT);

            assertThat(page.path("sender").asText()).isEqualTo("SynapseHub");
            assertThat(page.path("target").asText()).isEqualTo("hub-a");
            assertThat(page.path("payload").asText()).isEqualTo("Multi-hub log snapshot");
            assertThat(page.path("hub_id").asText()).isEqualTo("hub-b");
            assertThat(page.path("timestamp").isNumber()).isTrue();
            assertThat(page.path("log_end_seq").asLong()).isGreaterThanOrEqualTo(end);
            JsonNode events = page.path("events");
            assertThat(events.size()).isGreaterThanOrEqualTo(stored.size());
            for (int i = 0; i < stored.size(); i++) {
                StoredEvent e = stored.get(i);
                JsonNode served = events.get(i);
                assertThat(served.path("seq").asLong()).isEqualTo(e.seq());
                assertThat(served.path("kind").asText()).isEqualTo(e.kind());
                assertThat(served.get("ts").toString()).as("ts as the wire writes floats")
                        .isEqualTo(JSON.readTree(PythonFloatFormat.format(e.ts())).toString());
                assertThat(served.get("payload")).isEqualTo(JSON.readTree(e.payload()));
            }
            assertThat(events.toString()).contains("T-é").contains("𝄞");
            assertThat(page.path("next_cursor").asLong()).isEqualTo(events.get(events.size() - 1).path("seq").asLong());
        }
    }
}
