package dev.synapsehub.core.reply;

import java.util.List;

/**
 * The answer to a channel verb, success or refusal alike ({@code channel_result}, contract A1.3).
 *
 * @param channel the trimmed id as requested
 * @param ok the verb took effect
 * @param message the exact payload text
 * @param members the sorted roster when ok and the requester is a member afterwards, else empty
 */
public record ChannelReply(String channel, boolean ok, String message, List<String> members) implements Reply {
    public ChannelReply {
        members = List.copyOf(members);
    }
}
