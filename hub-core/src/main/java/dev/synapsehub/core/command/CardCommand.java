package dev.synapsehub.core.command;

import java.util.Objects;

/**
 * Registers a persistent capability card (contract §5.15 {@code persist: true}).
 *
 * @param agent the bound advertiser (the identity or its {@code -rx} sidecar)
 * @param cardAgent the identity the card is for
 * @param cardJson the validated card object, compact JSON
 */
public record CardCommand(String agent, String cardAgent, String cardJson) implements Command {
    public CardCommand {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(cardAgent, "cardAgent");
        Objects.requireNonNull(cardJson, "cardJson");
    }
}
