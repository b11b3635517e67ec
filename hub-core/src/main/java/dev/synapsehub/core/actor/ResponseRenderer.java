package dev.synapsehub.core.actor;

import dev.synapsehub.core.reply.Reply;

/** Renders the exact response frame of a keyed mutation, so it can commit with the mutation. */
@FunctionalInterface
public interface ResponseRenderer {
    /** The response frame for {@code reply}, decided at hub time {@code decidedAt}. */
    String render(Reply reply, double decidedAt);
}
