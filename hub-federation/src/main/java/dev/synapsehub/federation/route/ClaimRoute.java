package dev.synapsehub.federation.route;

import dev.synapsehub.client.tls.CertificatePin;

import java.net.URI;

/** One {@code --claim-peer HUB_ID=URI}: where claims owned by {@code hubId} are forwarded, and its pin (or null). */
public record ClaimRoute(String hubId, URI uri, CertificatePin pin) {
}
