package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code synapse-hub federation rotate BUNDLE} (contract F2.1): new expiry, keys and pins; the previous bundle kept. */
class FederationRotateCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private String pinA;
    private String pinB;

    private Path bundle() throws Exception {
        pinA = TestCertificates.authority("ca").issue("hub-a").pin().text();
        pinB = TestCertificates.authority("ca2").issue("hub-a-2027").pin().text();
        Path bundle = dir.resolve("bundle.json");
        Files.writeString(bundle, "{\"domain_id\":\"a.example\",\"namespaces\":[\"proj\"],\"certificate_pins\":[\""
                + pinA + "\"],\"signing_key_ids\":[\"proj:hub-a:2026\"],\"scope_grants\":[{\"verb\":\"claim\","
                + "\"namespace\":\"proj\"}],\"expires_at\":null}");
        return bundle;
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    @Test
    void aRotationSetsANewExpiryKeepsTheRestAndKeepsThePreviousFile() throws Exception {
        Path bundle = bundle();
        String before = Files.readString(bundle);
        String oldFingerprint = CliTest.run("federation", "offer", bundle.toString()).out();
        double start = System.currentTimeMillis() / 1000.0;
        CliTest.Run run = CliTest.run("federation", "rotate", bundle.toString());
        double end = System.currentTimeMillis() / 1000.0;
        assertThat(run.code()).as(run.err()).isEqualTo(ExitCodes.OK);
        assertThat(run.out()).contains("rotated bundle " + bundle + "; the previous one is kept at " + bundle + ".prev")
                .contains("domain: a.example").containsPattern("bundle fingerprint: sha256:[0-9a-f]{64}");

        Path prev = dir.resolve("bundle.json.prev");
        assertThat(Files.readString(prev)).isEqualTo(before);
        JsonNode rotated = JSON.readTree(Files.readString(bundle));
        double expires = rotated.get("expires_at").asDouble();
        assertThat(expires).isBetween(Math.floor(start) + 90 * 86400.0, Math.floor(end) + 90 * 86400.0);
        assertThat(strings(rotated.get("certificate_pins"))).containsExactly(pinA);
        assertThat(strings(rotated.get("signing_key_ids"))).containsExactly("proj:hub-a:2026");
        assertThat(strings(rotated.get("namespaces"))).containsExactly("proj");
        assertThat(rotated.get("scope_grants").get(0).get("verb").asText()).isEqualTo("claim");
        assertThat(rotated.get("revoked").asBoolean()).isFalse();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(bundle))).isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(prev))).isEqualTo("rw-------");

        CliTest.Run offered = CliTest.run("federation", "offer", bundle.toString());
        assertThat(offered.code()).as(offered.err()).isEqualTo(ExitCodes.OK);
        assertThat(offered.out()).doesNotContain("expires: never").isNotEqualTo(oldFingerprint);
        // the rotated bundle imports like any other
        CliTest.Run imported = CliTest.run("federation", "import", bundle.toString(), "--confirmed-by", "alice",
                "--store", dir.resolve("federation.json").toString());
        assertThat(imported.code()).as(imported.err()).isEqualTo(ExitCodes.OK);
    }

    @Test
    void keysAndPinsAreAddedAndRetiredWithTheLifetimeAndBackupAsGiven() throws Exception {
        Path bundle = bundle();
        String before = Files.readString(bundle);
        Path backup = dir.resolve("backups/bundle-2026.json");
        double start = System.currentTimeMillis() / 1000.0;
        CliTest.Run run = CliTest.run("federation", "rotate", bundle.toString(), "--lifetime-days", "30",
                "--add-signing-key", "proj:hub-a:2027", "--retire-signing-key", "proj:hub-a:2026",
                "--add-pin", pinB, "--retire-pin", pinA, "--backup", backup.toString());
        assertThat(run.code()).as(run.err()).isEqualTo(ExitCodes.OK);
        assertThat(Files.readString(backup)).isEqualTo(before);
        assertThat(dir.resolve("bundle.json.prev")).doesNotExist();
        JsonNode rotated = JSON.readTree(Files.readString(bundle));
        assertThat(strings(rotated.get("certificate_pins"))).containsExactly(pinB);
        assertThat(strings(rotated.get("signing_key_ids"))).containsExactly("proj:hub-a:2027");
        assertThat(rotated.get("expires_at").asDouble()).isBetween(Math.floor(start) + 30 * 86400.0,
                Math.floor(start) + 31 * 86400.0);
        assertThat(run.out()).contains("certificate pins: " + pinB).contains("signing key ids: proj:hub-a:2027");
    }

    @Test
    void aRefusedRotationNamesTheProblemAndWritesNothing() throws Exception {
        Path bundle = bundle();
        String before = Files.readString(bundle);
        List<List<String>> refused = List.of(
                List.of("--retire-pin", "sha256:" + "0".repeat(64)),
                List.of("--add-pin", pinA.toUpperCase(java.util.Locale.ROOT).replace("SHA256:", "sha256:")),
                List.of("--add-pin", "md5:abc"),
                List.of("--add-pin", pinA),
                List.of("--retire-pin", pinA),
                List.of("--retire-signing-key", "proj:hub-a:2026"),
                List.of("--retire-signing-key", "nope"),
                List.of("--lifetime-days", "0"));
        List<String> expected = List.of("cannot retire certificate pin", "--add-pin must be sha256:<64 lowercase hex digits>",
                "--add-pin must be sha256:", "the bundle already has it", "would leave no certificate pin",
                "would leave no signing key id", "cannot retire signing key 'nope'", "--lifetime-days must be");
        for (int i = 0; i < refused.size(); i++) {
            List<String> args = new ArrayList<>(List.of("federation", "rotate", bundle.toString()));
            args.addAll(refused.get(i));
            CliTest.Run run = CliTest.run(args.toArray(String[]::new));
            assertThat(run.code()).as(String.valueOf(refused.get(i))).isEqualTo(ExitCodes.USAGE);
            assertThat(run.err()).as(String.valueOf(refused.get(i))).contains(expected.get(i));
            assertThat(Files.readString(bundle)).isEqualTo(before);
            assertThat(dir.resolve("bundle.json.prev")).doesNotExist();
        }
        Files.writeString(bundle, "{\"domain_id\":\"a.example\",\"surprise\":1}");
        CliTest.Run broken = CliTest.run("federation", "rotate", bundle.toString());
        assertThat(broken.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(broken.err()).contains("unknown fields: surprise");
        assertThat(dir.resolve("bundle.json.prev")).doesNotExist();
    }
}
