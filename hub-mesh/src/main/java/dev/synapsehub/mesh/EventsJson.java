package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.journal.EventCodec;

import java.util.ArrayList;
import java.util.List;

/**
 * Events in replicated records, each as the journal stores it ({@code kind}, {@code ts},
 * {@code payload} from {@link EventCodec}) plus its write class, so a Raft entry and a journal
 * row carry the same bytes for the same event.
 */
final class EventsJson {
    private final EventCodec codec = new EventCodec();

    ArrayNode write(List<? extends CoordinationEvent> events) {
        ArrayNode out = MeshJson.MAPPER.createArrayNode();
        for (CoordinationEvent e : events) {
            ObjectNode o = out.addObject();
            o.put("kind", e.kind());
            o.put("ts", e.ts());
            o.put("writeClass", WriteClass.of(e).wire());
            o.put("payload", codec.encode(e));
        }
        return out;
    }

    /** Decodes every event; an unknown kind or a corrupt payload makes the whole record malformed. */
    List<CoordinationEvent> read(JsonNode array) {
        if (array == null || !array.isArray()) {
            throw new IllegalArgumentException("events must be an array");
        }
        List<CoordinationEvent> out = new ArrayList<>(array.size());
        for (JsonNode o : array) {
            String kind = o.path("kind").asText();
            try {
                out.add(codec.decode(kind, o.path("ts").asDouble(), o.path("payload").asText())
                        .orElseThrow(() -> new IllegalArgumentException("unknown event kind '" + kind + "'")));
            } catch (EventCodec.CorruptPayloadException e) {
                throw new IllegalArgumentException("corrupt " + kind + " event: " + e.getMessage(), e);
            }
        }
        return out;
    }
}
