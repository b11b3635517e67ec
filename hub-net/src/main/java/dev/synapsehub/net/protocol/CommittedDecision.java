package dev.synapsehub.net.protocol;

import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.Reply;

import java.util.List;

/**
 * One decision the writer committed, as the outbox thread turns it into frames (in commit order).
 *
 * @param request the request it answers ({@code session()} is null for another mesh node's agent)
 * @param reply the core's reply
 * @param storedResponse the first response stored for a keyed request, or null
 * @param committed the events journaled with it, in commit order
 * @param at when it is published (the frames' timestamp)
 */
record CommittedDecision(Request request, Reply reply, String storedResponse, List<JournaledEvent> committed,
        double at) {
}
