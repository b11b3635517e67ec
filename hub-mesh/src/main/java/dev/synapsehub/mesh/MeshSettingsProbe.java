package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/**
 * A voter's governance settings fingerprint and how it compares with the leader's, read from its
 * answer to the settings query (a stale read each node answers itself, {@link MeshStatusReads}):
 * what {@code synapse-hub mesh status} shows per node.
 */
public final class MeshSettingsProbe {
    private MeshSettingsProbe() {
    }

    /**
     * One node's answer.
     *
     * @param state {@code agree}, {@code mismatch} or {@code unknown} (not compared with a leader yet)
     * @param leader the leader it compared with, or null
     * @param differing the settings whose values differ from the leader's (empty unless mismatch)
     */
    public record NodeSettings(String fingerprint, String state, String leader, List<String> differing) {
        public NodeSettings {
            differing = List.copyOf(differing);
        }

        /** True when this node's settings differ from the leader's. */
        public boolean mismatched() {
            return "mismatch".equals(state);
        }
    }

    /** A node's answer, or null when it carries none (a node of an older version answers an error). */
    static NodeSettings read(JsonNode answer) {
        if (answer == null || !answer.hasNonNull("fingerprint")) {
            return null;
        }
        List<String> differing = new ArrayList<>();
        answer.path("differing").forEach(d -> differing.add(d.asText()));
        return new NodeSettings(answer.get("fingerprint").asText(), answer.path("state").asText("unknown"),
                answer.path("leader").isTextual() ? answer.path("leader").asText() : null, differing);
    }
}
