package dev.synapsehub.core.command;

import java.util.Objects;

/**
 * A private-channel verb (wire contract A1.2): create, invite, join or leave, decided on the
 * writer thread so two racing requests see one membership.
 *
 * @param agent the bound requester
 * @param op the verb
 * @param channel the {@code channel} member as sent, trimmed ({@code ""} when absent or blank)
 * @param invitee the trimmed {@code invitee} of an invite, else null
 * @param label the creator's {@code label}, kept and never shown; null when absent
 */
public record ChannelCommand(String agent, Op op, String channel, String invitee, String label) implements Command {
    /** The channel verbs that change state. */
    public enum Op { CREATE, INVITE, JOIN, LEAVE }

    public ChannelCommand {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(op, "op");
        channel = channel == null ? "" : channel.strip();
        invitee = invitee == null ? null : invitee.strip();
    }
}
