package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code --federation-store} on the command line: the start-up rules of contract F8 and the gate wired into a running hub. */
class FederationFrameGateCliTest {
    private final LoopbackHub hub = new LoopbackHub();

    @TempDir
    Path dir;

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    private Path store(String name, String pin, String scopeGrants) throws Exception {
        Path file = dir.resolve(name);
        TestCertificates.writePrivate(file, "{\"version\":1,\"records\":[{\"domain_id\":\"a.example\",\"namespaces\":"
                + "[\"proj\"],\"certificate_pins\":[\"" + pin + "\"],\"signing_key_ids\":[\"proj:hub-a:2026\"],"
                + "\"scope_grants\":" + scopeGrants + ",\"expires_at\":null,\"revoked\":false,\"provenance\":"
                + "{\"source\":\"t\",\"imported_at\":1.0,\"confirmed_by\":\"alice\"}}]}");
        return file;
    }

    @Test
    void aStoreGrantingScopeWithoutMessageAuthIsRefusedAtStart() throws Exception {
        Path scoped = store("scoped.json", "sha256:" + "a".repeat(64), "[{\"verb\":\"claim\",\"namespace\":\"proj\"}]");
        CliTest.Run run = CliTest.run("--port", "0", "--federation-store", scoped.toString());
        assertThat(run.code()).as(run.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).startsWith("synapse-hub: --federation-store grants cross-domain scope but "
                + "--require-message-auth is not set; ");
    }

    @Test
    void observeOnlyWithoutAStoreIsRefusedAtStart() {
        CliTest.Run run = CliTest.run("--port", "0", "--federation-observe-only");
        assertThat(run.code()).as(run.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("synapse-hub: --federation-observe-only requires --federation-store; there is no "
                + "peering to observe.");
    }

    @Test
    void aRunningHubRefusesAPeerSignedClaimAtTheGateAndGrantsAnUnsignedOne() throws Exception {
        refusesASignedClaimAndGrantsAnUnsignedOne();
    }

    @Test
    void aMeshNodeAppliesTheGateToItsOwnSocketsToo() throws Exception {
        int raft = HubProcess.freePort(); // below the ephemeral range: no outgoing socket takes it meanwhile
        refusesASignedClaimAndGrantsAnUnsignedOne("--db", dir.resolve("n1.db").toString(), "--mesh-id", "n1",
                "--mesh-peers", "n1=127.0.0.1:" + raft);
    }

    /** Starts a hub with the gate (plus {@code extra} flags), then: a peer-signed claim refused, an unsigned one granted. */
    private void refusesASignedClaimAndGrantsAnUnsignedOne(String... extra) throws Exception {
        TestCertificates.Identity server = TestCertificates.selfSigned("hub-b");
        TestCertificates.PemPair serverFiles = server.write(dir, "server");
        TestCertificates.Authority ca = TestCertificates.authority("fed-client-ca");
        TestCertificates.Identity client = ca.issue("hub-a");
        TestCertificates.PemPair clientFiles = client.write(dir, "client");
        ca.writeCertificate(dir, "client-ca");
        Path store = store("federation.json", client.pin().text(), "[]");
        Path policy = dir.resolve("serving-policy.json"); // its client CA makes the hub ask for client certificates
        TestCertificates.writePrivate(policy, "{\"version\":1,\"federation_store\":\"federation.json\","
                + "\"client_ca_file\":\"client-ca.pem\",\"grants\":[{\"sender\":\"hub-a\",\"domain_id\":\"a.example\","
                + "\"namespace\":\"proj\",\"signing_key_id\":\"proj:hub-a:2026\"}]}");
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("--port", "0", "--hub-id", "hub-b",
                "--tls-certfile", serverFiles.cert().toString(), "--tls-keyfile", serverFiles.key().toString(),
                "--multihub-serving-policy", policy.toString(), "--federation-store", store.toString()));
        args.addAll(java.util.List.of(extra));
        HubDaemon d = hub.start(args.toArray(String[]::new));
        Duration wait = Duration.ofSeconds(10);
        try (HubClient a = HubClient.connect(URI.create("wss://127.0.0.1:" + d.port()), wait,
                ClientTls.pinned(server.pin()).withClientCertificate(clientFiles.cert(), clientFiles.key()))) {
            a.register("proj/alice", null, wait);
            ObjectNode signed = a.frame("proj/alice", "claim");
            signed.put("task_id", "T-1");
            signed.putObject("signature").put("key_id", "proj:hub-a:2026").put("algorithm", "ed25519");
            a.send(signed);
            ObjectNode refused = a.awaitType("error", wait);
            assertThat(refused.path("payload").asText()).isEqualTo("federation denied: out_of_scope");
            assertThat(refused.path("federation_reason").asText()).isEqualTo("out_of_scope");
            assertThat(refused.path("federation_domain").asText()).isEqualTo("a.example");

            ObjectNode unsigned = a.frame("proj/alice", "claim");
            unsigned.put("task_id", "T-1");
            a.send(unsigned);
            ObjectNode granted = a.await(f -> "T-1".equals(f.path("task_id").asText())
                    && f.path("type").asText().startsWith("claim_"), wait);
            assertThat(granted.path("type").asText()).as(granted.toString()).isEqualTo("claim_granted");
            assertThat(granted.path("payload").asText()).as("the refused claim applied nothing")
                    .isEqualTo("Task 'T-1' claimed by proj/alice.");
        }
    }
}
