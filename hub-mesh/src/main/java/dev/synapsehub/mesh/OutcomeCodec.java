package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.JournaledEvent;

import java.util.ArrayList;
import java.util.List;

/** What the leader answers a forwarded mutation with: its {@link Outcome}, as JSON. */
final class OutcomeCodec {
    private final ReplyCodec replies = new ReplyCodec();
    private final EventsJson events = new EventsJson();

    ObjectNode write(Outcome outcome) {
        ObjectNode o = MeshJson.MAPPER.createObjectNode();
        if (outcome instanceof Outcome.Decided d) {
            o.put("outcome", "decided");
            o.set("reply", replies.write(d.reply()));
            if (d.storedResponse() != null) {
                o.put("stored", d.storedResponse());
            }
            List<CoordinationEvent> list = new ArrayList<>();
            d.committed().forEach(e -> list.add(e.event()));
            o.put("firstSeq", d.committed().isEmpty() ? 0 : d.committed().get(0).seq());
            o.set("committed", events.write(list));
        } else if (outcome instanceof Outcome.Replayed r) {
            o.put("outcome", "replayed");
            o.put("response", r.response());
        } else if (outcome instanceof Outcome.IdempotencyConflict c) {
            o.put("outcome", "idempotency_conflict");
            o.put("response", c.originalResponse());
        } else {
            Outcome.Refused r = (Outcome.Refused) outcome;
            o.put("outcome", "refused");
            o.put("reason", r.reason().name());
            o.put("message", r.message());
        }
        return o;
    }

    Outcome read(JsonNode o) {
        switch (o.path("outcome").asText()) {
            case "decided": {
                List<CoordinationEvent> list = events.read(o.get("committed"));
                long first = o.path("firstSeq").asLong();
                List<JournaledEvent> committed = new ArrayList<>(list.size());
                for (int i = 0; i < list.size(); i++) {
                    committed.add(new JournaledEvent(first + i, list.get(i)));
                }
                JsonNode stored = o.get("stored");
                return new Outcome.Decided(replies.read(o.get("reply")), committed,
                        stored == null || stored.isNull() ? null : stored.asText());
            }
            case "replayed":
                return new Outcome.Replayed(o.path("response").asText());
            case "idempotency_conflict":
                return new Outcome.IdempotencyConflict(o.path("response").asText());
            case "refused":
                return new Outcome.Refused(Outcome.Reason.valueOf(o.path("reason").asText()),
                        o.path("message").asText());
            default:
                throw new IllegalArgumentException("unknown outcome '" + o.path("outcome").asText() + "'");
        }
    }

    /** Highest seq of a decided outcome's events, 0 when it has none. */
    static long lastSeq(Outcome outcome) {
        if (outcome instanceof Outcome.Decided d && !d.committed().isEmpty()) {
            return d.committed().get(d.committed().size() - 1).seq();
        }
        return 0;
    }
}
