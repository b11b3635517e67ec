package dev.synapsehub.core.actor;

import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Reply;

import java.util.List;

/**
 * A mutation decided into the batch being appended, with what it produced.
 *
 * @param storedResponse the response stored for a keyed grant, else null
 */
public record DecidedMutation(Mutation mutation, Reply reply, List<CoordinationEvent> events, String storedResponse) {
    public DecidedMutation {
        events = List.copyOf(events);
    }
}
