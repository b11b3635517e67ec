package dev.synapsehub.net.session;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * Open sockets and the admission caps of contract §3.2 (clients, per host, unauthenticated).
 * Admitting and forgetting take this object's monitor; reads (broadcast audience, client count)
 * take none: the sockets are a concurrent map in connection order.
 */
final class Admission {
    private final ConcurrentSkipListMap<Long, Session> sockets = new ConcurrentSkipListMap<>();
    private final Map<String, Integer> perHost = new HashMap<>();
    private final int maxClients;
    private final int maxPerHost;
    private final int maxUnauth;
    private final boolean secured;
    private int open; // sockets.size() is a walk over the map; this is the same number, kept under the monitor

    Admission(int maxClients, int maxPerHost, int maxUnauth, boolean secured) {
        this.maxClients = maxClients;
        this.maxPerHost = maxPerHost;
        this.maxUnauth = maxUnauth;
        this.secured = secured;
    }

    /** Admission checks in contract order; null when admitted (and counted). */
    synchronized SessionRegistry.Refusal admit(Session session) {
        if (open >= maxClients) {
            return new SessionRegistry.Refusal(4013, "hub at capacity");
        }
        int fromHost = perHost.getOrDefault(session.remoteHost(), 0);
        if (maxPerHost > 0 && fromHost >= maxPerHost) {
            return new SessionRegistry.Refusal(4015, "too many connections from host");
        }
        if (secured) {
            long unauth = sockets.values().stream().filter(s -> !s.authenticated()).count();
            if (unauth >= maxUnauth) {
                return new SessionRegistry.Refusal(4014, "too many unauthenticated connections");
            }
        } else {
            session.markAuthenticated();
        }
        if (sockets.putIfAbsent(session.id(), session) == null) {
            open++;
            perHost.merge(session.remoteHost(), 1, Integer::sum);
        }
        return null;
    }

    /** Forgets a closed socket; false when it was never admitted (or already forgotten). */
    synchronized boolean remove(Session session) {
        if (!sockets.remove(session.id(), session)) {
            return false;
        }
        open--;
        perHost.computeIfPresent(session.remoteHost(), (h, n) -> n <= 1 ? null : n - 1);
        return true;
    }

    /** Admitted sockets, closing ones included. */
    synchronized int size() {
        return open;
    }

    /** Open sockets: a socket the hub is closing is gone at once, though its TCP close may lag. */
    int connectedClients() {
        int count = 0;
        for (Session s : sockets.values()) {
            if (!s.closing()) {
                count++;
            }
        }
        return count;
    }

    /** Sockets that may receive broadcasts: authenticated and not closing, in connection order. */
    List<Session> audience() {
        List<Session> out = new ArrayList<>();
        for (Session s : sockets.values()) {
            if (s.authenticated() && !s.closing()) {
                out.add(s);
            }
        }
        return out;
    }
}
