package dev.synapsehub.federation.follow;

import dev.synapsehub.client.tls.CertificatePin;

import java.net.URI;

/** One {@code --multihub-watch PEER=URI}: the label its events are attributed to, where it is, and its pin (or null). */
public record WatchPeer(String label, URI uri, CertificatePin pin) {
}
