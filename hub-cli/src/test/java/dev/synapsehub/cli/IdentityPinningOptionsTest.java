package dev.synapsehub.cli;

import dev.synapsehub.net.HubConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code --identity-pinning} (on by default, on a single hub and a mesh node alike) and {@code --acl-policy} as the hub reads them. */
class IdentityPinningOptionsTest {
    @TempDir
    Path dir;

    private static ServeOptions parse(String... args) {
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs(args);
        return command.serve;
    }

    @Test
    void pinningIsOnByDefaultOnASingleHubAndTheJournalIsThePinStore() {
        HubConfig byDefault = parse().hubConfig();
        assertThat(byDefault.identityPins().enabled()).as("on, as on the reference hub (contract 15.15)").isTrue();
        assertThat(byDefault.identityPins().pinStore()).as("memory only").isNull();
        assertThat(byDefault.identityPins().acl().grants()).isEmpty();
        Path db = dir.resolve("hub.db");
        HubConfig on = parse("--identity-pinning", "--db", db.toString()).hubConfig();
        assertThat(on.identityPins().enabled()).isTrue();
        assertThat(on.identityPins().pinStore()).isEqualTo(db.toString());
        assertThat(parse("--no-identity-pinning").hubConfig().identityPins().enabled()).isFalse();
    }

    @Test
    void theAclPolicyKeepsReclaimGrantsAndRefusesAMalformedOne() throws Exception {
        Path policy = dir.resolve("acl.json");
        Files.writeString(policy, "{\"rules\": [{\"permission\": \"identity-pin-reclaim\", \"target_kind\": \"agent\","
                + " \"target_pattern\": \"p/*\", \"namespace\": \"ops\"}, {\"permission\": \"relay\"}]}");
        var acl = parse("--acl-policy", policy.toString()).hubConfig().identityPins().acl();
        assertThat(acl.grants()).hasSize(1);
        assertThat(acl.allows("ops/root", "p/ann")).isTrue();
        assertThat(acl.allows("dev/root", "p/ann")).as("another project").isFalse();
        assertThat(acl.allows("root", "p/ann")).as("no project").isFalse();
        assertThat(acl.allows("ops/root", "q/ann")).isFalse();

        Files.writeString(policy, "{\"rules\": [{\"permission\": \"identity-pin-reclaim\", \"target_kind\": \"task\","
                + " \"target_pattern\": \"*\"}]}");
        assertThatThrownBy(() -> parse("--acl-policy", policy.toString()).hubConfig())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("target_kind");
        Files.writeString(policy, "not json");
        assertThatThrownBy(() -> parse("--acl-policy", policy.toString()).hubConfig())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--acl-policy");
    }

    @Test
    void aMeshNodePinsByDefaultLikeASingleHubAndMayTurnItOff() {
        String db = dir.resolve("m.db").toString();
        String[] mesh = {"--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1:1", "--db", db};
        assertThat(parse(mesh).hubConfig().identityPins().enabled()).as("pins are replicated (docs/mesh.md)").isTrue();
        assertThat(parse(mesh).hubConfig().identityPins().pinStore()).isEqualTo(db);
        String[] on = java.util.stream.Stream.concat(java.util.stream.Stream.of("--identity-pinning"),
                java.util.Arrays.stream(mesh)).toArray(String[]::new);
        assertThat(parse(on).hubConfig().identityPins().enabled()).isTrue();
        String[] off = java.util.stream.Stream.concat(java.util.stream.Stream.of("--no-identity-pinning"),
                java.util.Arrays.stream(mesh)).toArray(String[]::new);
        assertThat(parse(off).hubConfig().identityPins().enabled()).isFalse();
    }

    @Test
    void theOperatorBundlePostureNeedsBothFlagsAndReadsTheBundle() throws Exception {
        assertThat(parse().hubConfig().identityPins().requiresBinding()).as("trust on first use by default").isFalse();
        assertThatThrownBy(() -> parse("--require-identity-binding").hubConfig())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--require-identity-binding needs --identity-trust FILE");
        Path trust = dir.resolve("trust.json");
        Files.writeString(trust, "{\"identities\": {\"p/ann\": {\"key_id\": \"k-ann\", \"public_key\": \""
                + java.util.Base64.getEncoder().encodeToString(new byte[32]) + "\"}}}");
        assertThatThrownBy(() -> parse("--identity-trust", trust.toString()).hubConfig())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("only with --require-identity-binding");
        var pins = parse("--require-identity-binding", "--identity-trust", trust.toString()).hubConfig().identityPins();
        assertThat(pins.requiresBinding()).isTrue();
        assertThat(pins.trust().keyOf("p/ann").orElseThrow().keyId()).isEqualTo("k-ann");
        Files.writeString(trust, "{\"identities\": {\"p/ann\": {\"key_id\": \"k-ann\"}}}");
        assertThatThrownBy(() -> parse("--require-identity-binding", "--identity-trust", trust.toString()).hubConfig())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("public_key");
    }
}
