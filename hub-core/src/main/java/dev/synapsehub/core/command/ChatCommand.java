package dev.synapsehub.core.command;

import dev.synapsehub.core.messaging.ChatFrameRenderer;
import dev.synapsehub.core.messaging.OnlineAgent;

import java.util.List;
import java.util.Objects;

/**
 * {@code chat} (wire contract §5.1). Never keyed: chat is at-least-once (INV-DG-1).
 *
 * @param agent the bound sender
 * @param target the target as sent; null when absent (broadcast)
 * @param channel private channel name, or null; channel chats are not retained or replayed
 * @param clientTimestamp the client's {@code timestamp} if it was a JSON number, else null;
 *     advisory only, non-finite and zero values are discarded (INV-CK-1)
 * @param clientMsgId the client's {@code client_msg_id} if it was a string, else null
 * @param receiptRequested {@code receipt_requested} was truthy
 * @param online every bound connection at decision time (with consume-liveness), for matching
 * @param renderer builds the outgoing frame once the core stamped msg_id and times
 */
public record ChatCommand(
        String agent,
        String target,
        String channel,
        Number clientTimestamp,
        String clientMsgId,
        boolean receiptRequested,
        List<OnlineAgent> online,
        ChatFrameRenderer renderer) implements MessagingCommand {
    public ChatCommand {
        Objects.requireNonNull(agent, "agent");
        online = online == null ? List.of() : List.copyOf(online);
        Objects.requireNonNull(renderer, "renderer");
    }
}
