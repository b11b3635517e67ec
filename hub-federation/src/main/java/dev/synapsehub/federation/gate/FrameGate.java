package dev.synapsehub.federation.gate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.tls.CertificatePin;
import dev.synapsehub.federation.trust.FederationStore;
import dev.synapsehub.federation.trust.PeeringRecord;
import dev.synapsehub.federation.trust.ScopeGrant;
import dev.synapsehub.federation.trust.TrustFileException;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.protocol.HubContext;
import dev.synapsehub.net.protocol.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * The federation frame gate (contract A13 F1, F8; {@code --federation-store FILE}): an ordinary
 * mutating frame ({@code claim}, {@code release}, {@code task_update}, {@code handoff},
 * {@code checkpoint}, the resource aliases) carrying a {@code signature} object whose
 * {@code key_id} a peering enrols is a cross-domain frame. The key id and the live TLS client
 * certificate's pin must resolve to the same one peered domain, that peering must be live and
 * grant the sender's namespace, and a {@code scope_grants} entry must name the verb in it.
 *
 * <p>The store holds key id labels, never public keys, and no flag loads them, so no signature
 * can be verified: a frame that passes every check is still refused, as
 * {@code signature_not_verified} (F8, F9.5). The gate therefore never lets a cross-domain frame
 * act; what it adds is the precise reason. A frame whose key id no peering enrols is not a
 * federation frame and goes on to the hub's own path. The store is read once, at start-up.
 */
public final class FrameGate implements HubExtension {
    /** The gated verbs (F1). */
    static final Set<String> VERBS = Set.of("claim", "release", "task_update", "handoff", "checkpoint", "resource",
            "resource_offer", "offer_resource");
    private static final Set<String> RESOURCE_ALIASES = Set.of("resource", "resource_offer", "offer_resource");
    private static final Logger LOG = LoggerFactory.getLogger(FrameGate.class);

    private final FederationStore store;
    private final Path file;
    private final Map<String, LongAdder> refusals = new ConcurrentHashMap<>();
    private HubContext hub;

    /** A gate over {@code store} (read from {@code file}). */
    public FrameGate(FederationStore store, Path file) {
        this.store = store;
        this.file = file;
    }

