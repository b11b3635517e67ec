package dev.synapsehub.core.command;

import dev.synapsehub.core.PythonWhitespace;

import java.util.Objects;

/**
 * A private-channel verb (wire contract A1.2): create, invite, join or leave, decided on the
 * writer thread so two racing requests see one membership.
 *
 * @param agent the bound requester
 * @param op the verb
 * @param channel the {@code channel} member as sent, trimmed ({@code ""} when absent or blank)
 * @param invitee the trimmed {@code invitee} of an invite, else null
 * @param label the creator's {@code label}, kept and never shown, cut to {@link #MAX_LABEL_CODE_POINTS}
 *     code points (it is journaled and snapshotted); null when absent
 */
public record ChannelCommand(String agent, Op op, String channel, String invitee, String label) implements Command {
    /** The channel verbs that change state. */
    public enum Op { CREATE, INVITE, JOIN, LEAVE }

    /** The longest label kept, in code points; the rest is dropped (it is never shown, so nobody misses it). */
    public static final int MAX_LABEL_CODE_POINTS = 1024;

    public ChannelCommand {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(op, "op");
        channel = channel == null ? "" : PythonWhitespace.strip(channel);
        invitee = PythonWhitespace.strip(invitee);
        if (label != null && label.codePointCount(0, label.length()) > MAX_LABEL_CODE_POINTS) {
            label = label.substring(0, label.offsetByCodePoints(0, MAX_LABEL_CODE_POINTS));
        }
    }
}
