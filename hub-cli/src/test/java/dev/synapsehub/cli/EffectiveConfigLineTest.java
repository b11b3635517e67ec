package dev.synapsehub.cli;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.net.HubConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The start-up line names every effective setting once, secrets only as "set"; the listening line its scheme. */
class EffectiveConfigLineTest {
    @TempDir
    Path dir;

    @Test
    void theLineNamesTheEdgeIdentityAndMessageAuthSettings() throws Exception {
        Path acl = Files.writeString(dir.resolve("acl.json"), "{\"rules\": []}");
        Path trust = Files.writeString(dir.resolve("trust.json"), "{\"identities\": {}}");
        Path relay = dir.resolve("relay.ndjson");
        ServeOptions serve = CliTest.parsed("--max-findings-per-agent", "7", "--relay-log", relay.toString(),
                "--relay-max-lines", "9", "--allow-origin", "https://a.example", "--advertised-host", "hub.example:8876",
                "--acl-policy", acl.toString(), "--require-identity-binding", "--identity-trust", trust.toString(),
                "--message-auth-key", "k1:s3cr3t-hmac:proj/a", "--message-auth-window-seconds", "30",
                "--message-auth-replay-capacity", "1000").serve;
        HubConfig config = serve.hubConfig();
        Map<String, Object> line = serve.effectiveSummary(config, serve.registryLimits(), serve.actorSettings());
        assertThat(line).containsEntry("max_findings_per_agent", 7)
                .containsEntry("advertised_host", "hub.example:8876")
                .containsEntry("allow_origin", List.of("https://a.example"))
                .containsEntry("acl_policy", acl.toAbsolutePath());
        assertThat(line.get("relay_log").toString()).contains(relay.toAbsolutePath().toString()).contains("9 lines");
        assertThat(line.get("identity_binding").toString()).startsWith("required").contains(trust.toAbsolutePath().toString());
        assertThat(line.get("message_auth").toString()).contains("1 key(s)").contains("window 30.0 s")
                .contains("replay capacity 1000");
        assertThat(line.toString()).doesNotContain("s3cr3t-hmac");
    }

    @Test
    void theLineNamesTheFederationSettingsWithTheEffectiveWatchIntervalAndNoToken() {
        SynapseHubCommand command = CliTest.parsed("--hub-id", "syn-aaaaaaaa", "--namespace-owner", "proj=syn-aaaaaaaa",
                "--namespace-owner", "other=syn-bbbbbbbb", "--multihub-watch", "peer-b=ws://127.0.0.1:9",
                "--multihub-watch-interval", "2.5", "--multihub-watch-token", "watch-s3cr3t",
                "--claim-peer", "syn-bbbbbbbb=ws://127.0.0.1:9", "--claim-peer-token", "claim-s3cr3t",
                "--relay-peer", "syn-bbbbbbbb=ws://127.0.0.1:9", "--require-relay-reason");
        FederationSettings settings = command.federation.settings(ServingTrust.none(), "syn-aaaaaaaa", "syn-aaaaaaaa");
        Map<String, Object> line = command.federation.effectiveSummary(settings, false);
        assertThat(line.get("namespace_owners").toString()).contains("proj=syn-aaaaaaaa").contains("other=syn-bbbbbbbb");
        assertThat(line.get("multihub_watch").toString()).contains("peer-b=ws://127.0.0.1:9").contains("every 2.5 s")
                .contains("token set");
        assertThat(line.get("claim_peers").toString()).contains("syn-bbbbbbbb=ws://127.0.0.1:9").contains("token set");
        assertThat(line.get("relay_peers").toString()).contains("syn-bbbbbbbb=ws://127.0.0.1:9");
        assertThat(line).containsEntry("federation_store", "off (no frame gate)")
                .containsEntry("relay_policy", "reason required, one person")
                .containsEntry("multihub_serving_policy", "none (no peer served)");
        assertThat(line.toString()).doesNotContain("s3cr3t");
    }

    @Test
    void aStartLogsTheFederationSettingsInItsOneStartingLine() throws Exception {
        List<String> lines = daemonLines(() -> {
            try (LoopbackHub hub = new LoopbackHub()) {
                hub.start("--port", "0", "--hub-id", "syn-aaaaaaaa", "--namespace-owner", "proj=syn-aaaaaaaa",
                        "--require-two-person-relay", "--max-findings-per-agent", "11");
            }
        });
        List<String> starting = lines.stream().filter(l -> l.contains(" starting:")).toList();
        assertThat(starting).hasSize(1);
        assertThat(starting.get(0)).contains("namespace_owners={proj=syn-aaaaaaaa};")
                .contains("relay_policy=reason optional, two-person;").contains("max_findings_per_agent=11;")
                .contains("multihub_watch=none;");
    }

    @Test
    void aMeshNodeWithTlsSaysItListensOnWss() throws Exception {
        TestCertificates.PemPair tls = TestCertificates.selfSigned("mesh-node").write(dir, "server");
        String peers = "n1=127.0.0.1:" + HubProcess.freePort();
        List<String> lines = daemonLines(() -> {
            try (LoopbackHub hub = new LoopbackHub()) {
                hub.start("--port", "0", "--db", dir.resolve("n1.db").toString(), "--mesh-id", "n1", "--mesh-peers", peers,
                        "--mesh-bootstrap", "--tls-certfile", tls.cert().toString(), "--tls-keyfile", tls.key().toString());
            }
        });
        assertThat(lines).anyMatch(l -> l.startsWith("mesh node n1 listening on wss://127.0.0.1:"));
        assertThat(lines).noneMatch(l -> l.startsWith("mesh node n1 listening on ws://"));
    }

    /** Something that throws. */
    interface Action {
        void run() throws Exception;
    }

    /** The lines HubDaemon logs while {@code action} runs. */
    private static List<String> daemonLines(Action action) throws Exception {
        Logger daemonLog = (Logger) LoggerFactory.getLogger(HubDaemon.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        daemonLog.addAppender(lines);
        try {
            action.run();
        } finally {
            daemonLog.detachAppender(lines);
        }
        return lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }
}
