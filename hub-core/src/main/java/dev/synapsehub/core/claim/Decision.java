package dev.synapsehub.core.claim;

import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Reply;

import java.util.List;

/** What deciding a command produced: the reply, and the events that carry its effect. */
public record Decision(Reply reply, List<CoordinationEvent> events) {
    public Decision {
        events = List.copyOf(events);
    }
}
