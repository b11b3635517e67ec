package dev.synapsehub.net;

import java.util.Set;

/**
 * One per-message HMAC key (contract §9): {@code --message-auth-key KEY_ID:SECRET:SENDER,...}.
 *
 * @param senders the bound names allowed to sign with this key; empty means nobody
 */
public record MessageAuthKey(String keyId, String secret, Set<String> senders) {
    public MessageAuthKey {
        senders = Set.copyOf(senders);
    }

    /** Parses {@code KEY_ID:SECRET:SENDER[,SENDER...]}. */
    public static MessageAuthKey parse(String spec) {
        String[] parts = spec.split(":", 3);
        if (parts.length < 2 || parts[0].isBlank()) {
            throw new IllegalArgumentException("expected KEY_ID:SECRET:SENDER[,SENDER...]");
        }
        Set<String> senders = parts.length == 3 && !parts[2].isBlank()
                ? Set.of(java.util.Arrays.stream(parts[2].split(",")).map(String::strip)
                        .filter(s -> !s.isEmpty()).distinct().toArray(String[]::new))
                : Set.of();
        return new MessageAuthKey(parts[0].strip(), parts[1], senders);
    }

    @Override
    public String toString() {
        return "MessageAuthKey[" + keyId + ", senders=" + senders + "]"; // never the secret
    }
}
