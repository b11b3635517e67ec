package dev.synapsehub.federation.trust;

import dev.synapsehub.client.tls.CertificatePin;

import java.net.URI;

/**
 * One route to a peer hub: its name (the watched peer's label, or the owning hub's id), where it
 * is, the pin its server certificate must match (null: CA verification) and the connect token
 * sent to it (null: none).
 */
public record PeerRoute(String name, URI uri, CertificatePin pin, String token) {
    @Override
    public String toString() { // never the token
        return "PeerRoute[" + name + "=" + uri + (pin == null ? "" : ", pin " + pin.text()) + "]";
    }
}
