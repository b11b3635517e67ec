package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.MutationContext;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.Reply;

import java.util.List;

/**
 * A committed decision as another node publishes it.
 *
 * @param originNodeId the node whose agent asked
 * @param context the edge's context (verb, sender, frame), or null
 * @param storedResponse the stored first response of a keyed grant, else null
 * @param committed its events with their seqs
 */
public record RemoteDecision(String originNodeId, MutationContext context, Reply reply,
                             String storedResponse, List<JournaledEvent> committed) {
    public RemoteDecision {
        committed = List.copyOf(committed);
    }
}