    /**
     * Reads the store with the F3 file checks and applies the start-up rules of F8: a usable scope
     * grant without {@code --require-message-auth} refuses to start; a store without one only
     * warns (through {@code warn}). Throws {@link IllegalArgumentException} with the text.
     */
    public static FrameGate load(Path file, boolean requireMessageAuth, double now, Consumer<String> warn) {
        FederationStore store;
        try {
            store = FederationStore.read(file, "--federation-store:");
        } catch (TrustFileException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        if (!requireMessageAuth) {
            List<String> scoped = new ArrayList<>();
            for (PeeringRecord r : store.records()) {
                if (!r.revoked() && !r.expiredAt(now) && !r.scopeGrants().isEmpty()) {
                    scoped.add(r.domainId());
                }
            }
            if (!scoped.isEmpty()) {
                throw new IllegalArgumentException("--federation-store grants cross-domain scope but --require-message-auth "
                        + "is not set; scope grants of " + String.join(", ", scoped) + " would authorise unsigned frames "
                        + "— add --require-message-auth (with --message-auth-key) or remove the scope grants");
            }
            warn.accept("WARNING --federation-store without --require-message-auth authorises no cross-domain frame; "
                    + "frames signed with a peered key are refused (" + file + ")");
        }
        return new FrameGate(store, file);
    }

    @Override
    public void bind(HubContext context, ClaimService claims) {
        this.hub = context;
    }

    @Override
    public boolean handles(String type) {
        return false;
    }

    @Override
    public void handle(Request request) {
        throw new UnsupportedOperationException("the frame gate answers no frame type");
    }

    @Override
    public boolean admits(Request r) {
        if (!VERBS.contains(r.type())) {
            return true;
        }
        double now = hub.clock().nowSeconds();
        GateVerdict v = decide(r.type(), r.sender(), r.frame().get("signature"), r.session().peerCertificateChain(), now);
        if (!v.refused()) {
            return true;
        }
        refusals.computeIfAbsent(v.reason(), k -> new LongAdder()).increment();
        LOG.warn("Refused {} from '{}' at the federation frame gate: {}{}", r.type(), r.sender(), v.reason(),
                v.domain() == null ? "" : " (domain '" + v.domain() + "')");
        ObjectNode e = hub.frames().error(r.sender(), "federation denied: " + v.reason(), now);
        e.put("federation_reason", v.reason());
        if (v.domain() != null) {
            e.put("federation_domain", v.domain());
        }
        hub.outbox().send(r.session(), e);
        return false;
    }

    /**
     * The gate's decision for a {@code type} frame from {@code sender} carrying {@code signature},
     * on a socket whose client certificate chain is {@code chain} (empty: none). The first failure wins.
     */
    GateVerdict decide(String type, String sender, JsonNode signature, List<X509Certificate> chain, double now) {
        if (signature == null || !signature.isObject()) {
            return GateVerdict.LOCAL; // no signature object: not a federation frame
        }
        JsonNode keyNode = signature.get("key_id");
        String keyId = keyNode != null && keyNode.isTextual() ? keyNode.textValue().trim() : "";
        List<PeeringRecord> enrolling = new ArrayList<>();
        for (PeeringRecord p : store.records()) {
            if (!keyId.isEmpty() && p.signingKeyIds().contains(keyId)) {
                enrolling.add(p);
            }
        }
        if (enrolling.isEmpty()) {
            return GateVerdict.LOCAL; // a key no peering enrols is handled locally (F8)
        }
        if (chain == null || chain.isEmpty()) {
            return GateVerdict.refuse("peer_certificate_unavailable");
        }
        String pin = CertificatePin.of(chain.get(0)).text();
        List<PeeringRecord> pinned = new ArrayList<>();
        for (PeeringRecord p : store.records()) {
            if (p.certificatePins().contains(pin)) { // exact string, as the serving side compares (F4)
                pinned.add(p);
            }
        }
        if (enrolling.size() != 1 || pinned.size() != 1 || !pinned.get(0).domainId().equals(enrolling.get(0).domainId())) {
            return GateVerdict.refuse("peer_domain_unresolved"); // key and certificate must name one domain
        }
        PeeringRecord peering = enrolling.get(0);
        String domain = peering.domainId();
        if (peering.revoked()) {
            return GateVerdict.refuse("revoked_peering", domain);
        }
        if (peering.expiredAt(now)) {
            return GateVerdict.refuse("expired_peering", domain);
        }
        String namespace = namespaceOf(sender);
        if (namespace.isEmpty() || !peering.namespaces().contains(namespace)) {
            return GateVerdict.refuse("namespace_not_granted", domain);
        }
        if (!inScope(peering.scopeGrants(), type, namespace)) {
            return GateVerdict.refuse("out_of_scope", domain);
        }
        // every check passed, but the store has no public key to verify the signature with (F9.5)
        return GateVerdict.refuse("signature_not_verified", domain);
    }

    private static boolean inScope(List<ScopeGrant> grants, String type, String namespace) {
        for (ScopeGrant g : grants) {
            boolean verb = g.verb().equals(type) || RESOURCE_ALIASES.contains(type) && RESOURCE_ALIASES.contains(g.verb());
            if (verb && g.namespace().equals(namespace)) {
                return true;
            }
        }
        return false;
    }

    /** The project prefix of a name (before the first {@code /}), or empty. */
    static String namespaceOf(String name) {
        int slash = name == null ? -1 : name.indexOf('/');
        return slash < 0 ? "" : name.substring(0, slash);
    }

    @Override
    public void appendMetrics(StringBuilder out) {
        if (refusals.isEmpty()) {
            return;
        }
        out.append("# HELP synapse_federation_frame_gate_refusals_total Frames refused at the federation frame gate, by reason.\n");
        out.append("# TYPE synapse_federation_frame_gate_refusals_total counter\n");
        new TreeMap<>(refusals).forEach((reason, n) -> out.append("synapse_federation_frame_gate_refusals_total{reason=\"")
                .append(reason).append("\"} ").append(n.sum()).append('\n'));
    }

    /** The store file the gate read at start-up. */
    public Path file() {
        return file;
    }
}
