package dev.synapsehub.federation.link;

import dev.synapsehub.client.tls.ClientTls;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One {@link PeerLink} per peer URI, shared by the watch and claim forwarding, so this hub binds
 * its name on a peer once (contract F9.4).
 */
public final class PeerLinks implements AutoCloseable {
    private final String localHubId;
    private final Map<String, PeerLink> links = new ConcurrentHashMap<>();

    public PeerLinks(String localHubId) {
        this.localHubId = localHubId;
    }

    /** The link to {@code uri}, made on first use with {@code tls} and {@code token}. */
    public PeerLink link(String peer, URI uri, ClientTls tls, String token) {
        return links.computeIfAbsent(uri.toString(), k -> new PeerLink(peer, uri, tls, localHubId, token,
                Duration.ofSeconds(10)));
    }

    @Override
    public void close() {
        links.values().forEach(PeerLink::close);
    }
}
