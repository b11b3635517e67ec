package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import dev.synapsehub.core.actor.MutationContext;
import dev.synapsehub.core.actor.ResponseRenderer;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.ChatFrameRenderer;

import java.util.List;

/**
 * What the mesh needs from the connection edge (hub-net): the edge attaches a
 * {@link MutationContext} to each mutation and owns every frame. The mesh carries the context
 * as JSON to the leader (which rebuilds the renderers a decision needs from it) and to every
 * other node (which publishes the committed decision to its own connections).
 */
public interface EdgeBinding {
    /** The context as JSON, or null for a mutation without one. */
    JsonNode describe(MutationContext context);

    /** The context back from {@link #describe}; null for null. */
    MutationContext context(JsonNode description);

    /** The renderer of a keyed mutation's stored first response, rebuilt on the deciding node. */
    ResponseRenderer storedResponse(MutationContext context);

    /** The frame renderer of a chat, rebuilt on the deciding node. */
    ChatFrameRenderer chatFrame(MutationContext context);

    /**
     * Publishes to this node's own connections a committed decision taken for an agent of
     * another node (that node answers its agent itself). Called on the actor thread in commit
     * order; must hand the work off and return.
     */
    void publishRemote(RemoteDecision decision);

    /**
     * Applies to this node's own edge state what events committed for another node end on every
     * node (an applied identity-pin reclaim ends the name's lease and socket here), whether or
     * not the decision is published here: a node catching up applies history without announcing
     * it. Called on the actor thread for each record applied from the log, in commit order; must
     * hand the work off and return.
     */
    default void appliedRemote(List<JournaledEvent> committed) {
    }

    /**
     * Ends on this node's edge the identity pins of {@code names}: a snapshot this node
     * installed no longer holds them (or holds them for another key), so a reclaim ended them
     * that this node never applied as a record. As for an applied reclaim, each name's socket
     * here is closed and its ownership lease ended. Called on the actor thread, in commit order
     * with {@link #appliedRemote}; must hand the work off and return.
     */
    default void pinsEnded(List<String> names) {
    }

    /**
     * Tells {@code agent}, if it is connected to this node, what became of an intent this node
     * queued for it ({@code report}: the intent's id, outcome, detail). Called off the actor
     * thread; must hand the work off and return.
     */
    default void reportIntent(String agent, JsonNode report) {
    }
}
