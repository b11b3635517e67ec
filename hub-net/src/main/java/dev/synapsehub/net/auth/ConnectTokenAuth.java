package dev.synapsehub.net.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** The connect token check of contract §3.3 (constant-time) and the quota principals of §7.6. */
public final class ConnectTokenAuth {
    private final byte[] expected;
    private final String principal;

    /** Checks against {@code token}; null means an open hub. */
    public ConnectTokenAuth(String token) {
        this.expected = token == null ? null : token.getBytes(StandardCharsets.UTF_8);
        this.principal = token == null ? null : "token:" + sha256(token).substring(0, 16);
    }

    /** True when a token is configured. */
    public boolean secured() {
        return expected != null;
    }

    /** Null when accepted, else the refusal reason ({@code token required} / {@code invalid token}). */
    public String check(String presented) {
        if (presented == null || presented.isEmpty()) {
            return "token required";
        }
        byte[] given = presented.getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(expected, given) ? null : "invalid token";
    }

    /** The quota principal for a connection from {@code remoteHost}. */
    public String principalFor(String remoteHost) {
        return secured() ? principal : "open-host:" + remoteHost;
    }

    static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
