package dev.synapsehub.mesh;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.MutationContext;
import dev.synapsehub.core.command.AckCommand;
import dev.synapsehub.core.command.AgentActivityCommand;
import dev.synapsehub.core.command.CardCommand;
import dev.synapsehub.core.command.ChannelCommand;
import dev.synapsehub.core.command.ChatCommand;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.LedgerProgressCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.LedgerTaskUpdateCommand;
import dev.synapsehub.core.command.MailboxCursorCommand;
import dev.synapsehub.core.command.ReceiptsDeliveredCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.ResourceOfferCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.messaging.OnlineAgent;

import java.util.List;

/**
 * Commands as JSON for forwarding to the leader. Every command is a plain record except a
 * chat's frame renderer, which the edge rebuilds on the leader from the mutation's context.
 */
final class CommandCodec {
    private static final String CHAT = "ChatCommand";

    /** A chat without its renderer. */
    private record ChatWire(String agent, String target, String channel, Number clientTimestamp, String clientMsgId,
                            boolean receiptRequested, List<OnlineAgent> online) {
    }

    private final TypedRecords<Command> records = new TypedRecords<>(Command.class,
            ClaimCommand.class, ReleaseCommand.class, TaskUpdateCommand.class, HandoffCommand.class,
            CheckpointCommand.class, LedgerTaskCommand.class, LedgerTaskUpdateCommand.class,
            LedgerProgressCommand.class, ResourceOfferCommand.class, AckCommand.class, MailboxCursorCommand.class,
            AgentActivityCommand.class, ChannelCommand.class, ReceiptsDeliveredCommand.class,
            CardCommand.class, dev.synapsehub.core.command.CardRemoveCommand.class,
            dev.synapsehub.core.command.MemoryCommand.class,
            dev.synapsehub.core.command.OperatorReleaseCommand.class,
            dev.synapsehub.core.command.IdentityPinCommand.Pin.class,
            dev.synapsehub.core.command.IdentityPinCommand.Reclaim.class,
            // guard evidence and the federation records a node journals (dead-letter forwarding, relays)
            dev.synapsehub.core.command.AuditRecordCommand.class);

    ObjectNode write(Command command) {
        if (command instanceof ChatCommand c) {
            ObjectNode o = MeshJson.MAPPER.createObjectNode();
            o.put("type", CHAT);
            o.set("value", MeshJson.MAPPER.valueToTree(new ChatWire(c.agent(), c.target(), c.channel(),
                    c.clientTimestamp(), c.clientMsgId(), c.receiptRequested(), c.online())));
            return o;
        }
        return records.write(command);
    }

    Command read(JsonNode node, MutationContext context, EdgeBinding edge) {
        if (node != null && CHAT.equals(node.path("type").asText())) {
            try {
                ChatWire w = MeshJson.MAPPER.treeToValue(node.get("value"), ChatWire.class);
                return new ChatCommand(w.agent(), w.target(), w.channel(), w.clientTimestamp(), w.clientMsgId(),
                        w.receiptRequested(), w.online(), edge.chatFrame(context));
            } catch (JsonProcessingException | RuntimeException e) {
                throw new IllegalArgumentException("malformed chat command: " + e.getMessage(), e);
            }
        }
        return records.read(node);
    }
}
