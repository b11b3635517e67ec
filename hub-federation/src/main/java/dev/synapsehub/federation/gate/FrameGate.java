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
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;
import dev.synapsehub.net.tls.FileStamp;
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
 * federation frame and goes on to the hub's own path.
 *
 * <p>The store reloads without a restart: before a frame carrying a {@code signature} object is
 * decided (and at each {@code /metrics} scrape) the file is compared (size, modification time,
 * file key) with what was read, and a changed file is read again with the start-up checks. A file
 * that does not validate is never loaded: the last valid store is kept (not replaced by a partial
 * one), the failure is logged once and counted, and until the file validates again every frame
 * carrying a {@code signature} object is refused as {@code federation_store_invalid}: the gate
 * never falls back to a peering set the operator has since changed (issue 12).
 *
 * <p>With {@code --federation-observe-only} the gate decides as above but refuses nothing: each
 * verdict is logged and counted as observed, and the frame goes on to the hub's own path, as it
 * would without a store (a rollout mode: watch what the store would refuse before enforcing it).
 */
public final class FrameGate implements HubExtension {
    /** The gated verbs (F1). */
    static final Set<String> VERBS = Set.of("claim", "release", "task_update", "handoff", "checkpoint", "resource",
            "resource_offer", "offer_resource");
    private static final Set<String> RESOURCE_ALIASES = Set.of("resource", "resource_offer", "offer_resource");
    private static final Logger LOG = LoggerFactory.getLogger(FrameGate.class);
    /** The refusal, and the /health reason, while the store file does not validate. */
    static final String STORE_INVALID = "federation_store_invalid";

    private final Path file;
    private final boolean requireMessageAuth;
    private final boolean observeOnly;
    private final Map<String, LongAdder> refusals = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> observed = new ConcurrentHashMap<>();
    private final LongAdder reloadsLoaded = new LongAdder();
    private final LongAdder reloadsRefused = new LongAdder();
    /** The last valid store, the stamp of the file as last read, and why that file is invalid (null: valid). */
    private volatile Loaded loaded;
    private HubServices hub;

    /** What the gate works from: the last valid store, the file as last read, its validation error or null. */
    private record Loaded(FederationStore store, Stamp stamp, String error) {
    }

    /** The store file as last seen: size, modification time, file key, and its mode (a chmod is a change too). */
    private record Stamp(FileStamp file, Object mode) {
        static Stamp of(Path p) {
            Object mode;
            try {
                mode = java.nio.file.Files.readAttributes(p, java.nio.file.attribute.PosixFileAttributes.class,
                        java.nio.file.LinkOption.NOFOLLOW_LINKS).permissions();
            } catch (java.io.IOException | UnsupportedOperationException e) {
                mode = null; // no POSIX modes here (or no file): size, time and key still tell
            }
            return new Stamp(FileStamp.of(p), mode);
        }
    }

    /** A gate over {@code store} (read from {@code file}), enforcing, for a hub with {@code --require-message-auth}. */
    public FrameGate(FederationStore store, Path file) {
        this(store, file, true, false);
    }

    private FrameGate(FederationStore store, Path file, boolean requireMessageAuth, boolean observeOnly) {
        this.file = file;
        this.requireMessageAuth = requireMessageAuth;
        this.observeOnly = observeOnly;
        this.loaded = new Loaded(store, file == null ? null : Stamp.of(file), null);
    }

    /**
     * Reads the store with the F3 file checks and applies the start-up rules of F8: a usable scope
     * grant without {@code --require-message-auth} refuses to start; a store without one only
     * warns (through {@code warn}). Throws {@link IllegalArgumentException} with the text.
     */
    public static FrameGate load(Path file, boolean requireMessageAuth, double now, Consumer<String> warn) {
        return load(file, requireMessageAuth, false, now, warn);
    }

