package dev.synapsehub.federation.trust;

/** Who supplied a peering, when it was imported (epoch seconds) and which operator confirmed it (contract F2). */
public record Provenance(String source, double importedAt, String confirmedBy) {
}
