package dev.synapsehub.federation.trust;

import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every start-up refusal of contract F3, each naming the file and the fix; a valid policy loads. */
class ServingPolicyLoadTest {
    @TempDir
    Path dir;
    Pki pki;
    Path policy;
    String pin;

    @BeforeEach
    void validPolicy() throws Exception {
        pki = new Pki(dir);
        pin = pki.hub("hub-a").client().pin().text();
        policy = TrustFiles.servingPolicy(dir.resolve("b"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "proj:hub-a:2026", List.of(pin))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "proj:hub-a:2026")));
    }

    private void policyText(String json) throws Exception {
        TrustFiles.rewrite(policy, json);
    }

    private static final String STORE = "\"federation_store\":\"federation.json\",\"client_ca_file\":\"client-ca.pem\"";
    private static final String GRANT = "{\"sender\":\"hub-a\",\"domain_id\":\"a.example\",\"namespace\":\"proj\","
            + "\"signing_key_id\":\"proj:hub-a:2026\"}";

    private void refused(String contractText) {
        assertThatThrownBy(() -> ServingPolicy.load(policy)).isInstanceOf(TrustFileException.class)
                .hasMessageContaining(contractText);
    }

    @Test
    void aValidPolicyLoadsWithItsGrantStoreAndCa() throws Exception {
        ServingPolicy p = ServingPolicy.load(policy);
        assertThat(p.grant("hub-a")).isPresent();
        assertThat(p.store().record("a.example").orElseThrow().certificatePins()).containsExactly(pin);
        assertThat(p.clientCaFile()).isEqualTo(dir.resolve("b/client-ca.pem"));
    }

    @Test
    void modesOtherThanOwnerOnlyAreRefusedWithTheChmodFix() throws Exception {
        Files.setPosixFilePermissions(policy, PosixFilePermissions.fromString("rw-r--r--"));
        refused("--multihub-serving-policy: " + policy + " is accessible by other users (mode 644); a secret file "
                + "must be owner-only — run: chmod 600 " + policy);
        Files.setPosixFilePermissions(policy, PosixFilePermissions.fromString("rw-------"));
        Path store = dir.resolve("b/federation.json");
        Files.setPosixFilePermissions(store, PosixFilePermissions.fromString("rw-r--r--"));
        refused("multi-hub federation store: " + store + " is accessible by other users (mode 644)");
        Files.setPosixFilePermissions(store, PosixFilePermissions.fromString("rw-------"));
        Path ca = dir.resolve("b/client-ca.pem");
        Files.setPosixFilePermissions(ca, PosixFilePermissions.fromString("rw-r-----"));
        refused("multi-hub client CA: " + ca + " is accessible by other users (mode 640)");
    }

    @Test
    void aSymlinkAnywhereOnThePathAndAMissingStoreAreRefused() throws Exception {
        Path link = dir.resolve("link.json");
        Files.createSymbolicLink(link, policy);
        assertThatThrownBy(() -> ServingPolicy.load(link))
                .hasMessageContaining("--multihub-serving-policy: cannot securely open " + link
                        + ": Too many levels of symbolic links");
        Path dirLink = dir.resolve("blink");
        Files.createSymbolicLink(dirLink, dir.resolve("b"));
        assertThatThrownBy(() -> ServingPolicy.load(dirLink.resolve("serving-policy.json")))
                .hasMessageContaining("Too many levels of symbolic links");
        Files.delete(dir.resolve("b/federation.json"));
        refused("multi-hub federation store: cannot securely open " + dir.resolve("b/federation.json")
                + ": No such file or directory");
        refused("(named by federation_store in " + policy + ": import a peer's bundle to create it, synapse-hub"
                + " federation import BUNDLE --confirmed-by YOU --store " + dir.resolve("b/federation.json")
                + ", or correct the path)");
    }

    @Test
    void aSecondHardLinkIsRefused() throws Exception {
        Files.createLink(dir.resolve("hard.json"), policy);
        refused("has 2 hard links");
    }

    @Test
    void versionFieldsAndRepeatsAreStrict() throws Exception {
        policyText("{\"version\":2," + STORE + ",\"grants\":[" + GRANT + "]}");
        refused("unsupported multi-hub serving policy version: 2");
        policyText("{\"version\":1," + STORE + ",\"grants\":[" + GRANT + "],\"extra\":1}");
        refused("multi-hub serving policy has unknown fields: extra");
        policyText("{\"version\":1,\"federation_store\":\"federation.json\",\"grants\":[" + GRANT + "]}");
        refused("multi-hub serving policy is missing fields: client_ca_file");
        policyText("{\"version\":1,\"version\":1," + STORE + ",\"grants\":[" + GRANT + "]}");
        refused("multi-hub serving policy repeats field 'version'");
        policyText("{\"version\":1," + STORE + ",\"grants\":[]}");
        refused("multi-hub serving policy grants must be a non-empty list");
        policyText("{\"version\":1," + STORE + ",\"grants\":[" + GRANT + "," + GRANT + "]}");
        refused("serving policy grants sender 'hub-a' twice");
    }

    @Test
    void grantsAreCheckedAgainstTheirPeering() throws Exception {
        policyText("{\"version\":1," + STORE + ",\"grants\":[" + GRANT.replace("a.example", "z.example") + "]}");
        refused("serving grant 'hub-a' names unknown federation domain 'z.example'");
        refused("synapse-hub federation import BUNDLE --confirmed-by YOU --store " + dir.resolve("b/federation.json"));
        policyText("{\"version\":1," + STORE + ",\"grants\":[" + GRANT.replace("\"proj\"", "\"other\"") + "]}");
        refused("serving grant 'hub-a' namespace is absent from its federation peering");
        policyText("{\"version\":1," + STORE + ",\"grants\":[" + GRANT.replace("proj:hub-a:2026", "k2") + "]}");
        refused("serving grant 'hub-a' signing key is absent from its federation peering");
        TrustFiles.servingPolicy(dir.resolve("b"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "proj:hub-a:2026", List.of())),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "proj:hub-a:2026")));
        refused("serving grant 'hub-a' federation peering has no certificate pin");
    }

    @Test
    void aPolicyThatIsNotValidJsonSaysWhereWithoutTheParsersInternals() throws Exception {
        policyText("{\"version\": 1,\n");
        assertThatThrownBy(() -> ServingPolicy.load(policy)).isInstanceOf(TrustFileException.class)
                .hasMessageContaining("multi-hub serving policy is not valid JSON (at line 2, column 1: Unexpected end-of-input")
                .hasMessageNotContaining("Source:").hasMessageNotContaining("StreamReadFeature");
        policyText("[1]");
        refused("multi-hub serving policy is not a JSON object (in ");
    }

    @Test
    void everyRefusalNamesTheFileAndAFix() throws Exception {
        policyText("{\"version\":1," + STORE + ",\"grants\":[]}");
        assertThatThrownBy(() -> ServingPolicy.load(policy)).hasMessageContaining("(in " + policy + ": add one");
    }

    @Test
    void aRevokedOrExpiredPeeringStillLoads() throws Exception {
        PeeringRecord revoked = TrustFiles.peering("a.example", "proj", "proj:hub-a:2026", List.of(pin)).revokedCopy();
        TrustFiles.servingPolicy(dir.resolve("b"), pki.clientCaFile(), List.of(revoked),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "proj:hub-a:2026")));
        assertThat(ServingPolicy.load(policy).store().record("a.example").orElseThrow().revoked()).isTrue();
    }

    @Test
    void theStoreRefusesARepeatedDomainAndNonFiniteNumbers() throws Exception {
        Path store = dir.resolve("b/federation.json");
        String rec = "{\"domain_id\":\"a.example\",\"namespaces\":[\"proj\"],\"certificate_pins\":[\"" + pin
                + "\"],\"signing_key_ids\":[\"k\"],\"scope_grants\":[],\"expires_at\":null,\"revoked\":false,"
                + "\"provenance\":{\"source\":\"s\",\"imported_at\":1.0,\"confirmed_by\":\"alice\"}}";
        TestCertificates.writePrivate(store, "{\"version\":1,\"records\":[" + rec + "," + rec + "]}");
        refused("names domain 'a.example' twice");
        TestCertificates.writePrivate(store, "{\"version\":1,\"records\":[" + rec.replace("\"expires_at\":null",
                "\"expires_at\":true") + "]}");
        refused("field 'expires_at' must be a finite number");
    }
}
