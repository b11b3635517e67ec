package dev.synapsehub.core.card;

import java.util.Objects;

/**
 * A persistent dispatch card (contract §5.15 {@code persist: true}): registered for a
 * {@code <project>/<seat>} identity, it outlives its advertiser's connection, the 300 s card
 * liveness and a restart.
 *
 * @param agent the identity the card is registered for
 * @param cardJson the card object as broadcast (compact JSON, opaque to the core)
 * @param advertisedAt hub time of the registration
 */
public record PersistentCard(String agent, String cardJson, double advertisedAt) {
    public PersistentCard {
        Objects.requireNonNull(agent, "agent");
        if (cardJson == null || !cardJson.startsWith("{") || !cardJson.endsWith("}")) {
            throw new IllegalArgumentException("a card is a JSON object");
        }
    }
}
