package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.MutationContext;

/**
 * The request a mutation came from, attached to it for a replicated hub: the node that decides
 * it rebuilds the renderers from it, and the other nodes publish the committed decision with it.
 *
 * @param type the normalised verb
 * @param frame the request frame (token removed)
 */
public record RequestContext(String type, String sender, String target, ObjectNode frame) implements MutationContext {
    /** The request as the verbs see it, without a connection (another node's agent). */
    Request detached() {
        return new Request(null, sender, type, target, frame);
    }
}
