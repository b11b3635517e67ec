package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Objects;

/**
 * A replicated record with the envelope fields of seed 001 §6. The Raft log holds one per
 * entry; the payload is a {@link ReplicatedBatch}.
 *
 * @param recordId unique per record: {@code originNodeId:originSeq}
 * @param entityType what the payload is about ({@code coordination_batch})
 * @param entityId the entity within its type (the hub id: the whole coordination state)
 * @param originSeq monotonic per origin node
 * @param leaseEpoch the Raft term the leader decided in
 * @param fenceToken {@link FenceToken#wire()}
 * @param intentId the intent this record carries
 * @param createdAt hub time of the decision, Unix seconds
 * @param committedAt when it committed, on records that report it (null in the log entry itself)
 * @param precondition the base revision it was decided on: {@code baseIndex}, {@code expectedEpoch}
 */
public record MeshEnvelope(
        String protocol,
        String version,
        String recordId,
        String entityType,
        String entityId,
        String originNodeId,
        long originSeq,
        WriteClass writeClass,
        long leaseEpoch,
        String fenceToken,
        String intentId,
        EnvelopeState state,
        double createdAt,
        Double committedAt,
        JsonNode payload,
        JsonNode precondition) {

    /** The entity type of a batch of coordination events. */
    public static final String BATCH = "coordination_batch";

    public MeshEnvelope {
        Objects.requireNonNull(protocol, "protocol");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(recordId, "recordId");
        Objects.requireNonNull(originNodeId, "originNodeId");
        Objects.requireNonNull(writeClass, "writeClass");
        Objects.requireNonNull(fenceToken, "fenceToken");
        Objects.requireNonNull(intentId, "intentId");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(payload, "payload");
    }

    /** The parsed fence token. */
    public FenceToken fence() {
        return FenceToken.parse(fenceToken);
    }

    /** This record in another state, committed at {@code at} (null keeps it open). */
    public MeshEnvelope with(EnvelopeState newState, Double at) {
        return new MeshEnvelope(protocol, version, recordId, entityType, entityId, originNodeId, originSeq, writeClass,
                leaseEpoch, fenceToken, intentId, newState, createdAt, at, payload, precondition);
    }

    /** The JSON form, members named as in the contract. */
    public ObjectNode toJson() {
        ObjectNode o = MeshJson.MAPPER.createObjectNode();
        o.put("protocol", protocol);
        o.put("version", version);
        o.put("recordId", recordId);
        o.put("entityType", entityType);
        o.put("entityId", entityId);
        o.put("originNodeId", originNodeId);
        o.put("originSeq", originSeq);
        o.put("writeClass", writeClass.wire());
        o.put("leaseEpoch", leaseEpoch);
        o.put("fenceToken", fenceToken);
        o.put("intentId", intentId);
        o.put("state", state.wire());
        o.put("createdAt", createdAt);
        if (committedAt != null) {
            o.put("committedAt", committedAt);
        }
        o.set("payload", payload);
        if (precondition != null) {
            o.set("precondition", precondition);
        }
        return o;
    }

    /** Encodes {@link #toJson()}. */
    public byte[] toBytes() {
        return MeshJson.bytes(toJson());
    }

    /**
     * Decodes a record.
     *
     * @throws IllegalArgumentException when it is malformed or of an incompatible protocol or
     *     major version (seed 001 §3)
     */
    public static MeshEnvelope fromBytes(byte[] bytes) {
        JsonNode o = MeshJson.tree(bytes);
        String protocol = text(o, "protocol");
        String version = text(o, "version");
        String incompatible = MeshProtocol.incompatibility(protocol, version);
        if (incompatible != null) {
            throw new IllegalArgumentException("incompatible record: " + incompatible);
        }
        try {
            JsonNode committed = o.get("committedAt");
            return new MeshEnvelope(protocol, version, text(o, "recordId"), text(o, "entityType"), text(o, "entityId"),
                    text(o, "originNodeId"), o.path("originSeq").asLong(), WriteClass.fromWire(text(o, "writeClass")),
                    o.path("leaseEpoch").asLong(), text(o, "fenceToken"), text(o, "intentId"),
                    EnvelopeState.fromWire(text(o, "state")), o.path("createdAt").asDouble(),
                    committed == null || committed.isNull() ? null : committed.asDouble(), o.get("payload"),
                    o.get("precondition"));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("malformed record: " + e.getMessage(), e);
        }
    }

    private static String text(JsonNode o, String field) {
        JsonNode v = o.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }
}
