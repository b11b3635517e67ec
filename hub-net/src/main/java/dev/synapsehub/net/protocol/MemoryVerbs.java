package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.MemoryCommand;
import dev.synapsehub.core.reply.MemoryReply;
import dev.synapsehub.net.wire.CanonicalJson;
import dev.synapsehub.net.wire.FieldCoercion;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Participant memory (wire contract A12): {@code recall_log} (telemetry, acknowledged privately
 * with {@code recall_logged}) and {@code finding} (parsed, gated by the emit gate, stamped with
 * the bound name and receive time, then broadcast as {@code finding_recorded}, or refused
 * privately with {@code finding_rejected}). Both are journaled with {@code --db}, where they also
 * honour {@code idem_key} (PM6); the writer charges the finding quota (PM5). No verb reads memory
 * back.
 */
final class MemoryVerbs {
    private static final JsonNodeFactory NF = JsonNodeFactory.instance;
    private static final Set<String> SCIENTIFIC = Set.of("codebase-fact", "lesson", "dead-end", "outcome");
    private static final Set<String> NEEDS_EVIDENCE = Set.of("codebase-fact", "lesson", "dead-end");

    private final VerbSupport support;
    private final Outbox outbox;
    private final HubFrames frames;
    private final WireJson json;
    private final HubMetrics metrics;
    private final boolean journaled;
    private final int maxFindingsPerAgent;

    /**
     * The memory verbs; with {@code journaled} they are keyed and journaled (PM6), and the writer
     * admits at most {@code maxFindingsPerAgent} findings per bound name (PM5).
     */
    MemoryVerbs(VerbSupport support, Outbox outbox, HubFrames frames, WireJson json, HubMetrics metrics,
            boolean journaled, int maxFindingsPerAgent) {
        this.support = support;
        this.outbox = outbox;
        this.frames = frames;
        this.json = json;
        this.metrics = metrics;
        this.journaled = journaled;
        this.maxFindingsPerAgent = maxFindingsPerAgent;
    }

    /** True for the verbs handled here. */
    static boolean handles(String type) {
        return "recall_log".equals(type) || "finding".equals(type);
    }

    /** Handles one request (on the connection's event loop). */
    void handle(Request r) {
        if ("recall_log".equals(r.type())) {
            recall(r);
        } else {
            finding(r);
        }
    }

    // ---------------------------------------------------------------------------------------
    // recall_log (PM2)

    private void recall(Request r) {
        double at = support.now();
        ObjectNode record = NF.objectNode();
        JsonNode q = r.get("query_text");
        record.put("query_text", FieldCoercion.truthy(q) ? ReleaseReceipt.pythonText(q, true) : "");
        ArrayNode ids = record.putArray("returned_claim_ids");
        JsonNode returned = r.get("returned_claim_ids");
        if (returned != null && returned.isArray()) {
            returned.forEach(id -> ids.add(ReleaseReceipt.pythonText(id, true)));
        }
        record.put("was_used", FieldCoercion.truthy(r.get("was_used")));
        record.put("abstained", FieldCoercion.truthy(r.get("abstained")));
        record.put("by", r.sender());
        record.put("at", at);
        submit(r, MemoryCommand.Kind.RECALL, record, (reply, decidedAt) ->
                frames.envelope(r.sender(), "recall_logged", "recall logged", decidedAt), false);
    }

    // ---------------------------------------------------------------------------------------
    // finding (PM3)

