package dev.synapsehub.cli;

import dev.synapsehub.client.tls.CertificatePin;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.PollBudget;
import dev.synapsehub.federation.follow.WatchPeer;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.route.ClaimRoute;
import dev.synapsehub.federation.route.ForwardSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.federation.trust.SecureFile;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.federation.trust.TrustFileException;
import picocli.CommandLine.Option;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The federation options of {@code synapse-hub} when it runs the hub (docs/federation.md),
 * validated once with the start-up refusals of contract F6 (exit 2).
 */
public final class FederationOptions {

    @Option(names = "--multihub-serving-policy", paramLabel = "FILE",
            description = "Serve this hub's log and decide forwarded claims for the peer hubs this JSON policy "
                    + "grants (contract 11.4): version 1, federation_store, client_ca_file, grants. Needs "
                    + "--tls-certfile/--tls-keyfile; peers must present a client certificate from client_ca_file "
                    + "whose pin their peering lists. Files must be owner-only (chmod 600), no symlinks. Edits are "
                    + "picked up without a restart; an invalid edit refuses every peer until it validates. "
                    + "Without it no peer is served.")
    Path servingPolicy;

    @Option(names = "--namespace-owner", paramLabel = "NS=HUB_ID",
            description = "The hub that owns namespace NS (the project prefix of agent names, proj of proj/a1); "
                    + "repeatable, needs --hub-id. With any owner configured only namespaces owned by this hub grant "
                    + "here; others are forwarded (--claim-peer) or refused; names in no listed namespace are refused.")
    List<String> namespaceOwners = new ArrayList<>();

    @Option(names = "--multihub-watch", paramLabel = "PEER=URI",
            description = "Follow peer hub PEER's log at URI (wss://host:port) into the advisory view; repeatable, "
                    + "needs --namespace-owner. Observations persist beside --db and feed partition detection.")
    List<String> watches = new ArrayList<>();

    @Option(names = "--multihub-watch-interval", paramLabel = "SECONDS", defaultValue = "30",
            description = "Seconds between polls of each watched peer (default: ${DEFAULT-VALUE}; at least 1). A peer "
                    + "behind by more than one poll's budget is polled again at once until caught up.")
    double watchInterval;

    @Option(names = "--multihub-watch-token", paramLabel = "TOKEN", description = "Connect token sent to watched peers.")
    String watchToken;

    @Option(names = "--multihub-watch-pin", paramLabel = "PEER=sha256:HEX",
            description = "Trust exactly the server certificate with this pin for watched peer PEER (its URI must be wss://).")
    List<String> watchPins = new ArrayList<>();

    @Option(names = "--multihub-client-certfile", paramLabel = "PEM",
            description = "Client certificate this hub presents to every peer (watch and claim routes); with "
                    + "--multihub-client-keyfile. Owner-only file. When set, every route needs a pin. Edits are picked up "
                    + "before the next peer operation; while the pair does not validate every peer operation is refused.")
    Path clientCertFile;

    @Option(names = "--multihub-client-keyfile", paramLabel = "PEM",
            description = "Private key (PKCS#8 PEM) of --multihub-client-certfile. Owner-only file.")
    Path clientKeyFile;

    @Option(names = "--federation-offer", paramLabel = "FILE",
            description = "Offer this hub's own bundle (a peering record without provenance) to "
                    + "`synapse-hub federation fetch`; checked at start, re-read on every request.")
    Path offerFile;

    @Option(names = "--federation-store", paramLabel = "FILE",
            description = "Turn on the federation frame gate (contract F8): a claim-family frame signed with a key id "
                    + "this store enrols is refused with the exact reason (no peer public key can be loaded, so none is "
                    + "verified). Owner-only file; edits are picked up without a restart (one that does not validate "
                    + "refuses every signed frame until it does). A store with scope grants needs --require-message-auth.")
    Path federationStore;

    @Option(names = "--federation-observe-only",
            description = "The federation frame gate refuses nothing: it logs and counts what it would refuse "
                    + "(synapse_federation_frame_gate_observed_total) and the frame goes on as without a store. Needs "
                    + "--federation-store.")
    boolean federationObserveOnly;

    /** The federation frame gate, or null without {@code --federation-store}; refusals as F8 (exit 2). */
    dev.synapsehub.federation.gate.FrameGate frameGate(boolean requireMessageAuth, Consumer<String> warn) {
        if (federationObserveOnly && federationStore == null) {
            throw new IllegalArgumentException("--federation-observe-only requires --federation-store; there is no "
                    + "peering to observe.");
        }
        return federationStore == null ? null : dev.synapsehub.federation.gate.FrameGate.load(federationStore,
                requireMessageAuth, federationObserveOnly, System.currentTimeMillis() / 1000.0, warn);
    }

