package dev.synapsehub.mesh;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The start settings of a mesh node that change what the cluster decides, so every node must
 * hold the same (docs/mesh.md, "Nodes agree on their governance settings"): name to canonical
 * value, and a SHA-256 fingerprint over the canonical form
 * {@code synapse-mesh-governance/1\n} then {@code name=value\n} per setting in name order.
 * Per-node settings (ports, paths, TLS files) and secrets (tokens) are never part of it.
 *
 * @param settings canonical values by setting name (sorted)
 */
public record MeshGovernanceSettings(SortedMap<String, String> settings) {
    /** The first line of the canonical form: a change of the form changes every fingerprint. */
    static final String FORM = "synapse-mesh-governance/1";
    /** A node started without any: every such node agrees with every other such node. */
    public static final MeshGovernanceSettings NONE = new MeshGovernanceSettings(new TreeMap<>());
    /** The ownership map's setting: its presence makes every claim governed (the gate reads it). */
    public static final String NAMESPACE_OWNER = "namespace_owner";
    /** The operator-relay routes' setting. */
    public static final String RELAY_PEER = "relay_peer";
    /** The relay policy's reason flag. */
    public static final String REQUIRE_RELAY_REASON = "require_relay_reason";
    /** The relay policy's two-person flag. */
    public static final String REQUIRE_TWO_PERSON_RELAY = "require_two_person_relay";

    public MeshGovernanceSettings {
        TreeMap<String, String> copy = new TreeMap<>();
        settings.forEach((name, value) -> {
            if (name == null || name.isEmpty() || !name.matches("[a-z0-9_]+")) {
                throw new IllegalArgumentException("a governance setting name is lower-case snake_case: '" + name + "'");
            }
            if (value == null) {
                throw new IllegalArgumentException("governance setting " + name + " has no value");
            }
            copy.put(name, value);
        });
        settings = java.util.Collections.unmodifiableSortedMap(copy);
    }

    /** Settings from {@code values}, each already canonical (see the helpers below). */
    public static MeshGovernanceSettings of(Map<String, String> values) {
        return new MeshGovernanceSettings(new TreeMap<>(values));
    }

    /** A set's canonical value: its members sorted, comma-separated (order of the flags does not matter). */
    public static String set(Collection<String> members) {
        return String.join(",", new TreeSet<>(members));
    }

    /** A map's canonical value: {@code key=value} pairs sorted by key, comma-separated. */
    public static String map(Map<String, String> pairs) {
        List<String> out = new ArrayList<>();
        new TreeMap<>(pairs).forEach((k, v) -> out.add(k + "=" + v));
        return String.join(",", out);
    }

    /**
     * A number's canonical value: plain decimal, no exponent, no trailing zeros ({@code 90}, {@code 90.0}
     * and {@code 9e1} given as flags are one value, {@code 0.5} stays {@code 0.5}).
     */
    public static String number(double value) {
        return java.math.BigDecimal.valueOf(value).stripTrailingZeros().toPlainString();
    }

    /** The canonical form the fingerprint is taken over (values escaped so a line is always one setting). */
    public String canonical() {
        StringBuilder b = new StringBuilder(FORM).append('\n');
        settings.forEach((name, value) -> b.append(name).append('=').append(escape(value)).append('\n'));
        return b.toString();
    }

    /** {@code sha256:} and the lower-case hex SHA-256 of {@link #canonical()}. */
    public String fingerprint() {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(canonical().getBytes(StandardCharsets.UTF_8));
            return "sha256:" + HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }

    /** The settings as one log line: {@code name=value; ...} ({@code (none)} when there are none). */
    public String effective() {
        if (settings.isEmpty()) {
            return "(none)";
        }
        StringBuilder b = new StringBuilder();
        settings.forEach((name, value) -> b.append(b.length() == 0 ? "" : "; ").append(name).append('=')
                .append(escape(value)));
        return b.toString();
    }

    /** The names whose values differ from {@code other}'s (set on one side only counts), sorted. */
    public List<String> differing(MeshGovernanceSettings other) {
        TreeSet<String> names = new TreeSet<>(settings.keySet());
        names.addAll(other.settings.keySet());
        return names.stream().filter(n -> !java.util.Objects.equals(settings.get(n), other.settings.get(n))).toList();
    }

    /** The value of {@code name}, or null when not set. */
    public String get(String name) {
        return settings.get(name);
    }

    private static String escape(String value) {
        return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r");
    }
}
