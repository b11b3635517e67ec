package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import dev.synapsehub.core.actor.MutationContext;
import dev.synapsehub.core.actor.ResponseRenderer;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.ChatFrameRenderer;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** An edge without sockets: contexts name a verb, remote publications are recorded. */
final class TestEdge implements EdgeBinding {
    /** The context a test attaches to its mutations. */
    record Verb(String name) implements MutationContext {
    }

    final List<RemoteDecision> published = new CopyOnWriteArrayList<>();
    /** Intent reports, as {@code {"agent": ..., "report": {...}}}. */
    final List<JsonNode> reports = new CopyOnWriteArrayList<>();
    /** While set, publishing and applying another node's records fail as a broken edge would. */
    volatile boolean failing;
    /** While set, ending the pins an installed snapshot ended fails as a broken edge would. */
    volatile boolean pinEndsFailing;

    @Override
    public JsonNode describe(MutationContext context) {
        return context instanceof Verb v ? MeshJson.MAPPER.createObjectNode().put("verb", v.name()) : null;
    }

    @Override
    public MutationContext context(JsonNode description) {
        return description == null || description.isNull() ? null : new Verb(description.path("verb").asText());
    }

    @Override
    public ResponseRenderer storedResponse(MutationContext context) {
        return renderer(context);
    }

    static ResponseRenderer renderer(MutationContext context) {
        String verb = context instanceof Verb v ? v.name() : "?";
        return (reply, at) -> "{\"verb\":\"" + verb + "\",\"task\":\"" + reply.taskId() + "\",\"granted\":"
                + reply.granted() + "}";
    }

    @Override
    public ChatFrameRenderer chatFrame(MutationContext context) {
        return stamp -> "{\"type\":\"chat\",\"msg_id\":" + stamp.msgId() + "}";
    }

    @Override
    public void publishRemote(RemoteDecision decision) {
        if (failing) {
            throw new IllegalStateException("this edge cannot publish");
        }
        published.add(decision);
    }

    @Override
    public void appliedRemote(List<JournaledEvent> committed) {
        if (failing) {
            throw new IllegalStateException("this edge cannot apply");
        }
    }

    @Override
    public void pinsEnded(List<String> names) {
        if (pinEndsFailing) {
            throw new IllegalStateException("this edge cannot end pins");
        }
    }

    @Override
    public void reportIntent(String agent, JsonNode report) {
        reports.add(MeshJson.MAPPER.createObjectNode().put("agent", agent).set("report", report));
    }
}
