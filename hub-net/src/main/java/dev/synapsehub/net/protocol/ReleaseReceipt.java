package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.wire.FieldCoercion;
import dev.synapsehub.net.wire.HubFrames;

import java.util.ArrayList;
import java.util.List;

/** The closeout evidence of a release and its advisory grade (contract §5.5, §6.3). */
public record ReleaseReceipt(
        List<String> evidence,
        List<String> artifacts,
        List<String> knownFailures,
        List<String> changedFiles,
        List<String> generatedArtifacts,
        List<String> approvals,
        String confidence,
        Double freshnessSeconds) {

    static final int MAX_ITEMS = 50;
    static final int MAX_CHARS = 500;
    static final double STALE_AFTER_SECONDS = 3600;

    /** Reads the receipt members of a release frame; malformed members degrade to empty. */
    public static ReleaseReceipt from(JsonNode frame) {
        String confidence = FieldCoercion.text(frame.get("confidence"));
        confidence = confidence == null ? null : truncate(confidence.strip());
        return new ReleaseReceipt(list(frame.get("evidence")), list(frame.get("artifacts")),
                list(frame.get("known_failures")), list(frame.get("changed_files")),
                list(frame.get("generated_artifacts")), list(frame.get("approvals")),
                confidence == null || confidence.isEmpty() ? null : confidence,
                FieldCoercion.nonNegative(frame.get("freshness_seconds")));
    }

    /** True when the receipt carries any evidence (then a progress note is posted). */
    public boolean hasEvidence() {
        return !evidence.isEmpty() || !artifacts.isEmpty() || !knownFailures.isEmpty() || !changedFiles.isEmpty()
                || !generatedArtifacts.isEmpty() || !approvals.isEmpty() || confidence != null
                || freshnessSeconds != null;
    }

    /** The hub's advisory grade. */
    public String epistemicStatus() {
        if (!knownFailures.isEmpty()) {
            return "degraded";
        }
        if (evidence.isEmpty() && artifacts.isEmpty() && changedFiles.isEmpty() && generatedArtifacts.isEmpty()
                && approvals.isEmpty()) {
            return "unsupported";
        }
        if (freshnessSeconds == null) {
            return "needs_freshness";
        }
        return freshnessSeconds > STALE_AFTER_SECONDS ? "stale" : "unverified";
    }

    private List<String> reasons() {
        switch (epistemicStatus()) {
            case "degraded":
                return List.of("known failures reported");
            case "unsupported":
                return List.of("no positive evidence, artifact, changed file, generated artifact, or approval");
            case "needs_freshness":
                return List.of("evidence freshness not supplied");
            case "stale":
                return List.of("evidence older than one hour");
            default:
                return List.of("evidence supplied but not independently verified");
        }
    }

    /** The receipt object of §6.3. */
    public void writeTo(ObjectNode receipt, String taskId, String owner) {
        receipt.put("task_id", taskId);
        receipt.put("owner", owner);
        receipt.put("released", true);
        HubFrames.putStrings(receipt, "evidence", evidence);
        HubFrames.putStrings(receipt, "artifacts", artifacts);
        HubFrames.putStrings(receipt, "known_failures", knownFailures);
        HubFrames.putStrings(receipt, "changed_files", changedFiles);
        HubFrames.putStrings(receipt, "generated_artifacts", generatedArtifacts);
        HubFrames.putStrings(receipt, "approvals", approvals);
        receipt.put("epistemic_status", epistemicStatus());
        HubFrames.putStrings(receipt, "epistemic_reasons", reasons());
        if (confidence != null) {
            receipt.put("confidence", confidence);
        }
        if (freshnessSeconds != null) {
            HubFrames.putFloat(receipt, "freshness_seconds", freshnessSeconds);
        }
    }

    /** A one-line summary for the assessment note. */
    public String summary(String taskId) {
        StringBuilder s = new StringBuilder("release receipt for ").append(taskId).append(": ")
                .append(epistemicStatus());
        if (!evidence.isEmpty()) {
            s.append("; evidence: ").append(String.join(", ", evidence));
        }
        if (!knownFailures.isEmpty()) {
            s.append("; known failures: ").append(String.join(", ", knownFailures));
        }
        if (confidence != null) {
            s.append("; confidence: ").append(confidence);
        }
        return truncate(s.toString());
    }

    private static List<String> list(JsonNode node) {
        List<String> out = new ArrayList<>();
        if (node == null || node.isNull()) {
            return out;
        }
        if (node.isTextual()) {
            add(out, node.textValue());
        } else if (node.isArray()) {
            for (JsonNode item : node) {
                if (out.size() >= MAX_ITEMS) {
                    break;
                }
                if (item.isTextual()) {
                    add(out, item.textValue());
                }
            }
        }
        return out;
    }

    private static void add(List<String> out, String value) {
        String v = value.strip();
        if (!v.isEmpty()) {
            out.add(truncate(v));
        }
    }

    private static String truncate(String s) {
        return s.length() <= MAX_CHARS ? s : s.substring(0, MAX_CHARS);
    }
}
