package dev.synapsehub.core.event;

import dev.synapsehub.core.command.ChannelCommand;

import java.util.Objects;

/**
 * A private channel changed (our decision A10.1: channels are journaled and survive a restart).
 *
 * @param op what happened
 * @param channel the trimmed channel id
 * @param agent who asked (the owner for create and invite, the member for join and leave)
 * @param invitee the invitee of an invite, else null
 * @param label the label of a create, else null
 */
public record ChannelEvent(double ts, ChannelCommand.Op op, String channel, String agent, String invitee,
        String label) implements CoordinationEvent {
    public ChannelEvent {
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(agent, "agent");
    }

    @Override
    public String kind() {
        return "channel";
    }

    @Override
    public Durability durability() {
        return Durability.NORMAL;
    }
}
