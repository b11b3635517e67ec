package dev.synapsehub.core.command;

import java.util.Objects;

/**
 * Removes the persistent capability card of {@code cardAgent} (ours, {@code card_remove}: the
 * contract has no removal; docs/protocol.md).
 *
 * @param agent the bound requester (the identity or its {@code -rx} sidecar)
 * @param cardAgent the identity whose card goes
 */
public record CardRemoveCommand(String agent, String cardAgent) implements Command {
    public CardRemoveCommand {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(cardAgent, "cardAgent");
    }
}
