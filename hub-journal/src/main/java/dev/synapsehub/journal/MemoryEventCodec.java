package dev.synapsehub.journal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.core.command.MemoryCommand;
import dev.synapsehub.core.event.MemoryEvent;

import java.io.IOException;
import java.util.Set;

/**
 * The participant-memory kinds (wire contract A12 PM7): {@code recall} and {@code finding}. The
 * payload is stored as the edge wrote it (compact, ASCII-escaped); decoding keeps it verbatim
 * and reads only who it is charged to: a recall's {@code by} (any JSON object is a recall), a
 * finding's {@code provenance.actor} (a non-blank string, else the row is corrupt).
 */
final class MemoryEventCodec {
    static final Set<String> KINDS = Set.of("recall", "finding");
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private MemoryEventCodec() {
    }

    static MemoryEvent decode(String kind, double ts, String payload) throws EventCodec.CorruptPayloadException {
        JsonNode root;
        try {
            root = payload == null ? null : MAPPER.readTree(payload);
        } catch (IOException e) {
            throw new EventCodec.CorruptPayloadException("undecodable " + kind + " payload: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new EventCodec.CorruptPayloadException("a " + kind + " payload is a JSON object");
        }
        if (!"finding".equals(kind)) {
            // a recall builds nothing on replay: any object is kept (imported rows vary), charged to its by
            JsonNode by = root.path("by");
            return new MemoryEvent(ts, MemoryCommand.Kind.RECALL, by.isTextual() ? by.textValue().strip() : "",
                    payload.strip());
        }
        JsonNode actor = root.path("provenance").path("actor");
        if (!actor.isTextual() || actor.textValue().isBlank()) {
            // its actor is what the finding quota counts (PM5): without one the row is corrupt
            throw new EventCodec.CorruptPayloadException("a finding without provenance.actor");
        }
        return new MemoryEvent(ts, MemoryCommand.Kind.FINDING, actor.textValue().strip(), payload.strip());
    }
}
