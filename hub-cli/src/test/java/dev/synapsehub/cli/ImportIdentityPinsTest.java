package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.net.wire.CanonicalJson;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.UUID;

import static dev.synapsehub.cli.CliTest.run;
import static dev.synapsehub.cli.ReferenceDb.JSON;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code synapse-hub import --identity-pins}: the reference hub's pin file (contract A2.5) comes
 * across as this journal's identity pins, which a hub started on it enforces over the wire
 * (close 4013 for a pinned name without its key); its {@code identity_pin_reclaim} audit rows are
 * carried with it; a malformed pin file refuses the import and writes nothing.
 */
class ImportIdentityPinsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    private static String rawKey(KeyPair pair) {
        byte[] der = pair.getPublic().getEncoded();
        return Base64.getEncoder().encodeToString(Arrays.copyOfRange(der, der.length - 32, der.length));
    }

    /** A registration heartbeat signed with {@code pair} as reference clients sign it (A2.2, version 1). */
    private static ObjectNode signedRegistration(String sender, String keyId, KeyPair pair) throws Exception {
        ObjectNode f = HubClient.requestFrame(sender, "heartbeat");
        f.put("payload", "online");
        f.put("identity_public_key", rawKey(pair));
        ObjectNode sig = f.putObject("signature");
        sig.put("version", 1).put("key_id", keyId).put("algorithm", "ed25519").put("nonce", UUID.randomUUID().toString())
                .put("sequence", 1).put("signed_at", System.currentTimeMillis() / 1000.0);
        Signature s = Signature.getInstance("Ed25519");
        s.initSign(pair.getPrivate());
        s.update(CanonicalJson.write(f, false).getBytes(StandardCharsets.UTF_8));
        sig.put("value", Base64.getEncoder().encodeToString(s.sign()));
        return f;
    }

    private static ObjectNode reclaimAudit(String status, Long approvedSeq) {
        ObjectNode o = JSON.createObjectNode();
        o.put("operator", "ops/root").put("operator_key_id", "machine-root").put("pin_name", "proj/gone")
                .put("expected_key_id", "machine-gone").put("reason", "laptop lost").put("break_glass", false)
                .put("owner_online", false).put("lease_live", false).put("stale_owner_reclaimable", false)
                .put("status", status).put("applied", approvedSeq != null);
        if (approvedSeq != null) {
            o.put("approved_seq", approvedSeq).put("evicted_live_socket", false);
        }
        return o;
    }

    @Test
    void thePinFileComesAcrossAndAHubOnTheResultEnforcesIt(@TempDir Path dir) throws Exception {
        double t = System.currentTimeMillis() / 1000.0;
        KeyPair ann = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        Path source = dir.resolve("other.db");
        try (ReferenceDb db = new ReferenceDb(source)) {
            db.event(t - 50, "identity_pin_reclaim", reclaimAudit("approved", null));   // 1
            db.event(t - 50, "identity_pin_reclaim", reclaimAudit("applied", 1L));      // 2
        }
        Path pins = dir.resolve("identity-pins.json");
        Files.writeString(pins, "{\n  \"pins\": {\n    \"proj/ann\": {\n      \"key_id\": \"machine-ann\",\n"
                + "      \"pinned_at\": " + (t - 100) + ",\n      \"public_key\": \"" + rawKey(ann) + "\"\n    }\n  }\n}\n");
        Path target = dir.resolve("hub.db");

        CliTest.Run without = run("import", "--from", source.toString(), "--db", target.toString(), "--dry-run");
        assertThat(without.code()).as(without.err()).isEqualTo(ExitCodes.OK);
        assertThat(without.out()).containsPattern("identity_pin_reclaim +2 +audit record of a reclaim")
                .contains("identity pins 0");

        CliTest.Run imported = run("import", "--from", source.toString(), "--db", target.toString(),
                "--identity-pins", pins.toString());
        assertThat(imported.code()).as(imported.err()).isEqualTo(ExitCodes.OK);
        assertThat(imported.out()).contains("carried  2 events").containsPattern("identity_pin_reclaim +2\\b")
                .containsPattern("identity_pin +1 +\\(from the --identity-pins file, after the last seq\\)")
                .contains("identity pins 1");

        hub.start("--port", "0", "--db", target.toString());
        try (HubClient unsigned = HubClient.connect(URI.create(hub.url()), WAIT)) {
            ObjectNode first = HubClient.requestFrame("proj/ann", "heartbeat");
            unsigned.send(first);
            JsonNode error = unsigned.await(f -> f.has("verification_result"), WAIT);
            assertThat(error.path("verification_result").asText()).isEqualTo("signature missing");
            assertThat(error.path("payload").asText()).startsWith("identity pin: name 'proj/ann' is pinned to key "
                    + "machine-ann (signature missing).").contains("after inspecting " + target);
            assertThat(unsigned.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4013, "identity pin mismatch"));
        }
        try (HubClient owner = HubClient.connect(URI.create(hub.url()), WAIT)) {
            owner.send(signedRegistration("proj/ann", "machine-ann", ann));
            assertThat(owner.awaitWhileOpen(f -> "presence_update".equals(f.path("type").asText())
                    && "proj/ann".equals(f.path("agent").asText()), WAIT)).isNotNull();
        }
        try (HubClient other = HubClient.connect(URI.create(hub.url()), WAIT)) {
            KeyPair stranger = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            other.send(signedRegistration("proj/ann", "machine-stranger", stranger));
            assertThat(other.await(f -> f.has("verification_result"), WAIT).path("verification_result").asText())
                    .isEqualTo("unknown_key");
            assertThat(other.awaitClose(WAIT).code()).isEqualTo(4013);
        }
    }

    @Test
    void aMalformedPinFileRefusesTheImportAndWritesNothing(@TempDir Path dir) throws Exception {
        double t = System.currentTimeMillis() / 1000.0;
        Path source = dir.resolve("other.db");
        try (ReferenceDb db = new ReferenceDb(source)) {
            db.event(t, "claim", ReferenceDb.claim("a", "proj/x", 1, 0, t, t + 600, ""));
        }
        Path pins = dir.resolve("identity-pins.json");
        Path target = dir.resolve("hub.db");
        String[][] bad = {
            {"{\"pins\": {\"proj/ann\": {\"key_id\": \"k\", \"pinned_at\": 1.0, \"public_key\": \"short\"}}}",
                "public_key"},
            {"{\"pins\": {\"proj/ann\": {\"key_id\": \"\", \"pinned_at\": 1.0, \"public_key\": \""
                + Base64.getEncoder().encodeToString(new byte[32]) + "\"}}}", "key_id"},
            {"{\"pins\": {\"proj/ann\": {\"key_id\": \"k\", \"public_key\": \""
                + Base64.getEncoder().encodeToString(new byte[32]) + "\"}}}", "pinned_at"},
            {"{\"proj/ann\": {}}", "expected {\"pins\""},
            {"not json", "cannot read it as JSON"},
        };
        for (String[] b : bad) {
            Files.writeString(pins, b[0]);
            CliTest.Run refused = run("import", "--from", source.toString(), "--db", target.toString(),
                    "--identity-pins", pins.toString());
            assertThat(refused.code()).as(b[0]).isEqualTo(ExitCodes.DATA_ERROR);
            assertThat(refused.err()).contains("--identity-pins " + pins).contains(b[1]).contains("Nothing was written.");
            assertThat(Files.exists(target)).as("a refusal writes nothing").isFalse();
        }
    }
}
