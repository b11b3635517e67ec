package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.protocol.HubContext;
import dev.synapsehub.net.protocol.Request;

/**
 * Puts the staleness block of seed 001 §12 ({@code staleness}: source, lastGlobalCommitAt,
 * replicationLagMs, queueDepth, isStale) on a mesh node's {@code state_snapshot},
 * {@code who_snapshot} and {@code board_snapshot} replies. A single hub has no such extension,
 * so its replies are unchanged.
 */
final class MeshReadLabel implements HubExtension {
    private final MeshNode node;

    MeshReadLabel(MeshNode node) {
        this.node = node;
    }

    @Override
    public void bind(HubContext hub, ClaimService claims) {
    }

    @Override
    public boolean handles(String type) {
        return false;
    }

    @Override
    public void handle(Request request) {
        throw new IllegalStateException("the read label answers no frame type");
    }

    @Override
    public void labelRead(ObjectNode reply) {
        reply.set("staleness", node.staleness().toJson());
    }
}