    private void finding(Request r) {
        double at = support.now();
        String statement = orEmpty(text(r.get("statement")));
        String subkind = orEmpty(text(r.get("subkind")));
        String evidenceKind = text(r.get("evidence_kind"));
        String claimStatus = text(r.get("claim_status"));
        String freshness = text(r.get("freshness"));
        String evidenceRef = text(r.get("evidence_ref"));
        String lifecycle = text(r.get("lifecycle"));
        String supersedes = text(r.get("supersedes"));
        String substrate = text(r.get("execution_substrate"));
        JsonNode prov = r.get("provenance");
        JsonNode validity = r.get("validity");
        boolean hasProvenance = prov != null && prov.isObject();
        boolean hasValidity = validity != null && validity.isObject();
        JsonNode vas = r.get("verified_at_source");
        boolean checked = vas != null && vas.isObject() && FieldCoercion.truthy(vas.get("checked_this_session"));
        String sourceRef = vas != null && vas.isObject() && vas.path("source_ref").isTextual()
                ? vas.path("source_ref").textValue() : "";
        if (freshness == null) {
            freshness = checked ? "verified-at-source"
                    : evidenceRef != null || !sourceRef.isEmpty() ? "traceable-unchecked" : "untraceable";
        }

        List<String> rejected = new ArrayList<>();
        if (statement.isEmpty()) {
            rejected.add("empty statement");
        }
        if (subkind.isEmpty()) {
            rejected.add("empty subkind");
        }
        if (!hasProvenance) {
            rejected.add("missing provenance (INV-5)");
        }
        if (!hasValidity) {
            rejected.add("missing validity (INV-5)");
        }
        if (claimStatus == null && SCIENTIFIC.contains(subkind)) {
            rejected.add("missing claim_status for scientific subkind '" + subkind + "' (INV-5)");
        }
        if (evidenceKind == null && NEEDS_EVIDENCE.contains(subkind)) {
            rejected.add("missing evidence_kind for subkind '" + subkind + "'");
        }
        if ("falsified".equals(evidenceKind) && "reference-validated".equals(claimStatus)) {
            rejected.add("LOCK-4: falsified evidence cannot claim reference-validated");
        }
        if (!rejected.isEmpty()) {
            reject(r, rejected);
            return;
        }

        List<String> floors = new ArrayList<>();
        if ("falsified".equals(evidenceKind) && !"refuted".equals(claimStatus)) {
            floors.add("INV-2: falsified evidence renders the claim refuted, not '"
                    + (claimStatus == null ? "None" : claimStatus) + "'");
            claimStatus = "refuted";
        }
        boolean asserted = "producer-asserted".equals(evidenceKind);
        if (asserted && "verified-at-source".equals(freshness)) {
            floors.add("producer-asserted testimony cannot be verified-at-source; freshness lowered to "
                    + "traceable-unchecked");
            freshness = "traceable-unchecked";
        }
        if (asserted && ("reference-validated".equals(claimStatus) || "bounded-model".equals(claimStatus))) {
            floors.add("INV-6: producer-asserted testimony cannot be born '" + claimStatus
                    + "'; capped at bounded-support");
            claimStatus = "bounded-support";
        }
        if ("reference-validated".equals(claimStatus)
                && (evidenceRef == null || !"verified-at-source".equals(freshness))) {
            floors.add("INV-1: reference-validated requires an evidence_ref and freshness==verified-at-source; "
                    + "floored to bounded-support");
            claimStatus = "bounded-support";
        }

        String name = r.sender();
        ObjectNode record = NF.objectNode();
        record.put("statement", statement);
        record.put("subkind", subkind);
        record.put("evidence_kind", evidenceKind);
        record.put("claim_status", claimStatus);
        record.put("freshness", freshness);
        record.put("evidence_ref", evidenceRef);
        ObjectNode p = record.putObject("provenance");
        String project = text(prov.get("project"));
        p.put("project", project != null ? project : name.contains("/") ? name.substring(0, name.indexOf('/')) : name);
        p.put("actor", name);
        p.put("session", text(prov.get("session")));
        JsonNode seq = prov.get("source_event_seq");
        if (seq != null && seq.isNumber()) {
            p.put("source_event_seq", seq.isIntegralNumber() ? seq.bigIntegerValue().longValue() : (long) seq.doubleValue());
        } else {
            p.putNull("source_event_seq");
        }
        putNumber(p, "ts", prov.get("ts"), at);
        ObjectNode v = record.putObject("validity");
        putNumber(v, "valid_from", validity.get("valid_from"), at);
        putNumber(v, "valid_to", validity.get("valid_to"), null);
        record.put("lifecycle", lifecycle == null ? "active" : lifecycle);
        record.put("supersedes", supersedes);
        ObjectNode verified = record.putObject("verified_at_source");
        verified.put("checked_this_session", checked);
        verified.put("source_ref", sourceRef);
        verified.put("by", name);
        verified.put("at", at);
        JsonNode confidence = r.get("producer_confidence");
        if (confidence != null && confidence.isNumber()) {
            record.set("producer_confidence", confidence);
        } else {
            record.putNull("producer_confidence");
        }
        record.put("execution_substrate", substrate);
        record.set("entities", strings(r.get("entities")));
        record.set("tags", strings(r.get("tags")));

        String verdict = floors.isEmpty() ? "accept" : "floor";
        String payload = floors.isEmpty() ? "finding recorded" : String.join("; ", floors);
        String finalStatus = claimStatus;
        submit(r, MemoryCommand.Kind.FINDING, record, (reply, decidedAt) -> {
            ObjectNode f = frames.envelope("all", "finding_recorded", payload, decidedAt);
            f.put("verdict", verdict);
            f.put("claim_status", finalStatus);
            f.set("finding", record);
            return f;
        }, true);
    }

    private void reject(Request r, List<String> reasons) {
        ObjectNode f = frames.envelope(r.sender(), "finding_rejected", String.join("; ", reasons), support.now());
        ArrayNode list = f.putArray("reasons");
        reasons.forEach(list::add);
        outbox.send(r.session(), f);
    }