    @Option(names = "--require-relay-reason", description = "Refuse an operator relay (operator_relay_request) "
            + "that carries no reason (detail reason_required).")
    boolean requireRelayReason;

    @Option(names = "--require-two-person-relay", description = "An operator relay is applied only when a second, "
            + "distinct authorised peer asks for the same action; the first is recorded as pending.")
    boolean requireTwoPersonRelay;

    @Option(names = "--claim-peer", paramLabel = "HUB_ID=URI",
            description = "Forward claims in namespaces owned by HUB_ID to it at URI (wss://host:port) and relay its "
                    + "verdict; repeatable, needs --namespace-owner. Without a route such claims are refused here.")
    List<String> claimPeers = new ArrayList<>();

    @Option(names = "--claim-peer-token", paramLabel = "TOKEN", description = "Connect token sent with forwarded claims.")
    String claimPeerToken;

    @Option(names = "--claim-peer-pin", paramLabel = "HUB_ID=sha256:HEX",
            description = "Trust exactly the server certificate with this pin for claim route HUB_ID (its URI must be wss://).")
    List<String> claimPeerPins = new ArrayList<>();

    @Option(names = "--relay-peer", paramLabel = "HUB_ID=URI",
            description = "Send operator relays (operator_relay_request from a client on this machine) for namespaces "
                    + "owned by HUB_ID to it at URI (wss://host:port) and return its operator_relay_result; repeatable, "
                    + "needs --namespace-owner. Without a route such relays are decided, and refused, here.")
    List<String> relayPeers = new ArrayList<>();

    @Option(names = "--relay-peer-token", paramLabel = "TOKEN", description = "Connect token sent with relayed operator requests.")
    String relayPeerToken;

    @Option(names = "--relay-peer-pin", paramLabel = "HUB_ID=sha256:HEX",
            description = "Trust exactly the server certificate with this pin for relay route HUB_ID (its URI must be wss://).")
    List<String> relayPeerPins = new ArrayList<>();

    @Option(names = "--federation-peers", paramLabel = "FILE",
            description = "Watch, claim and relay routes (URI, pin, token or token_file) from this owner-only JSON file "
                    + "instead of --multihub-watch, --claim-peer, --relay-peer and their pin and token flags (given "
                    + "together, start is refused). The file and the token files it names are checked about once a "
                    + "second on a thread of their own: an edit that validates is used from that check on; one that "
                    + "does not refuses every peer operation until it does (docs/federation.md, \"The peers file\").")
    Path peersFile;

