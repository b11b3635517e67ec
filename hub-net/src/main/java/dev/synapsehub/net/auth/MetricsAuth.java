package dev.synapsehub.net.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;

/**
 * Who may read {@code /health} and {@code /metrics} (contract §10): anyone, or only a request
 * that carries the metrics token as {@code Authorization: Bearer <token>} (and, with the
 * deprecated {@code --metrics-query-token-ok}, as {@code ?token=<token>}).
 *
 * @param token the metrics token, or null: the endpoints ask for none
 * @param queryTokenOk whether {@code ?token=} is accepted too
 */
public record MetricsAuth(String token, boolean queryTokenOk) {
    /** No metrics token: both endpoints answer anyone who reaches the port. */
    public static final MetricsAuth OPEN = new MetricsAuth(null, false);

    /** The {@code WWW-Authenticate} value of a refusal. */
    public static final String CHALLENGE = "Bearer realm=\"synapse-metrics\"";

    public MetricsAuth {
        token = token == null || token.isEmpty() ? null : token;
    }

    /** Whether a token is asked for. */
    public boolean secured() {
        return token != null;
    }

    /**
     * Whether a request with this {@code Authorization} header (null: none) and these query
     * parameters may read the endpoints. Tokens are compared in constant time.
     */
    public boolean admits(String authorization, Map<String, List<String>> query) {
        if (token == null) {
            return true;
        }
        if (authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)
                && same(authorization.substring(7).strip())) {
            return true;
        }
        if (queryTokenOk) {
            List<String> given = query.get("token");
            return given != null && given.size() == 1 && same(given.get(0));
        }
        return false;
    }

    /** Never the token itself: a configuration may be logged. */
    @Override
    public String toString() {
        return "MetricsAuth[" + (token == null ? "open" : "token set") + ", queryTokenOk=" + queryTokenOk + "]";
    }

    private boolean same(String given) {
        return MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8), given.getBytes(StandardCharsets.UTF_8));
    }
}