    /**
     * Submits a memory record; {@code frame} renders the success frame at the decision time
     * (stored verbatim for a keyed request).
     */
    private void submit(Request r, MemoryCommand.Kind kind, ObjectNode record,
            VerbSupport.GrantRenderer.OfType<MemoryReply> frame, boolean broadcast) {
        // without a journal both verbs ignore idem_key (PM6); with one, a key makes them apply once
        boolean keyed = journaled && r.get("idem_key") != null && !r.get("idem_key").isNull();
        MemoryCommand command = new MemoryCommand(r.sender(), kind, CanonicalJson.writeInOrder(record, true),
                maxFindingsPerAgent);
        VerbSupport.GrantRenderer.OfType<MemoryReply> render = (m, decidedAt) -> {
            ObjectNode f = frame.render(m, decidedAt);
            if (keyed) {
                f.put("seq", m.seq()); // only keyed + --db (PM6)
            }
            return f;
        };
        support.submit(r, command, journaled, VerbSupport.GrantRenderer.typed(MemoryReply.class, render),
                DecisionPublisher.typed(MemoryReply.class, (d, m) -> {
                    String text = d.storedResponse() != null ? d.storedResponse()
                            : frames.write(render.render(m, d.at()));
                    if (broadcast) {
                        outbox.broadcast(text, d.request().session());
                    } else {
                        outbox.send(d.request().session(), text);
                    }
                }, (d, refusal) -> {
                    // the finding quota (PM5): private, the single reason; nothing broadcast or journaled
                    reject(d.request(), List.of(refusal.message()));
                }), (req, settled) -> answerSettled(req, kind, settled));
    }

    /** A keyed repeat, a reused key, or a refusal, with the contract's texts (PM6). */
    private void answerSettled(Request r, MemoryCommand.Kind kind, Outcome settled) {
        if (settled instanceof Outcome.Replayed replayed) {
            metrics.idempotentReplays.incrementAndGet();
            outbox.send(r.session(), replayed.response()); // privately, even a finding_recorded
        } else if (settled instanceof Outcome.IdempotencyConflict conflict) {
            metrics.idempotencyConflicts.incrementAndGet();
            ObjectNode e = frames.error(r.sender(), "Idempotency key was already used for a different request.",
                    support.now());
            JsonNode original = json.parse(conflict.originalResponse());
            if (original != null && original.isObject()) {
                for (String member : new String[] {"timestamp", "hub_id"}) {
                    if (original.has(member)) {
                        e.set(member, original.get(member));
                    }
                }
            }
            e.put("error_code", "idempotency_conflict");
            outbox.send(r.session(), e);
        } else if (settled instanceof Outcome.Refused refused) {
            String message = refused.reason() == Outcome.Reason.JOURNAL_FAILED
                    ? (kind == MemoryCommand.Kind.RECALL ? "Recall event was not journalled; mutation rolled back."
                    : "Finding was not journalled; mutation rolled back.")
                    : refused.message();
            ObjectNode e = frames.error(r.sender(), message, support.now());
            e.put("error_code", refused.reason().name().toLowerCase(Locale.ROOT));
            if (refused.reason() == Outcome.Reason.INTERNAL_FAULT) {
                metrics.faults.incrementAndGet(); // the actor logged it with its batch
                outbox.close(r.session(), e, 1011, "unexpected fault");
            } else {
                outbox.send(r.session(), e);
            }
        }
    }

    /** PM3.1: a trimmed string; a non-string or blank one is null. */
    private static String text(JsonNode n) {
        if (n == null || !n.isTextual()) {
            return null;
        }
        String s = ReleaseReceipt.pythonStrip(n.textValue());
        return s.isEmpty() ? null : s;
    }

    private static String orEmpty(String s) {
        return s == null ? "" : s;
    }

    /**
     * A JSON number is kept; anything else (a bool, a string number) is unset: null, or
     * {@code unset} when given (the receive time, PM3.3).
     */
    private static void putNumber(ObjectNode o, String name, JsonNode n, Double unset) {
        if (n != null && n.isNumber()) {
            o.set(name, n);
        } else if (unset != null) {
            o.put(name, unset.doubleValue());
        } else {
            o.putNull(name);
        }
    }

    /** The non-blank trimmed strings of an array; a non-array is empty. */
    private static ArrayNode strings(JsonNode n) {
        ArrayNode out = NF.arrayNode();
        if (n != null && n.isArray()) {
            n.forEach(item -> {
                String s = text(item);
                if (s != null) {
                    out.add(s);
                }
            });
        }
        return out;
    }
}
