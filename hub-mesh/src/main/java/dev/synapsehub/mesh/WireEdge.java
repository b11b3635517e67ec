package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.MutationContext;
import dev.synapsehub.core.actor.ResponseRenderer;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.ChatFrameRenderer;
import dev.synapsehub.net.HubServer;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.InboundPipeline;
import dev.synapsehub.net.protocol.RequestContext;

import java.util.List;

/**
 * The mesh's binding to the hub-net edge: contexts are the wire requests ({@link RequestContext}),
 * renderers and publications are the verbs' own. The node's server is bound after it is built
 * (it needs the node's actor); before that nothing is published (there are no connections).
 * Forwarded and replicated request frames leave out {@code auth}, {@code signature} and
 * {@code token} (seed 001 §15: credentials are not replicated as ordinary data).
 */
public final class WireEdge implements EdgeBinding {
    private static final List<String> CREDENTIALS = List.of("auth", "signature", "token");
    private volatile HubServer server;

    /** Binds the node's started server. */
    public void bind(HubServer server) {
        this.server = server;
    }

    private InboundPipeline pipeline() {
        HubServer s = server;
        InboundPipeline p = s == null ? null : s.pipeline();
        if (p == null) {
            throw new IllegalStateException("this mesh node's hub server is not serving yet");
        }
        return p;
    }

    @Override
    public JsonNode describe(MutationContext context) {
        if (!(context instanceof RequestContext r)) {
            return null;
        }
        ObjectNode o = MeshJson.MAPPER.createObjectNode();
        o.put("type", r.type());
        o.put("sender", r.sender());
        o.put("target", r.target());
        ObjectNode frame = r.frame().deepCopy();
        frame.remove(CREDENTIALS);
        o.set("frame", frame);
        return o;
    }

    @Override
    public MutationContext context(JsonNode d) {
        if (d == null || d.isNull()) {
            return null;
        }
        JsonNode frame = d.get("frame");
        if (frame == null || !frame.isObject()) {
            throw new IllegalArgumentException("a request context needs its frame");
        }
        return new RequestContext(d.path("type").asText(), d.path("sender").asText(), d.path("target").asText(null),
                (ObjectNode) frame);
    }

    @Override
    public ResponseRenderer storedResponse(MutationContext context) {
        RequestContext r = request(context);
        return (reply, at) -> pipeline().storedResponse(r).render(reply, at);
    }

    @Override
    public ChatFrameRenderer chatFrame(MutationContext context) {
        RequestContext r = request(context);
        return stamp -> pipeline().chatFrame(r).render(stamp);
    }

    private static RequestContext request(MutationContext context) {
        if (context instanceof RequestContext r) {
            return r;
        }
        throw new IllegalArgumentException("a forwarded keyed request or chat needs its request context");
    }

    @Override
    public void publishRemote(RemoteDecision decision) {
        HubServer s = server;
        InboundPipeline p = s == null ? null : s.pipeline();
        if (p != null && decision.context() instanceof RequestContext r) {
            p.publishCommitted(r, decision.reply(), decision.storedResponse(), decision.committed());
        }
    }

    @Override
    public void appliedRemote(List<JournaledEvent> committed) {
        HubServer s = server;
        InboundPipeline p = s == null ? null : s.pipeline();
        if (p != null) { // not serving yet: no socket, no lease to end
            p.appliedRemote(committed);
        }
    }

    @Override
    public void pinsEnded(List<String> names) {
        HubServer s = server;
        InboundPipeline p = s == null ? null : s.pipeline();
        if (p != null) { // not serving yet: no socket, no lease to end
            p.pinsEnded(names);
        }
    }

    @Override
    public void reportIntent(String agent, JsonNode report) {
        HubServer s = server;
        InboundPipeline p = s == null ? null : s.pipeline();
        if (p == null) {
            return; // not serving yet: no connection to tell; the outcome is in the intent queue
        }
        HubServices hub = s.services();
        var session = hub.registry().session(agent);
        if (session == null) {
            return; // the agent is not connected here; the outcome stays in the intent queue
        }
        ObjectNode frame = hub.frames().envelope(agent, "intent_reconciled", "Queued intent "
                + report.path("intent_id").asText() + ": " + report.path("outcome").asText() + ".",
                hub.clock().nowSeconds());
        report.fields().forEachRemaining(e -> frame.set(e.getKey(), e.getValue()));
        hub.outbox().send(session, frame);
    }
}
