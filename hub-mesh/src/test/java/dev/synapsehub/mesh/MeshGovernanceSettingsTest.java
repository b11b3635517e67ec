package dev.synapsehub.mesh;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The canonical form and fingerprint of a mesh node's governance settings (docs/mesh.md). */
class MeshGovernanceSettingsTest {

    @Test
    void theFingerprintIsSha256OverTheDocumentedCanonicalForm() throws Exception {
        MeshGovernanceSettings s = MeshGovernanceSettings.of(Map.of("namespace_owner", "lab=hub-a,proj=hub-m",
                "hub_id", "hub-m"));
        String canonical = "synapse-mesh-governance/1\nhub_id=hub-m\nnamespace_owner=lab=hub-a,proj=hub-m\n";
        assertThat(s.canonical()).isEqualTo(canonical);
        String expected = "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest(canonical.getBytes(StandardCharsets.UTF_8)));
        assertThat(s.fingerprint()).isEqualTo(expected);
        assertThat(s.effective()).isEqualTo("hub_id=hub-m; namespace_owner=lab=hub-a,proj=hub-m");
    }

    @Test
    void theOrderOfTheFlagsDoesNotMatterButEveryValueDoes() {
        MeshGovernanceSettings a = MeshGovernanceSettings.of(Map.of(
                "namespace_owner", MeshGovernanceSettings.map(Map.of("proj", "hub-m", "lab", "hub-a")),
                "multihub_watch", MeshGovernanceSettings.set(List.of("hub-b", "hub-a"))));
        MeshGovernanceSettings b = MeshGovernanceSettings.of(Map.of(
                "multihub_watch", MeshGovernanceSettings.set(List.of("hub-a", "hub-b")),
                "namespace_owner", MeshGovernanceSettings.map(Map.of("lab", "hub-a", "proj", "hub-m"))));
        assertThat(a.fingerprint()).isEqualTo(b.fingerprint());
        assertThat(a.differing(b)).isEmpty();

        MeshGovernanceSettings c = MeshGovernanceSettings.of(Map.of(
                "multihub_watch", MeshGovernanceSettings.set(List.of("hub-a")),
                "namespace_owner", a.get("namespace_owner"), "default_delivery", "scoped"));
        assertThat(c.fingerprint()).isNotEqualTo(a.fingerprint());
        assertThat(a.differing(c)).containsExactly("default_delivery", "multihub_watch");
    }

    @Test
    void aNumbersCanonicalValueIsPlainWithoutTrailingZeros() {
        assertThat(MeshGovernanceSettings.number(90.0)).isEqualTo("90");
        assertThat(MeshGovernanceSettings.number(9e1)).isEqualTo("90");
        assertThat(MeshGovernanceSettings.number(0.5)).isEqualTo("0.5");
        assertThat(MeshGovernanceSettings.number(1e-7)).isEqualTo("0.0000001");
        assertThat(MeshGovernanceSettings.number(1e20)).isEqualTo("100000000000000000000");
    }

    @Test
    void aValueCannotForgeAnotherSettingsLine() {
        MeshGovernanceSettings forged = MeshGovernanceSettings.of(Map.of("hub_id", "hub-m\nnamespace_owner=x=y"));
        MeshGovernanceSettings honest = MeshGovernanceSettings.of(Map.of("hub_id", "hub-m", "namespace_owner", "x=y"));
        assertThat(forged.fingerprint()).isNotEqualTo(honest.fingerprint());
        assertThatThrownBy(() -> MeshGovernanceSettings.of(Map.of("Hub-Id", "x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("snake_case");
    }

    @Test
    void anAnswerCarriesTheSettingsAndTheFingerprintMustMatchThem() {
        MeshSettingsCheck check = new MeshSettingsCheck("n1", null, null, () -> null, 1000);
        MeshGovernanceSettings s = MeshGovernanceSettings.of(Map.of("hub_id", "hub-m", "namespace_owner", "proj=hub-m"));
        check.settings(s);
        var answer = check.answer();
        assertThat(MeshSettingsCheck.read(answer)).isEqualTo(s);
        assertThat(answer.path("state").asText()).isEqualTo("unknown");
        answer.put("fingerprint", MeshGovernanceSettings.NONE.fingerprint());
        assertThatThrownBy(() -> MeshSettingsCheck.read(answer)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("do not match its fingerprint");
    }
}
