package dev.synapsehub.net.handler;

import java.net.URI;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** The WebSocket handshake guard of contract §3.1: trusted Host authority and Origin allow-list. */
public final class HostGuard {
    private static final Set<String> LOOPBACK = Set.of("localhost", "127.0.0.1", "::1", "::ffff:127.0.0.1");

    private final Set<String> trusted = new HashSet<>();
    private final Set<String> origins = new HashSet<>();

    public HostGuard(String bindHost, int port, String advertisedHost, List<String> allowOrigins) {
        String bind = unbracket(bindHost.toLowerCase(Locale.ROOT));
        if (LOOPBACK.contains(bind) || bind.startsWith("127.")) {
            LOOPBACK.forEach(h -> addAuthority(h, port));
        } else if (!bind.equals("0.0.0.0") && !bind.equals("::") && !bind.isEmpty()) {
            addAuthority(bind, port);
        }
        if (advertisedHost != null && !advertisedHost.isBlank()) {
            addAuthority(unbracket(advertisedHost.strip().toLowerCase(Locale.ROOT)), port);
        }
        for (String origin : allowOrigins) {
            String n = normaliseOrigin(origin);
            if (n != null) {
                origins.add(n);
            }
        }
    }

    /** True when the handshake may proceed. */
    public boolean admits(String host, String origin) {
        if (host == null || !trusted.contains(host.strip().toLowerCase(Locale.ROOT))) {
            return false;
        }
        if (origin == null) {
            return true;
        }
        String n = normaliseOrigin(origin);
        return n != null && origins.contains(n);
    }

    private void addAuthority(String host, int port) {
        boolean v6 = host.contains(":");
        String shown = v6 ? "[" + host + "]" : host;
        trusted.add(shown);
        trusted.add(shown + ":" + port);
        if (v6) {
            trusted.add(host);
        }
    }

    private static String unbracket(String h) {
        return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
    }

    private static String normaliseOrigin(String origin) {
        try {
            URI uri = new URI(origin.strip());
            if (uri.getScheme() == null || uri.getHost() == null) {
                return null;
            }
            String s = uri.getScheme().toLowerCase(Locale.ROOT) + "://" + uri.getHost().toLowerCase(Locale.ROOT);
            return uri.getPort() >= 0 ? s + ":" + uri.getPort() : s;
        } catch (Exception e) {
            return null;
        }
    }
}
