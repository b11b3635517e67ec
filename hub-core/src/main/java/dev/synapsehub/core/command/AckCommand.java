package dev.synapsehub.core.command;

import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.messaging.DirectedChat;

import java.util.List;

/**
 * {@code ack} (wire contract §5.3): the identity has received the directed chat at {@code seq}.
 * Spoofed or unknown acks are silent no-ops.
 *
 * @param identity the authorised {@code mailbox_for} identity, or null/blank for the connection name
 * @param roles the connection's roles, used to decide whether the chat addressed the identity
 * @param seq the acknowledged journal seq (the edge ignores non-integer values)
 * @param storedChat the stored chat at {@code seq} if the edge resolved it from the journal;
 *     null lets the core use the directed chats it still remembers
 */
public record AckCommand(String agent, String identity, List<String> roles, long seq, DirectedChat storedChat)
        implements MessagingCommand {
    public AckCommand {
        roles = roles == null ? List.of() : List.copyOf(roles);
    }

    /** The identity acting: {@code identity} if given, else the connection name. */
    public String effectiveIdentity() {
        return PythonWhitespace.isBlank(identity) ? agent : PythonWhitespace.strip(identity);
    }
}
