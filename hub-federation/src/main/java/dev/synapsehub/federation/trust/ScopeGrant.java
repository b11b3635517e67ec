package dev.synapsehub.federation.trust;

/** A bounded verb for the federation frame gate (contract F2); the serving path ignores it. */
public record ScopeGrant(String verb, String namespace) {
}
