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
    private final Map<String, Made> links = new ConcurrentHashMap<>();
    private final Map<String, Expected> expected = new ConcurrentHashMap<>();

    /** A link and the settings it was made with. */
    private record Made(ClientTls tls, String token, PeerLink link) {
        /** Whether this link was made with {@code tls} and {@code token} (else a new one replaces it). */
        boolean serves(ClientTls tls, String token) {
            return java.util.Objects.equals(this.tls, tls) && java.util.Objects.equals(this.token, token);
        }
    }

    /** What the first route declared for a URI. */
    private record Expected(String route, ClientTls tls, String token) {
    }

    private final ClientIdentity identity;

    public PeerLinks(String localHubId) {
        this(localHubId, ClientIdentity.NONE);
    }

    /** {@code identity}: the client certificate the links present, checked by its watcher about once a second. */
    public PeerLinks(String localHubId, ClientIdentity identity) {
        this.localHubId = localHubId;
        this.identity = identity;
    }

    /**
     * Declares, before any link is made, that {@code route} reaches {@code uri} with {@code tls} and
     * {@code token}. Routes to one URI share one link (F9.4), so a second route that names the same
     * URI with another pin, client certificate or token would silently use the first one's: it is
     * refused instead, naming both.
     *
     * @throws IllegalArgumentException when an earlier route declared other settings for {@code uri}
     */
    public void expect(String route, URI uri, ClientTls tls, String token) {
        Expected mine = new Expected(route, tls, token);
        Expected prior = expected.putIfAbsent(uri.toString(), mine);
        if (prior != null && !(java.util.Objects.equals(prior.tls(), tls) && java.util.Objects.equals(prior.token(), token))) {
            throw new IllegalArgumentException(route + " and " + prior.route() + " both reach " + uri
                    + " but with a different pin, client certificate or token; routes to one peer URI share one"
                    + " link, so give them the same settings");
        }
    }

    /**
     * The link to {@code uri}, made on first use with {@code tls} and {@code token}. When the
     * routes changed (a peers file edited: another pin or token for this URI) the old link is
     * closed, failing what waits on it like a dropped connection, and a new one is made: a link
     * never goes on with a pin or token that is no longer in force.
     */
    public PeerLink link(String peer, URI uri, ClientTls tls, String token) {
        PeerLink[] stale = new PeerLink[1];
        Made made = links.compute(uri.toString(), (k, prior) -> {
            if (prior != null && prior.serves(tls, token)) {
                return prior;
            }
            stale[0] = prior == null ? null : prior.link();
            return new Made(tls, token, new PeerLink(peer, uri, tls, localHubId, token, Duration.ofSeconds(10),
                    identity));
        });
        if (stale[0] != null) {
            stale[0].close(); // outside the map's lock: closing waits for the close frame
        }
        return made.link();
    }

    /**
     * The link held for {@code uri} with this TLS and token, or null: unlike {@link #link} it
     * makes none and closes none, so it never waits.
     */
    public PeerLink held(URI uri, ClientTls tls, String token) {
        Made m = links.get(uri.toString());
        return m != null && m.serves(tls, token) ? m.link() : null;
    }

    /** Closes the links to URIs no route names any more (a peers file edited), so none stays registered on a peer. */
    public void retain(java.util.Set<String> uris) {
        links.entrySet().removeIf(e -> {
            if (uris.contains(e.getKey())) {
                return false;
            }
            PeerLink.closeInBackground(e.getValue().link()::close, URI.create(e.getKey())); // may wait for the close frame
            return true;
        });
    }

    /** The URIs this node holds a link to now (status, tests). */
    public java.util.Set<String> held() {
        return java.util.Set.copyOf(links.keySet());
    }

        @Override
    public void close() {
        links.values().forEach(m -> m.link().close());
    }
}
