package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.JournaledEvent;

import java.util.ArrayList;
import java.util.List;

/**
 * The payload of a replicated record: one group commit of the leader's actor. The events,
 * numbered from {@code firstSeq} (every node numbers them alike), and the decisions that
 * produced them, so every node can publish them to its own connections.
 */
record ReplicatedBatch(long firstSeq, List<CoordinationEvent> events, List<Decision> decisions) {

    /**
     * One decision of the batch.
     *
     * @param originNodeId the node whose agent asked (that node answers it)
     * @param context the edge's description of the request, or null
     * @param reply the reply as JSON
     * @param storedResponse the stored first response of a keyed grant, else null
     * @param eventCount how many of the batch's events (in order) it produced
     * @param intentId the write's intent id ({@link IntentTags}), or null for a write without one
     * @param hold the origin's hold when it handed the write over: the lowest hand-over base among
     *     the writes it still held queued or in flight, its applied index when none; -1 when not
     *     reported (a write without an intent id, or an origin of an older version). Every node
     *     forgets an origin's intent ids only at or below it ({@link DecidedIntents}).
     */
    record Decision(String originNodeId, JsonNode context, JsonNode reply, String storedResponse, int eventCount,
                    String intentId, long hold) {
        /** A decision without an intent id. */
        Decision(String originNodeId, JsonNode context, JsonNode reply, String storedResponse, int eventCount) {
            this(originNodeId, context, reply, storedResponse, eventCount, null, -1);
        }

        /** A decision whose origin reported no hold. */
        Decision(String originNodeId, JsonNode context, JsonNode reply, String storedResponse, int eventCount,
                 String intentId) {
            this(originNodeId, context, reply, storedResponse, eventCount, intentId, -1);
        }
    }

    ReplicatedBatch {
        events = List.copyOf(events);
        decisions = List.copyOf(decisions);
    }

    /** The seq of the last event. */
    long lastSeq() {
        return firstSeq + events.size() - 1;
    }

    /** Every event with its seq. */
    List<JournaledEvent> journaled() {
        List<JournaledEvent> out = new ArrayList<>(events.size());
        for (int i = 0; i < events.size(); i++) {
            out.add(new JournaledEvent(firstSeq + i, events.get(i)));
        }
        return out;
    }

    /** The events of decision {@code d} with their seqs. */
    List<JournaledEvent> committedOf(int d) {
        int offset = 0;
        for (int i = 0; i < d; i++) {
            offset += decisions.get(i).eventCount();
        }
        List<JournaledEvent> out = new ArrayList<>(decisions.get(d).eventCount());
        for (int i = 0; i < decisions.get(d).eventCount(); i++) {
            out.add(new JournaledEvent(firstSeq + offset + i, events.get(offset + i)));
        }
        return out;
    }

    ObjectNode toJson(EventsJson codec) {
        ObjectNode o = MeshJson.MAPPER.createObjectNode();
        o.put("firstSeq", firstSeq);
        o.set("events", codec.write(events));
        ArrayNode ds = o.putArray("decisions");
        for (Decision d : decisions) {
            ObjectNode j = ds.addObject();
            j.put("origin", d.originNodeId());
            if (d.context() != null) {
                j.set("context", d.context());
            }
            j.set("reply", d.reply());
            if (d.storedResponse() != null) {
                j.put("stored", d.storedResponse());
            }
            j.put("events", d.eventCount());
            if (d.intentId() != null) {
                j.put("intent", d.intentId()); // an additive member: older readers ignore it (seed 001 §3)
            }
            if (d.hold() >= 0) {
                j.put("hold", d.hold()); // additive too (seed 001 §3)
            }
        }
        return o;
    }

    static ReplicatedBatch fromJson(JsonNode o, EventsJson codec) {
        List<CoordinationEvent> events = codec.read(o.get("events"));
        List<Decision> decisions = new ArrayList<>();
        int counted = 0;
        for (JsonNode j : o.path("decisions")) {
            JsonNode stored = j.get("stored");
            JsonNode intent = j.get("intent");
            JsonNode hold = j.get("hold");
            Decision d = new Decision(j.path("origin").asText(), j.get("context"), j.get("reply"),
                    stored == null || stored.isNull() ? null : stored.asText(), j.path("events").asInt(),
                    intent == null || intent.isNull() ? null : intent.asText(),
                    hold != null && hold.canConvertToLong() && hold.asLong() >= 0 ? hold.asLong() : -1);
            counted += d.eventCount();
            decisions.add(d);
        }
        if (counted != events.size()) {
            throw new IllegalArgumentException("decisions account for " + counted + " of " + events.size() + " events");
        }
        return new ReplicatedBatch(o.path("firstSeq").asLong(), events, decisions);
    }
}
