package dev.synapsehub.federation.route;

import dev.synapsehub.client.tls.ClientTls;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Claim forwarding (contract §11.3, F6): a route per owning hub, the token sent with each
 * forwarded claim, the client identity presented, and the bound on the owner's answer (10 s).
 */
public record ForwardSettings(Map<String, ClaimRoute> routes, String token, Path clientCertFile, Path clientKeyFile,
                              Duration bound) {
    /** The contract's bound on a forwarded claim's answer. */
    public static final Duration BOUND = Duration.ofSeconds(10);

    public ForwardSettings {
        routes = java.util.Collections.unmodifiableMap(new TreeMap<>(routes));
    }

    /** No routes: a remote namespace is refused here. */
    public static ForwardSettings none() {
        return new ForwardSettings(Map.of(), null, null, null, BOUND);
    }

    /** Routes from a list. */
    public static Map<String, ClaimRoute> byHub(List<ClaimRoute> routes) {
        Map<String, ClaimRoute> m = new TreeMap<>();
        routes.forEach(r -> m.put(r.hubId(), r));
        return m;
    }

    /** How this hub secures its connection to {@code route}. */
    public ClientTls tlsFor(ClaimRoute route) {
        ClientTls tls = route.pin() == null ? ClientTls.NONE : ClientTls.pinned(route.pin());
        return clientCertFile == null ? tls : tls.withClientCertificate(clientCertFile, clientKeyFile);
    }
}
