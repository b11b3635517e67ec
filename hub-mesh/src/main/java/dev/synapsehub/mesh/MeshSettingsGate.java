package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;

import java.util.List;

import static dev.synapsehub.net.protocol.PrometheusText.counter;
import static dev.synapsehub.net.protocol.PrometheusText.gauge;

/**
 * What a node's governance settings check shows on its edge (docs/mesh.md, "Nodes agree on their
 * governance settings"): {@code /health} degraded with {@code mesh_settings_mismatch} and the
 * {@code synapse_mesh_settings_mismatch} gauge while this node's settings differ from the
 * leader's, and, fail closed, every claim refused here while the mismatch involves an ownership
 * map (a node with the wrong map would decide who owns a namespace differently from the rest).
 * Runs first among the node's extensions, so a refused claim is neither decided nor forwarded.
 */
final class MeshSettingsGate implements HubExtension {
    /** The /health reason word. */
    static final String REASON = "mesh_settings_mismatch";
    /** The setting whose presence makes every claim governed (names in no listed namespace are refused). */
    static final String OWNERSHIP = "namespace_owner";
    private static final System.Logger LOG = System.getLogger(MeshSettingsGate.class.getName());

    private final MeshSettingsCheck check;
    private volatile HubServices hub;

    MeshSettingsGate(MeshSettingsCheck check) {
        this.check = check;
    }

    @Override
    public void bind(HubServices hub, ClaimService claims) {
        this.hub = hub;
    }

    @Override
    public boolean handles(String type) {
        return false;
    }

    @Override
    public void handle(Request request) {
        throw new IllegalStateException("the settings gate answers no frames");
    }

    /** A claim on a mismatched node, with an ownership map on either side: refused, typed, nothing decided. */
    @Override
    public boolean admits(Request r) {
        if (!"claim".equals(r.type())) {
            return true;
        }
        MeshSettingsCheck.View v = check.view();
        if (!v.mismatched() || !governed(v)) {
            return true;
        }
        check.refusedClaim();
        HubServices services = hub;
        String taskId = r.frame().path("task_id").asText("");
        LOG.log(System.Logger.Level.DEBUG, "refused claim '" + taskId + "' of '" + r.sender()
                + "': this node's governance settings differ from the leader's");
        ObjectNode denied = services.frames().envelope(r.sender(), "claim_denied", "claim refused: this mesh node's"
                + " governance settings differ from the leader " + v.leader() + "'s (" + String.join(", ",
                v.differing()) + "); it decides no claim until restarted with the leader's flags. Retry on"
                + " another node.", services.clock().nowSeconds());
        denied.put("task_id", taskId);
        denied.put("reason_code", "CLAIM_DENIED");
        denied.put("mesh_reason", REASON);
        v.differing().forEach(denied.putArray("mesh_settings_differing")::add);
        services.outbox().send(r.session(), denied);
        return false;
    }

    private boolean governed(MeshSettingsCheck.View v) {
        String mine = check.own().get(OWNERSHIP);
        String theirs = v.leaderSettings() == null ? null : v.leaderSettings().get(OWNERSHIP);
        return (mine != null && !mine.isEmpty()) || (theirs != null && !theirs.isEmpty());
    }

    @Override
    public List<String> degradedReasons() {
        return check.view().mismatched() ? List.of(REASON) : List.of();
    }

    @Override
    public void appendMetrics(StringBuilder out) {
        gauge(out, "synapse_mesh_settings_mismatch",
                "1 while this node's governance settings differ from the leader's, 0 otherwise.",
                check.view().mismatched() ? 1 : 0);
        counter(out, "synapse_mesh_settings_mismatches_total",
                "Distinct governance settings mismatches with a leader seen since start (each logged once).",
                check.mismatchesSeen());
        counter(out, "synapse_mesh_settings_check_failures_total",
                "Asks of the leader for its governance settings that failed since start.", check.checkFailures());
        counter(out, "synapse_mesh_settings_refused_claims_total",
                "Claims refused here because this node's governance settings differ from the leader's, since start.",
                check.refusedClaims());
    }
}
