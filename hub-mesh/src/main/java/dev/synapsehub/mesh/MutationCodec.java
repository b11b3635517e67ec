package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.MutationContext;
import dev.synapsehub.core.command.Command;

/**
 * A mutation as a follower forwards it to the leader: the command, the idempotency key and
 * request digest (the renderer is rebuilt by the edge on the leader) and the edge's context.
 */
final class MutationCodec {
    private final CommandCodec commands = new CommandCodec();
    private final EdgeBinding edge;

    MutationCodec(EdgeBinding edge) {
        this.edge = edge;
    }

    ObjectNode write(Mutation m) {
        ObjectNode o = MeshJson.MAPPER.createObjectNode();
        o.set("command", commands.write(m.command()));
        if (m.idempotency() != null) {
            ObjectNode idem = o.putObject("idem");
            idem.put("key", m.idempotency().key());
            idem.put("digest", m.idempotency().requestDigest());
        }
        JsonNode context = edge.describe(m.context());
        if (context != null) {
            o.set("context", context);
        }
        return o;
    }

    Mutation read(JsonNode o) {
        MutationContext context = edge.context(o.get("context"));
        Command command = commands.read(o.get("command"), context, edge);
        JsonNode idem = o.get("idem");
        Idempotency idempotency = idem == null || idem.isNull() ? null
                : new Idempotency(idem.path("key").asText(), idem.path("digest").asText(), edge.storedResponse(context));
        return new Mutation(command, idempotency, context);
    }
}
