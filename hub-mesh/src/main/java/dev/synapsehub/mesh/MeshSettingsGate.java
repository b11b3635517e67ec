package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.PeerVerdictFrames;
import dev.synapsehub.net.protocol.Request;

import java.util.List;

import static dev.synapsehub.net.protocol.PrometheusText.counter;
import static dev.synapsehub.net.protocol.PrometheusText.gauge;

/**
 * What a node's governance settings check shows on its edge (docs/mesh.md, "Nodes agree on their
 * governance settings"): {@code /health} degraded with {@code mesh_settings_mismatch} and the
 * {@code synapse_mesh_settings_mismatch} gauge while this node's settings differ from the
 * leader's, and, fail closed, every decision this node would take by its own flags refused here
 * (see {@link #admits}): a node with the wrong map or relay policy would decide differently from
 * the rest. Runs after the frame gates (a sender they refuse gets their refusal) and before any
 * verb, so a refused frame is neither decided nor forwarded.
 */
final class MeshSettingsGate implements HubExtension {
    /** The /health reason word, and the refusals' {@code mesh_reason} while mismatched. */
    static final String REASON = "mesh_settings_mismatch";
    /** The refusals' {@code mesh_reason} while not compared yet (a node holding an ownership map). */
    static final String UNKNOWN = "mesh_settings_unknown";
    /** The setting whose presence makes every claim governed (names in no listed namespace are refused). */
    static final String OWNERSHIP = MeshGovernanceSettings.NAMESPACE_OWNER;
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

    /**
     * A decision this node would take by its own flags while they differ from the leader's (or
     * before it has compared them) is refused, typed, nothing decided: an agent's {@code claim}
     * and a peer's {@code multihub_claim_request} while an ownership map is involved, and an
     * {@code operator_relay_request} (a peer's, or an operator's this node would forward) while
     * a map or the relay policy or routes differ. A keyed retry the replicated ledger already
     * holds is let through, so it gets its first answer (INV-CR-1): only new decisions are refused.
     */
    @Override
    public boolean admits(Request r) {
        Verb verb = Verb.of(r.type());
        if (verb == null) {
            return true;
        }
        MeshSettingsCheck.View v = check.view();
        if (!refuses(verb, v, check.own())) {
            return true;
        }
        HubServices services = hub;
        if (remembered(services, r, verb)) {
            return true; // the ledger answers it on the normal path, as on an agreeing node
        }
        check.refusedClaim();
        String why = v.mismatched()
                ? "this mesh node's governance settings differ from the leader " + v.leader() + "'s ("
                        + String.join(", ", v.differing()) + "); it decides none until restarted with the leader's flags"
                : "this mesh node has not yet compared its governance settings with a leader; it decides none until"
                        + " it has";
        LOG.log(System.Logger.Level.DEBUG, "refused " + r.type() + " of '" + r.sender() + "': " + why);
        switch (verb) {
            case CLAIM -> refuseClaim(services, r, v, why);
            case PEER_CLAIM -> refusePeerClaim(services, r, v, why);
            case RELAY -> refuseRelay(services, r, v);
        }
        return false;
    }

    /** The frames the gate decides about. */
    enum Verb {
        /** An agent's claim. */
        CLAIM,
        /** A peer hub's forwarded claim, decided by this node's ownership map. */
        PEER_CLAIM,
        /** An operator relay, decided (or forwarded) by this node's relay policy, routes and map. */
        RELAY;

        static Verb of(String type) {
            return switch (type) {
                case "claim" -> CLAIM;
                case "multihub_claim_request" -> PEER_CLAIM;
                case "operator_relay_request" -> RELAY;
                default -> null;
            };
        }
    }

    /**
     * True when {@code verb} must be refused under {@code v}: mismatched with a map on either side
     * (and, for a relay, also when the relay policy or routes differ), or not compared yet while
     * this node's own map is set (it would decide by a map nobody has checked).
     */
    static boolean refuses(Verb verb, MeshSettingsCheck.View v, MeshGovernanceSettings own) {
        if (v.state() == MeshSettingsCheck.State.UNKNOWN) {
            return set(own.get(OWNERSHIP));
        }
        if (!v.mismatched()) {
            return false;
        }
        String theirs = v.leaderSettings() == null ? null : v.leaderSettings().get(OWNERSHIP);
        if (set(own.get(OWNERSHIP)) || set(theirs)) {
            return true;
        }
        return verb == Verb.RELAY && v.differing().stream().anyMatch(RELAY_SETTINGS::contains);
    }