    /** As {@link #load(Path, boolean, double, Consumer)}; {@code observeOnly}: decide and count, refuse nothing. */
    public static FrameGate load(Path file, boolean requireMessageAuth, boolean observeOnly, double now,
                                 Consumer<String> warn) {
        Stamp stamp = Stamp.of(file); // before reading: an edit during the read is seen as a change
        FederationStore store;
        try {
            store = read(file, requireMessageAuth, now);
        } catch (TrustFileException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        if (!requireMessageAuth) {
            warn.accept("WARNING --federation-store without --require-message-auth authorises no cross-domain frame; "
                    + "frames signed with a peered key are refused (" + file + ")");
        }
        if (observeOnly) {
            warn.accept("WARNING --federation-observe-only: the federation frame gate refuses nothing; its verdicts are "
                    + "logged and counted (synapse_federation_frame_gate_observed_total) (" + file + ")");
        }
        FrameGate gate = new FrameGate(store, file, requireMessageAuth, observeOnly);
        gate.loaded = new Loaded(store, stamp, null);
        return gate;
    }

    /** Reads and checks the store as at start-up (file checks, then the scope rule of F8). */
    private static FederationStore read(Path file, boolean requireMessageAuth, double now) throws TrustFileException {
        FederationStore store = FederationStore.read(file, "--federation-store:");
        if (!requireMessageAuth) {
            List<String> scoped = new ArrayList<>();
            for (PeeringRecord r : store.records()) {
                if (!r.revoked() && !r.expiredAt(now) && !r.scopeGrants().isEmpty()) {
                    scoped.add(r.domainId());
                }
            }
            if (!scoped.isEmpty()) {
                throw new TrustFileException("--federation-store grants cross-domain scope but --require-message-auth "
                        + "is not set; scope grants of " + String.join(", ", scoped) + " would authorise unsigned frames "
                        + "— add --require-message-auth (with --message-auth-key) or remove the scope grants");
            }
        }
        return store;
    }

    /**
     * Reads the store file again if it changed since it was last read, and returns what the gate
     * works from. A file that validates replaces the store at once (one volatile write: a frame is
     * decided wholly under the old store or wholly under the new); one that does not is refused,
     * logged once per distinct error and counted, and the last valid store is kept.
     */
    Loaded refresh(double now) {
        Loaded l = loaded;
        if (file == null || l.stamp().equals(Stamp.of(file))) {
            return l;
        }
        synchronized (this) {
            l = loaded;
            Stamp stamp = Stamp.of(file);
            if (l.stamp().equals(stamp)) {
                return l;
            }
            try {
                FederationStore next = read(file, requireMessageAuth, now);
                loaded = new Loaded(next, stamp, null);
                reloadsLoaded.increment();
                LOG.info("federation store {} reloaded: {} peering(s)", file, next.records().size());
            } catch (TrustFileException e) {
                loaded = new Loaded(l.store(), stamp, e.getMessage());
                reloadsRefused.increment();
                if (!e.getMessage().equals(l.error())) {
                    LOG.warn("federation store {} no longer validates; it was not loaded, and every signed frame is "
                            + "refused (federation_store_invalid) until it does: {}", file, e.getMessage());
                }
            }
            return loaded;
        }
    }

    /** Reloads the store now if its file changed (tests, operators); true when the file in force validates. */
    public boolean reload() {
        return refresh(hub == null ? System.currentTimeMillis() / 1000.0 : hub.clock().nowSeconds()).error() == null;
    }

    @Override
    public void bind(HubServices context, ClaimService claims) {
        this.hub = context;
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
        if (observeOnly) {
            observed.computeIfAbsent(v.reason(), k -> new LongAdder()).increment();
            LOG.info("Observed (not enforced, --federation-observe-only) {} from '{}' at the federation frame gate: {}{}",
                    r.type(), r.sender(), v.reason(), v.domain() == null ? "" : " (domain '" + v.domain() + "')");
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
        Loaded current = refresh(now);
        if (current.error() != null) {
            return GateVerdict.refuse(STORE_INVALID); // fail closed until the file validates
        }
        FederationStore store = current.store();
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
        Loaded current = refresh(hub == null ? System.currentTimeMillis() / 1000.0 : hub.clock().nowSeconds());
        out.append("# HELP synapse_federation_store_valid 1 when the --federation-store file validates as read at the "
                + "last check, 0 while it does not (signed frames are then refused).\n");
        out.append("# TYPE synapse_federation_store_valid gauge\n");
        out.append("synapse_federation_store_valid ").append(current.error() == null ? 1 : 0).append('\n');
        out.append("# HELP synapse_federation_store_reloads_total Changes of the --federation-store file, by outcome: "
                + "loaded, or refused (did not validate; the last valid store was kept).\n");
        out.append("# TYPE synapse_federation_store_reloads_total counter\n");
        out.append("synapse_federation_store_reloads_total{outcome=\"loaded\"} ").append(reloadsLoaded.sum()).append('\n');
        out.append("synapse_federation_store_reloads_total{outcome=\"refused\"} ").append(reloadsRefused.sum()).append('\n');
        family(out, "synapse_federation_frame_gate_refusals_total", "Frames refused at the federation frame gate, by reason.",
                refusals);
        family(out, "synapse_federation_frame_gate_observed_total", "Frames the federation frame gate would have "
                + "refused under --federation-observe-only, by reason (they went on to the hub's own path).", observed);
    }

    /**
     * {@code federation_store_invalid} while the store file does not validate: every frame carrying
     * a {@code signature} object is refused meanwhile. The file is checked here as for a signed
     * frame, so /health tells it without waiting for one.
     */
    @Override
    public List<String> degradedReasons() {
        Loaded current = refresh(hub == null ? System.currentTimeMillis() / 1000.0 : hub.clock().nowSeconds());
        return current.error() == null ? List.of() : List.of(STORE_INVALID);
    }

    private static void family(StringBuilder out, String name, String help, Map<String, LongAdder> counts) {
        if (counts.isEmpty()) {
            return;
        }
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" counter\n");
        new TreeMap<>(counts).forEach((reason, n) -> out.append(name).append("{reason=\"").append(reason).append("\"} ")
                .append(n.sum()).append('\n'));
    }

    /** Frames refused (or, observe-only, observed) with {@code reason} so far (tests). */
    public long count(String reason) {
        LongAdder a = (observeOnly ? observed : refusals).get(reason);
        return a == null ? 0 : a.sum();
    }

    /** The store file the gate reads. */
    public Path file() {
        return file;
    }
}
