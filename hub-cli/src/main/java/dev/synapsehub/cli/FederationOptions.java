package dev.synapsehub.cli;

import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.federation.trust.TrustFileException;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.function.Consumer;

/** The federation options of {@code synapse-hub} when it runs the hub (docs/federation.md). */
public final class FederationOptions {

    @Option(names = "--multihub-serving-policy", paramLabel = "FILE",
            description = "Serve this hub's log and decide forwarded claims for the peer hubs this JSON policy "
                    + "grants (contract 11.4): version 1, federation_store, client_ca_file, grants. Needs "
                    + "--tls-certfile/--tls-keyfile; peers must present a client certificate from client_ca_file "
                    + "whose pin their peering lists. Files must be owner-only (chmod 600), no symlinks. Edits are "
                    + "picked up without a restart; an invalid edit refuses every peer until it validates. "
                    + "Without it no peer is served.")
    Path servingPolicy;

    /**
     * The serving trust, loaded strictly; throws {@link IllegalArgumentException} with the
     * contract's refusal text (exit 2).
     */
    ServingTrust servingTrust(boolean tlsConfigured, Consumer<String> log) {
        if (servingPolicy == null) {
            return ServingTrust.none();
        }
        if (!tlsConfigured) {
            throw new IllegalArgumentException("native WSS requires both --tls-certfile and --tls-keyfile"
                    + " (--multihub-serving-policy authenticates peers by their TLS client certificate)");
        }
        try {
            return ServingTrust.load(servingPolicy, log);
        } catch (TrustFileException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }
}