    /** The settings an operator relay is decided or routed by (besides the ownership map). */
    static final java.util.Set<String> RELAY_SETTINGS = java.util.Set.of(
            MeshGovernanceSettings.REQUIRE_RELAY_REASON, MeshGovernanceSettings.REQUIRE_TWO_PERSON_RELAY,
            MeshGovernanceSettings.RELAY_PEER);

    private static boolean set(String value) {
        return value != null && !value.isEmpty();
    }

    /** True when the replicated ledger holds a first answer for this keyed request (its retry is replayed). */
    static boolean remembered(HubServices services, Request r, Verb verb) {
        String key = switch (verb) {
            case CLAIM, RELAY -> ledgerKey(r.sender(), r.type(), r.get("idem_key"));
            case PEER_CLAIM -> {
                // ClaimServer decides it under the claimant, in the peer's own ledger scope (ClaimVerbs.claimOnBehalf)
                JsonNode claimant = r.get("claimant");
                JsonNode claim = r.get("claim");
                yield claimant == null || !claimant.isTextual() || claim == null || !claim.isObject() ? null
                        : ledgerKey(claimant.textValue().strip(), "multihub_claim:" + r.sender(), claim.get("idem_key"));
            }
        };
        return key != null && services.actor().remembers(key);
    }

    private static String ledgerKey(String sender, String verb, JsonNode idemKey) {
        return idemKey == null || !idemKey.isTextual() || idemKey.textValue().isEmpty() ? null
                : Idempotency.key(sender, verb, idemKey.textValue());
    }

    private static void refuseClaim(HubServices services, Request r, MeshSettingsCheck.View v, String why) {
        String taskId = r.frame().path("task_id").asText("");
        ObjectNode denied = services.frames().envelope(r.sender(), "claim_denied", "claim refused: " + why
                + ". Retry on another node.", services.clock().nowSeconds());
        denied.put("task_id", taskId);
        denied.put("reason_code", "CLAIM_DENIED");
        mark(denied, v);
        services.outbox().send(r.session(), denied);
    }

    /** A peer's claim: its contract result, not granted, as ClaimServer refuses one it may not decide. */
    private static void refusePeerClaim(HubServices services, Request r, MeshSettingsCheck.View v, String why) {
        String detail = "mesh node refuses to decide: " + why;
        ObjectNode f = PeerVerdictFrames.claimResult(services.frames(), r.sender(), false,
                r.frame().path("task_id").asText(""), r.frame().path("namespace").asText(""), services.hubId(), detail,
                null, services.clock().nowSeconds());
        mark(f, v);
        services.outbox().sendInOrder(r.session(), services.frames().write(f));
    }

    /** An operator relay: its contract result, not applied, detail the mesh reason, as RelayServer refuses. */
    private static void refuseRelay(HubServices services, Request r, MeshSettingsCheck.View v) {
        ObjectNode f = PeerVerdictFrames.relayResult(services.frames(), r, services.frames().hubId(), false, false,
                reason(v), services.clock().nowSeconds());
        mark(f, v);
        services.outbox().sendInOrder(r.session(), services.frames().write(f));
    }

    private static String reason(MeshSettingsCheck.View v) {
        return v.mismatched() ? REASON : UNKNOWN;
    }

    private static void mark(ObjectNode f, MeshSettingsCheck.View v) {
        f.put("mesh_reason", reason(v));
        v.differing().forEach(f.putArray("mesh_settings_differing")::add);
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
                "Claims, peers' forwarded claims and operator relays refused here because this node's governance"
                        + " settings differ from the leader's (or are not compared yet while it holds an ownership map),"
                        + " since start.",
                check.refusedClaims());
    }
}
