package dev.synapsehub.core.event;

import java.util.List;

/**
 * A chat, stamped by the hub (INV-CK-1). Apply appends it to the bounded history, resumes the
 * msg_id counter from it, records a dead letter when {@code deadLettered}, and makes it pending
 * in the mailbox of each of {@code addressees}. The journal payload is {@code frameJson} (the
 * frame as fanned out, without {@code seq}); the core also needs the other members, which the
 * journal must keep alongside (e.g. as {@code _dead_lettered}, {@code _addressees}).
 *
 * @param target the target as sent, or null when the client sent none
 * @param channel the private channel, or null
 * @param deadLettered a directed chat with no consume-live recipient (INV-DG-3)
 * @param addressees identities whose mailbox it is pending in: literal target parts and matched
 *     logical recipients, without the sender, sorted (empty unless directed)
 */
public record ChatEvent(double ts, long msgId, String sender, String target, String channel, boolean deadLettered,
        List<String> addressees, String frameJson) implements CoordinationEvent {
    public ChatEvent {
        addressees = List.copyOf(addressees);
    }

    @Override
    public String kind() {
        return "chat";
    }

    @Override
    public Durability durability() {
        return Durability.NORMAL;
    }
}
