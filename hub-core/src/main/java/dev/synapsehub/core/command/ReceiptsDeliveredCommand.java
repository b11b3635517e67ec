package dev.synapsehub.core.command;

import java.util.List;

/**
 * The edge wrote these owed receipts to a socket bound to {@code agent}, the sender of the chats (contract §8.5): they
 * leave the outbox, so a later registration, also after a restart, does not get them again.
 * Decides to no event when none of them is still owed.
 */
public record ReceiptsDeliveredCommand(String agent, List<String> notificationIds) implements MessagingCommand {
    public ReceiptsDeliveredCommand {
        notificationIds = List.copyOf(notificationIds);
    }
}
