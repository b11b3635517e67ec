package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Comparator;
import java.util.Objects;

/**
 * A durable queue entry of seed 001 §9: a strong write this node took while no quorum could
 * commit it. It grants nothing until a replay commits it; its reconciliation ends it with one
 * {@link ReplayOutcome} (§10).
 *
 * @param entityType the kind of write ({@code claim}, {@code release}, {@code board_task}, ...)
 * @param entityId the task (or resource) it is about
 * @param leaseEpoch the Raft term this node knew when it took the intent
 * @param fenceToken {@code term:leader:baseIndex} as this node saw them then ({@link FenceToken})
 * @param attempts replay attempts so far (the retry counter)
 * @param firstAttemptAt when the write was first tried (hub time, Unix seconds)
 * @param lastAttemptAt the latest attempt, first try included
 * @param nextAttemptAt the earliest time of the next replay attempt
 * @param state {@code queued} until reconciled, then {@code reconciled}
 * @param outcome the reconciliation outcome, null while queued
 * @param detail why (the refusal code or the reply), null while queued
 * @param agent the agent that made the intent (told its outcome)
 * @param mutation the request as {@link MutationCodec} writes it
 * @param handOverBase the log index this node had applied when it took the write (before the
 *     fence's base, which is taken when it is queued): any record of it commits after it, and
 *     this node's hold may not pass it while the intent is queued ({@link DecidedIntents}); -1
 *     when not known (an entry of an older version: it holds back every forgetting of this node)
 */
record QueuedIntent(String intentId, String entityType, String entityId, WriteClass writeClass,
                    String originNodeId, long originSeq, long leaseEpoch, String fenceToken, double createdAt,
                    int attempts, double firstAttemptAt, double lastAttemptAt, double nextAttemptAt,
                    EnvelopeState state, ReplayOutcome outcome, String detail, Double reconciledAt,
                    String agent, JsonNode mutation, long handOverBase) {

    /** The canonical replay order of seed 001 §9: leaseEpoch, originSeq, createdAt, intentId. */
    static final Comparator<QueuedIntent> CANONICAL = Comparator.comparingLong(QueuedIntent::leaseEpoch)
            .thenComparingLong(QueuedIntent::originSeq)
            .thenComparingDouble(QueuedIntent::createdAt)
            .thenComparing(QueuedIntent::intentId);

    QueuedIntent {
        Objects.requireNonNull(intentId, "intentId");
        Objects.requireNonNull(entityType, "entityType");
        Objects.requireNonNull(entityId, "entityId");
        Objects.requireNonNull(writeClass, "writeClass");
        Objects.requireNonNull(originNodeId, "originNodeId");
        FenceToken.parse(fenceToken);
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(mutation, "mutation");
        if (state == EnvelopeState.RECONCILED && outcome == null) {
            throw new IllegalArgumentException("a reconciled intent needs its outcome");
        }
    }

    /** An entry whose hand-over base is not known. */
    QueuedIntent(String intentId, String entityType, String entityId, WriteClass writeClass,
                 String originNodeId, long originSeq, long leaseEpoch, String fenceToken, double createdAt,
                 int attempts, double firstAttemptAt, double lastAttemptAt, double nextAttemptAt,
                 EnvelopeState state, ReplayOutcome outcome, String detail, Double reconciledAt,
                 String agent, JsonNode mutation) {
        this(intentId, entityType, entityId, writeClass, originNodeId, originSeq, leaseEpoch, fenceToken, createdAt,
                attempts, firstAttemptAt, lastAttemptAt, nextAttemptAt, state, outcome, detail, reconciledAt, agent,
                mutation, -1);
    }

    /** True while it waits for replay. */
    boolean queued() {
        return state == EnvelopeState.QUEUED;
    }

    /** This intent after one more failed replay attempt at {@code at}, retried no sooner than {@code next}. */
    QueuedIntent retried(double at, double next) {
        return new QueuedIntent(intentId, entityType, entityId, writeClass, originNodeId, originSeq, leaseEpoch,
                fenceToken, createdAt, attempts + 1, firstAttemptAt, at, next, state, null, null, null, agent,
                mutation, handOverBase);
    }

    /** This intent reconciled at {@code at} with {@code result}. */
    QueuedIntent reconciled(ReplayOutcome result, String why, double at) {
        return new QueuedIntent(intentId, entityType, entityId, writeClass, originNodeId, originSeq, leaseEpoch,
                fenceToken, createdAt, attempts + 1, firstAttemptAt, at, at, EnvelopeState.RECONCILED, result, why,
                at, agent, mutation, handOverBase);
    }

    ObjectNode toJson() {
        ObjectNode o = MeshJson.MAPPER.createObjectNode();
        o.put("intentId", intentId);
        o.put("entityType", entityType);
        o.put("entityId", entityId);
        o.put("writeClass", writeClass.wire());
        o.put("originNodeId", originNodeId);
        o.put("originSeq", originSeq);
        o.put("leaseEpoch", leaseEpoch);
        o.put("fenceToken", fenceToken);
        o.put("createdAt", createdAt);
        o.put("attempts", attempts);
        o.put("firstAttemptAt", firstAttemptAt);
        o.put("lastAttemptAt", lastAttemptAt);
        o.put("nextAttemptAt", nextAttemptAt);
        o.put("state", state.wire());
        if (outcome != null) {
            o.put("outcome", outcome.wire());
        }
        if (detail != null) {
            o.put("detail", detail);
        }
        if (reconciledAt != null) {
            o.put("reconciledAt", reconciledAt);
        }
        o.put("agent", agent);
        o.set("mutation", mutation);
        if (handOverBase >= 0) {
            o.put("handOverBase", handOverBase); // additive: an older reader ignores it
        }
        return o;
    }

    static QueuedIntent fromJson(JsonNode o) {
        try {
            JsonNode outcome = o.get("outcome");
            JsonNode detail = o.get("detail");
            JsonNode reconciledAt = o.get("reconciledAt");
            return new QueuedIntent(text(o, "intentId"), text(o, "entityType"), text(o, "entityId"),
                    WriteClass.fromWire(text(o, "writeClass")), text(o, "originNodeId"), o.path("originSeq").asLong(),
                    o.path("leaseEpoch").asLong(), text(o, "fenceToken"), o.path("createdAt").asDouble(),
                    o.path("attempts").asInt(), o.path("firstAttemptAt").asDouble(),
                    o.path("lastAttemptAt").asDouble(), o.path("nextAttemptAt").asDouble(),
                    EnvelopeState.fromWire(text(o, "state")),
                    outcome == null || outcome.isNull() ? null : ReplayOutcome.fromWire(outcome.asText()),
                    detail == null || detail.isNull() ? null : detail.asText(),
                    reconciledAt == null || reconciledAt.isNull() ? null : reconciledAt.asDouble(),
                    text(o, "agent"), o.get("mutation"), o.path("handOverBase").asLong(-1));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("malformed queued intent: " + e.getMessage(), e);
        }
    }

    private static String text(JsonNode o, String field) {
        JsonNode v = o.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }
}