    /**
     * The serving trust, loaded strictly; throws {@link IllegalArgumentException} with the
     * contract's refusal text (exit 2).
     */
    ServingTrust servingTrust(boolean tlsConfigured, Consumer<String> log) {
        if (servingPolicy == null) {
            return ServingTrust.none();
        }
        if (!tlsConfigured) {
            throw new IllegalArgumentException("native WSS requires both --tls-certfile and --tls-keyfile"
                    + " (--multihub-serving-policy authenticates peers by their TLS client certificate)");
        }
        try {
            return ServingTrust.load(servingPolicy, log);
        } catch (TrustFileException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** Validated settings; {@code explicitHubId} is the --hub-id given (null when defaulted). */
    FederationSettings settings(ServingTrust trust, String explicitHubId, String effectiveHubId) {
        NamespaceOwners owners = owners(explicitHubId, effectiveHubId);
        watchInterval(); // out of range is refused whether or not a peer is watched yet
        if (peersFile != null) {
            return peersFileSettings(trust, owners);
        }
        WatchSettings watch = watchSettings(owners);
        if (offerFile != null) {
            try {
                dev.synapsehub.federation.serve.OfferServer.read(offerFile);
            } catch (TrustFileException e) {
                throw new IllegalArgumentException("cannot serve --federation-offer: " + e.getMessage(), e);
            }
        }
        return new FederationSettings(trust, watch, owners, forwardSettings(owners), offerFile,
                new FederationSettings.RelayPolicy(requireRelayReason, requireTwoPersonRelay), relaySettings(owners));
    }

    /**
     * The settings with routes from {@code --federation-peers}, loaded once now (a file that does
     * not validate refuses the start, exit 2). Given with any route flag the start is refused: two
     * sources of routes, one reloaded and one fixed, would leave an operator guessing which one a
     * peer operation used.
     */
    private FederationSettings peersFileSettings(ServingTrust trust, NamespaceOwners owners) {
        List<String> both = new ArrayList<>();
        addIf(both, !watches.isEmpty(), "--multihub-watch");
        addIf(both, !watchPins.isEmpty(), "--multihub-watch-pin");
        addIf(both, watchToken != null, "--multihub-watch-token");
        addIf(both, !claimPeers.isEmpty(), "--claim-peer");
        addIf(both, !claimPeerPins.isEmpty(), "--claim-peer-pin");
        addIf(both, claimPeerToken != null, "--claim-peer-token");
        addIf(both, !relayPeers.isEmpty(), "--relay-peer");
        addIf(both, !relayPeerPins.isEmpty(), "--relay-peer-pin");
        addIf(both, relayPeerToken != null, "--relay-peer-token");
        if (!both.isEmpty()) {
            throw new IllegalArgumentException("--federation-peers cannot be combined with " + String.join(", ", both)
                    + ": give every route, pin and token in the peers file, or none there");
        }
        if (!owners.configured()) {
            throw new IllegalArgumentException("--federation-peers requires --namespace-owner; routes are keyed by the "
                    + "owning hub id, and the watch feeds partition detection against the ownership map.");
        }
        WatchSettings noRoutes = watchSettings(owners); // checks the client identity flags; no watch flag is given
        dev.synapsehub.federation.trust.PeerRoutes routes;
        try {
            routes = dev.synapsehub.federation.trust.PeersFile.load(peersFile, clientCertFile != null);
        } catch (TrustFileException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        List<WatchPeer> peers = new ArrayList<>();
        routes.watch().values().forEach(r -> peers.add(new WatchPeer(r.name(), r.uri(), r.pin())));
        WatchSettings watch = new WatchSettings(peers, watchInterval(),
                null, clientCertFile, clientKeyFile, PollBudget.DEFAULT, noRoutes.replyTimeout());
        return new FederationSettings(trust, watch, owners, fileRoutes(routes.claim()), offerFile,
                new FederationSettings.RelayPolicy(requireRelayReason, requireTwoPersonRelay),
                fileRoutes(routes.relay()), peersFile.toAbsolutePath().normalize());
    }

    /** The routes the file gave at start (the hub asks the file again before each operation). */
    private ForwardSettings fileRoutes(Map<String, dev.synapsehub.federation.trust.PeerRoute> routes) {
        List<ClaimRoute> list = new ArrayList<>();
        routes.values().forEach(r -> list.add(new ClaimRoute(r.name(), r.uri(), r.pin())));
        return new ForwardSettings(ForwardSettings.byHub(list), null, clientCertFile, clientKeyFile,
                ForwardSettings.BOUND);
    }

    private static void addIf(List<String> out, boolean given, String flag) {
        if (given) {
            out.add(flag);
        }
    }

    private ForwardSettings forwardSettings(NamespaceOwners owners) {
        return routes("--claim-peer", claimPeers, "--claim-peer-pin", claimPeerPins, claimPeerToken, owners,
                "--claim-peer requires --namespace-owner; a forwarding route is keyed by the owning hub id, and "
                        + "without an ownership map no claim is remote-owned to forward.");
    }

    /** {@code --relay-peer} routes (operator relays to the owning hub), refused as contract F6 says. */
    private ForwardSettings relaySettings(NamespaceOwners owners) {
        return routes("--relay-peer", relayPeers, "--relay-peer-pin", relayPeerPins, relayPeerToken, owners,
                "--relay-peer requires --namespace-owner; relay routes are keyed by the authoritative owning hub id.");
    }

    /** Routes to owning hubs given by {@code flag} (HUB_ID=URI) and {@code pinFlag} (HUB_ID=sha256:HEX). */
    private ForwardSettings routes(String flag, List<String> specs, String pinFlag, List<String> pinSpecs, String token,
                                   NamespaceOwners owners, String needsOwners) {
        if (specs.isEmpty()) {
            if (!pinSpecs.isEmpty()) {
                throw new IllegalArgumentException(pinFlag + " requires " + flag + "; a pin without a route cannot "
                        + "secure any owner connection.");
            }
            return ForwardSettings.none();
        }
        if (!owners.configured()) {
            throw new IllegalArgumentException(needsOwners);
        }
        Map<String, URI> routes = new LinkedHashMap<>();
        for (String spec : specs) {
            String[] kv = pair(spec, flag + " must use HUB_ID=URI, got '" + spec + "'");
            if (routes.put(kv[0], uri(kv[1], spec)) != null) {
                throw new IllegalArgumentException(flag + " names hub '" + kv[0] + "' twice");
            }
        }
        Map<String, CertificatePin> pins = new LinkedHashMap<>();
        TreeSet<String> unknown = new TreeSet<>();
        for (String spec : pinSpecs) {
            String[] kv = pair(spec, pinFlag + " must use HUB_ID=sha256:<hex>, got '" + spec + "'");
            if (!routes.containsKey(kv[0])) {
                unknown.add(kv[0]);
                continue;
            }
            try {
                pins.put(kv[0], CertificatePin.parse(kv[1]));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(pinFlag + " pin must be sha256:<hex>, got '" + kv[1] + "'");
            }
        }
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException(pinFlag + " names hubs not configured by " + flag + ": "
                    + String.join(", ", unknown));
        }
        List<ClaimRoute> list = new ArrayList<>();
        for (Map.Entry<String, URI> r : routes.entrySet()) {
            if (clientCertFile != null && !pins.containsKey(r.getKey())) {
                throw new IllegalArgumentException("multi-hub client identity requires " + pinFlag + " for hub '"
                        + r.getKey() + "'");
            }
            if (pins.containsKey(r.getKey()) && !"wss".equalsIgnoreCase(r.getValue().getScheme())) {
                throw new IllegalArgumentException(pinFlag + " for '" + r.getKey() + "' requires a wss:// peer "
                        + "URI, got " + r.getValue());
            }
            list.add(new ClaimRoute(r.getKey(), r.getValue(), pins.get(r.getKey())));
        }
        return new ForwardSettings(ForwardSettings.byHub(list), token, clientCertFile, clientKeyFile,
                ForwardSettings.BOUND);
    }

    private NamespaceOwners owners(String explicitHubId, String effectiveHubId) {
        if (namespaceOwners.isEmpty()) {
            return NamespaceOwners.none(effectiveHubId);
        }
        if (explicitHubId == null || explicitHubId.isBlank()) {
            throw new IllegalArgumentException("--namespace-owner requires --hub-id; the ownership map compares each "
                    + "namespace's owner against this hub's own stable id.");
        }
        Map<String, String> map = new LinkedHashMap<>();
        for (String spec : namespaceOwners) {
            String[] kv = pair(spec, "--namespace-owner must use NS=HUB_ID, got '" + spec + "'");
            if (map.put(kv[0], kv[1]) != null) {
                throw new IllegalArgumentException("--namespace-owner names namespace '" + kv[0] + "' twice");
            }
        }
        return new NamespaceOwners(effectiveHubId, map);
    }

    private WatchSettings watchSettings(NamespaceOwners owners) {
        if ((clientCertFile == null) != (clientKeyFile == null)) {
            throw new IllegalArgumentException("--multihub-client-certfile and --multihub-client-keyfile must be "
                    + "configured together.");
        }
        if (clientCertFile != null) {
            try {
                SecureFile.read(clientCertFile, "--multihub-client-certfile:", 1024 * 1024);
                SecureFile.read(clientKeyFile, "--multihub-client-keyfile:", 1024 * 1024);
            } catch (TrustFileException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
        }
        if (watches.isEmpty()) {
            if (!watchPins.isEmpty()) {
                throw new IllegalArgumentException("--multihub-watch-pin names '" + pair(watchPins.get(0),
                        "--multihub-watch-pin must use PEER=sha256:<hex>, got '" + watchPins.get(0) + "'")[0]
                        + "', which --multihub-watch does not watch");
            }
            return WatchSettings.none();
        }
        if (!owners.configured()) {
            throw new IllegalArgumentException("--multihub-watch requires --namespace-owner; the watch feeds partition "
                    + "detection, and without an ownership map there is nothing to detect against.");
        }
        Map<String, URI> peers = new LinkedHashMap<>();
        for (String spec : watches) {
            String[] kv = pair(spec, "--multihub-watch must use PEER=URI, got '" + spec + "'");
            if (peers.put(kv[0], uri(kv[1], spec)) != null) {
                throw new IllegalArgumentException("--multihub-watch names peer '" + kv[0] + "' twice");
            }
        }
        Map<String, CertificatePin> pins = new LinkedHashMap<>();
        for (String spec : watchPins) {
            String[] kv = pair(spec, "--multihub-watch-pin must use PEER=sha256:<hex>, got '" + spec + "'");
            if (!peers.containsKey(kv[0])) {
                throw new IllegalArgumentException("--multihub-watch-pin names '" + kv[0]
                        + "', which --multihub-watch does not watch");
            }
            try {
                pins.put(kv[0], CertificatePin.parse(kv[1]));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--multihub-watch-pin pin must be sha256:<hex>, got '" + kv[1] + "'");
            }
        }
        if (clientCertFile != null) {
            TreeSet<String> missing = new TreeSet<>(peers.keySet());
            missing.removeAll(pins.keySet());
            if (!missing.isEmpty()) {
                throw new IllegalArgumentException("multi-hub client identity requires a certificate pin for every "
                        + "watched peer; missing: " + String.join(", ", missing));
            }
        }
        List<WatchPeer> list = new ArrayList<>();
        peers.forEach((label, uri) -> {
            if (pins.containsKey(label) && !"wss".equalsIgnoreCase(uri.getScheme())) {
                throw new IllegalArgumentException("--multihub-watch-pin for '" + label + "' requires a wss:// peer "
                        + "URI, got " + uri);
            }
            list.add(new WatchPeer(label, uri, pins.get(label)));
        });
        return new WatchSettings(list, watchInterval(), watchToken,
                clientCertFile, clientKeyFile, PollBudget.DEFAULT, Duration.ofSeconds(10));
    }

    /**
     * The effective federation settings for the start-up line, one entry each; tokens only as
     * "set", never their value.
     */
    Map<String, Object> effectiveSummary(FederationSettings settings, boolean frameGate) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("multihub_serving_policy", servingPolicy == null ? "none (no peer served)" : servingPolicy.toAbsolutePath());
        m.put("namespace_owners", settings.owners().configured() ? settings.owners().owners()
                : "none (every claim decided here)");
        String routesFrom = settings.peersFile() == null ? "" : " (from " + settings.peersFile() + ", reloaded)";
        List<String> watched = new ArrayList<>();
        settings.watch().peers().forEach(p -> watched.add(p.label() + "=" + where(p.uri(), p.pin() != null)));
        m.put("multihub_watch", watched.isEmpty() && settings.peersFile() == null ? "none"
                : watched + routesFrom + ", every " + settings.watch().interval().toMillis() / 1000.0 + " s"
                        + (settings.watch().token() == null ? "" : ", token set"));
        m.put("claim_peers", routes(settings.forward(), routesFrom));
        m.put("relay_peers", routes(settings.relayRoutes(), routesFrom));
        m.put("multihub_client_cert", clientCertFile == null ? "none" : clientCertFile.toAbsolutePath());
        m.put("federation_offer", offerFile == null ? "none" : offerFile.toAbsolutePath());
        m.put("federation_store", !frameGate ? "off (no frame gate)" : federationStore.toAbsolutePath()
                + (federationObserveOnly ? ", observe only (refuses nothing)" : ", enforcing"));
        m.put("relay_policy", "reason " + (settings.relay().requireReason() ? "required" : "optional") + ", "
                + (settings.relay().twoPerson() ? "two-person" : "one person"));
        return m;
    }

    private static String routes(ForwardSettings routes, String routesFrom) {
        if (routes.routes().isEmpty() && routesFrom.isEmpty()) {
            return "none";
        }
        List<String> list = new ArrayList<>();
        routes.routes().values().forEach(r -> list.add(r.hubId() + "=" + where(r.uri(), r.pin() != null)));
        return list + routesFrom + (routes.token() == null ? "" : ", token set");
    }

    /** A peer's address without any user part of its URI (which could carry a secret), and whether it is pinned. */
    private static String where(URI uri, boolean pinned) {
        return uri.getScheme() + "://" + uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort())
                + (pinned ? " (pinned)" : "");
    }

    /** The validated {@code --multihub-watch-interval}: at least 1 s, as documented, refused below (not raised). */
    private Duration watchInterval() {
        return SecondsOption.within("--multihub-watch-interval", watchInterval, 1, Double.POSITIVE_INFINITY, null);
    }

    private static String[] pair(String spec, String error) {
        int eq = spec.indexOf('=');
        if (eq <= 0 || eq == spec.length() - 1) {
            throw new IllegalArgumentException(error);
        }
        return new String[] {spec.substring(0, eq).strip(), spec.substring(eq + 1).strip()};
    }

    private static URI uri(String text, String spec) {
        try {
            URI u = URI.create(text);
            if (u.getHost() == null || !("ws".equalsIgnoreCase(u.getScheme()) || "wss".equalsIgnoreCase(u.getScheme()))) {
                throw new IllegalArgumentException(text);
            }
            return u;
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("'" + spec + "' needs a ws:// or wss:// URI with a host, got '" + text + "'");
        }
    }
}
