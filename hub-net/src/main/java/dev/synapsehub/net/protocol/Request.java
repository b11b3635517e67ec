package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.session.Session;

/**
 * One inbound frame after the envelope pipeline: bound sender, normalised type and target,
 * the token already removed.
 */
public record Request(Session session, String sender, String type, String target, ObjectNode frame) {
    /** A member of the frame, or null. */
    public JsonNode get(String field) {
        return frame.get(field);
    }
}
