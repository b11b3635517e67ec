package dev.synapsehub.federation;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.follow.AdvisoryFold;
import dev.synapsehub.federation.follow.LogWatch;
import dev.synapsehub.federation.follow.Mirror;
import dev.synapsehub.federation.follow.PeerGauges;
import dev.synapsehub.federation.link.ClientIdentity;
import dev.synapsehub.federation.link.PeerLinks;
import dev.synapsehub.federation.serve.LogServer;
import dev.synapsehub.federation.serve.ObservedQuery;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.PrometheusText;
import dev.synapsehub.net.protocol.Request;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.federation.route.ClaimForwarder;
import dev.synapsehub.federation.trust.PeerRouteSource;
import dev.synapsehub.federation.trust.PeerRoutes;
import dev.synapsehub.federation.trust.PeersFile;
import dev.synapsehub.federation.route.ClaimServer;
import dev.synapsehub.federation.route.OwnershipResolver;
import dev.synapsehub.federation.route.PartitionTracker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Federation plugged into the hub's network edge: serves peer log pulls (§11.1) under the
 * serving policy, follows the watched peers' logs into the advisory fold (§11.2), routes
 * claims by namespace ownership (forwarding remote ones, refusing ungoverned and partitioned
 * ones, §11.3), decides claims forwarded by authorised peers, and answers the fold query and
 * the operator recovery. The composition root builds it from validated
 * settings and hands it to {@code HubServer}.
 */
public final class FederationExtension implements HubExtension {
    private static final Set<String> TYPES = Set.of("multihub_log_request", "multihub_observed_request",
            "multihub_recover_request", "multihub_claim_request", "federation_offer_request", "operator_relay_request",
            dev.synapsehub.federation.route.DeadLetterForwardingServer.TYPE);
    private static final Logger LOG = LoggerFactory.getLogger(FederationExtension.class);

    private final FederationSettings settings;
    private final SqliteJournal journal;
    private final Mirror mirror;
    private final FederationMetrics metrics = new FederationMetrics();
    private final AdvisoryFold fold = new AdvisoryFold();
    private HubServices hub;
    private volatile LogServer logServer; // read by retention on the writer thread
    private ObservedQuery observed;
    private LogWatch watch;
    private PeerLinks links;
    private ClientIdentity identity;
    private PeerRouteSource routes;
    private OwnershipResolver resolver;
    private PartitionTracker partitions;
    private ClaimForwarder forwarder;
    private ClaimServer claimServer;
    private dev.synapsehub.federation.route.RelayServer relayServer;
    private dev.synapsehub.federation.route.DeadLetterForwardingServer deadLetters;
    private dev.synapsehub.federation.route.RelayForwarder relayForwarder;
    private dev.synapsehub.federation.route.DeadLetterForwarder deadLetterForwarder;
    private dev.synapsehub.federation.serve.OfferServer offers;
    private ScheduledExecutorService background;
    /** The forwarded claims' sends, a thread per owner with work (not {@link #background}: a dead owner's connect would hold it). */
    private java.util.concurrent.ExecutorService forwarding;
    /** The relays' sends, a thread per owner with work (not {@link #background}: a dead owner's connect would hold it). */
    private java.util.concurrent.ExecutorService relaying;
    private FederationCockpit cockpit;

    /**
     * @param journal the hub's journal, or null for a hub without {@code --db}
     * @param mirror where followed peers' observations persist ({@link Mirror#memory()} without {@code --db})
     */
    public FederationExtension(FederationSettings settings, SqliteJournal journal, Mirror mirror) {
        this.settings = settings;
        this.journal = journal;
        this.mirror = mirror;
    }

    /**
     * The rows authorised peers still have to pull ({@link dev.synapsehub.federation.serve.PeerCursorHolds}),
     * as a retention hold. Until the hub is bound every row is held when the log is served to
     * peers (no peer has pulled from this run yet), none when it is not.
     */
    public long peerCursorFloor() {
        LogServer server = logServer;
        if (server == null) {
            return servesItsLog(settings) ? 0 : Long.MAX_VALUE;
        }
        return server.cursorHolds().keepAfter();
    }

    /**
     * The hold a hub started with {@code settings} registers before anything compacts, until its
     * federation is made and bound ({@link #peerCursorFloor()}): every row while a serving policy
     * may let peers pull.
     */
    public static long peerCursorFloorBeforeStart(FederationSettings settings) {
        return servesItsLog(settings) ? 0 : Long.MAX_VALUE;
    }

    private static boolean servesItsLog(FederationSettings settings) {
        return settings.trust().configured();
    }

    @Override
    public void bind(HubServices context, ClaimService claims) {
        try {
            bindAll(context, claims);
        } catch (RuntimeException | Error failed) {
            close(); // a start that fails leaves no thread behind (the peers file's watcher among them)
            throw failed;
        }
    }

    private void bindAll(HubServices context, ClaimService claims) {
        this.hub = context;
        logServer = new LogServer(context, settings.trust(), journal, metrics);
        observed = new ObservedQuery(context, fold, peer -> watch == null ? null : watch.link(peer));
        offers = new dev.synapsehub.federation.serve.OfferServer(context, settings.offerFile());
        identity = clientIdentity(settings);
        links = new PeerLinks(context.hubId(), identity);
        routes = routeSource(settings);
        if (routes instanceof PeersFile peers) {
            peers.onChange(now -> links.retain(uris(now)));
        }
        if (settings.peersFile() == null) {
            expectLinks(links, settings); // a peers file checks this itself, at each load
        }
        AuditJournal audit = new AuditJournal(context.actor(), context.hubId());
        try {
            watch = new LogWatch(settings.watch(), fold, mirror, audit, context.hubId(),
                    () -> context.clock().nowSeconds());
        } catch (Mirror.MirrorException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        resolver = new OwnershipResolver(settings.owners(), fold);
        partitions = new PartitionTracker(resolver, audit, journaledPartitions(context));
        background = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "synapse-federation");
            t.setDaemon(true);
            return t;
        });
        forwarding = ClaimForwarder.connector("synapse-claim-forwarding");
        forwarder = new ClaimForwarder(context, resolver, settings.forward(), links, metrics, forwarding, routes, false);
        claimServer = new ClaimServer(context, settings.trust(), resolver, claims, metrics);
        relayServer = new dev.synapsehub.federation.route.RelayServer(context, settings.trust(), resolver,
                settings.relay());
        deadLetters = new dev.synapsehub.federation.route.DeadLetterForwardingServer(context, settings.trust(), resolver,
                audit);
        relaying = ClaimForwarder.connector("synapse-relay-forwarding");
        relayForwarder = new dev.synapsehub.federation.route.RelayForwarder(context, resolver, settings.trust(),
                settings.relayRoutes(), links, relaying, audit, routes);
        deadLetterForwarder = new dev.synapsehub.federation.route.DeadLetterForwarder(context, resolver,
                settings.relayRoutes(), links, audit, Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "synapse-dead-letter-forwarding");
                    t.setDaemon(true);
                    return t;
                }), routes);
        watch.start(links, routes);
        if (!settings.watch().peers().isEmpty() || settings.owners().configured()) { // a plain hub shows no federation
            cockpit = new FederationCockpit(context.hubId(), fold, partitions::current);
        }
        if (settings.owners().configured()) {
            background.scheduleWithFixedDelay(this::refreshPartitions, 0, 1, TimeUnit.SECONDS);
        }
    }

    /**
     * The routes in force: the peers file, checked about once a second on a thread of its own, or the flags'
     * routes, fixed.
     */
    private static PeerRouteSource routeSource(FederationSettings settings) {
        if (settings.peersFile() == null) {
            java.util.Map<String, dev.synapsehub.federation.trust.PeerRoute> watched = new java.util.LinkedHashMap<>();
            for (dev.synapsehub.federation.follow.WatchPeer p : settings.watch().peers()) {
                watched.put(p.label(), new dev.synapsehub.federation.trust.PeerRoute(p.label(), p.uri(), p.pin(),
                        settings.watch().token()));
            }
            return PeerRouteSource.fixed(new PeerRoutes(watched,
                    dev.synapsehub.federation.route.RouteLookup.of(settings.forward()),
                    dev.synapsehub.federation.route.RouteLookup.of(settings.relayRoutes())));
        }
        try {
            return PeersFile.watching(settings.peersFile(), settings.watch().clientCertFile() != null
                    || settings.forward().clientCertFile() != null || settings.relayRoutes().clientCertFile() != null,
                    LOG::warn);
        } catch (dev.synapsehub.federation.trust.TrustFileException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private static Set<String> uris(PeerRoutes routes) {
        Set<String> out = new java.util.HashSet<>();
        routes.watch().values().forEach(r -> out.add(r.uri().toString()));
        routes.claim().values().forEach(r -> out.add(r.uri().toString()));
        routes.relay().values().forEach(r -> out.add(r.uri().toString()));
        return out;
    }

    /**
     * The client certificate every route presents (one pair of flags for all of them), checked about once a
     * second on a thread of its own: peer operations read what the last check found, never the disk.
     */
    private static ClientIdentity clientIdentity(FederationSettings settings) {
        Path cert = settings.watch().clientCertFile() != null ? settings.watch().clientCertFile()
                : settings.forward().clientCertFile() != null ? settings.forward().clientCertFile()
                : settings.relayRoutes().clientCertFile();
        Path key = settings.watch().clientKeyFile() != null ? settings.watch().clientKeyFile()
                : settings.forward().clientKeyFile() != null ? settings.forward().clientKeyFile()
                : settings.relayRoutes().clientKeyFile();
        return ClientIdentity.watching(cert, key, LOG::warn);
    }

    /** Every route's link settings, declared up front so two routes to one URI cannot disagree. */
    private static void expectLinks(PeerLinks links, FederationSettings settings) {
        try {
            for (dev.synapsehub.federation.follow.WatchPeer p : settings.watch().peers()) {
                links.expect("--multihub-watch " + p.label(), p.uri(), settings.watch().tlsFor(p), settings.watch().token());
            }
            for (dev.synapsehub.federation.route.ClaimRoute r : settings.forward().routes().values()) {
                links.expect("--claim-peer " + r.hubId(), r.uri(), settings.forward().tlsFor(r), settings.forward().token());
            }
            for (dev.synapsehub.federation.route.ClaimRoute r : settings.relayRoutes().routes().values()) {
                links.expect("--relay-peer " + r.hubId(), r.uri(), settings.relayRoutes().tlsFor(r),
                        settings.relayRoutes().token());
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private void refreshPartitions() {
        try {
            partitions.refresh(hub.clock().nowSeconds());
        } catch (RuntimeException fault) {
            LOG.error("partition refresh failed", fault);
        }
    }

    /** The unresolved partitions the journal holds (restored at start-up). */
    private Map<String, Set<String>> journaledPartitions(HubServices context) {
        if (journal == null) {
            return Map.of();
        }
        try {
            List<JournaledEvent> rows = context.actor().read(s -> {
                try {
                    return journal.readAfter(0, Integer.MAX_VALUE, Set.of("multihub_partition", "multihub_heal"));
                } catch (JournalException e) {
                    throw new IllegalStateException(e.getMessage(), e);
                }
            }).get();
            List<Map.Entry<String, JsonNode>> records = new ArrayList<>();
            ObjectMapper mapper = new ObjectMapper();
            for (JournaledEvent e : rows) {
                AuditRecordEvent a = (AuditRecordEvent) e.event();
                records.add(Map.entry(a.kind(), mapper.readTree(a.payloadJson())));
            }
            return PartitionTracker.unresolved(records);
        } catch (Exception e) {
            throw new IllegalStateException("cannot restore partitions from the journal: " + e.getMessage(), e);
        }
    }

    @Override
    public boolean claimIsLocal(Request claim) {
        return forwarder.claimIsLocal(claim);
    }

    @Override
    public boolean claimResolvesLocal(Request claim) {
        return forwarder.resolvesLocal(claim);
    }

    @Override
    public boolean handles(String type) {
        return TYPES.contains(type);
    }

    @Override
    public void handle(Request request) {
        switch (request.type()) {
            case "multihub_log_request" -> logServer.handle(request);
            case "multihub_observed_request" -> observed.handle(request);
            case "multihub_claim_request" -> claimServer.handle(request);
            case "federation_offer_request" -> offers.handle(request);
            case "operator_relay_request" -> {
                if (!relayForwarder.forwards(request)) { // not this machine's relay to a routed owner: decided here
                    relayServer.handle(request);
                }
            }
            case dev.synapsehub.federation.route.DeadLetterForwardingServer.TYPE -> deadLetters.handle(request);
            default -> recover(request);
        }
    }

    /**
     * {@code multihub_recover_request {peer, reason}}: an operator lifting a peer's quarantine.
     * Accepted only from a connection on this machine (loopback), after the hub's own token.
     */
    private void recover(Request r) {
        String peer = r.get("peer") != null && r.get("peer").isTextual() ? r.get("peer").textValue().strip() : "";
        String reason = r.get("reason") != null && r.get("reason").isTextual() ? r.get("reason").textValue() : "";
        if (!LocalOperator.onThisMachine(r.session().remoteHost())) {
            LocalOperator.answerRecovery(hub, r, peer, false, LocalOperator.RECOVERY_OFF_MACHINE);
            return;
        }
        hub.outbox().answeredWhen(r.session(), watch.recover(peer, r.sender(), reason).whenComplete((detail, failure) ->
                LocalOperator.answerRecovery(hub, r, peer, failure == null, failure == null ? detail
                        : (failure.getCause() != null ? failure.getCause() : failure).getMessage())));
    }

    /** {@code state_snapshot.snapshot.pending_relay_approvals}: the relays awaiting a second operator (A5.1). */
    @Override
    public void labelRead(ObjectNode reply) {
        if (relayServer != null && "state_snapshot".equals(reply.path("type").asText())
                && reply.get("snapshot") instanceof ObjectNode snapshot) {
            relayServer.writePending(snapshot.putArray("pending_relay_approvals"));
        }
    }

    @Override
    public void deadLetterEscalated(dev.synapsehub.core.event.DeadLetterEscalationEvent escalation) {
        if (deadLetterForwarder != null) {
            deadLetterForwarder.escalated(escalation);
        }
    }

    @Override
    public void appendMetrics(StringBuilder out) {
        metrics.appendTo(out);
        if (routes instanceof PeersFile peers) {
            PrometheusText.counter(out, "synapse_federation_peers_file_refusals_total",
                    "Peer operations (polls, forwarded claims, relays, dead-letter reports) refused while "
                            + "--federation-peers did not validate.", peers.refusedOperations());
            PrometheusText.counter(out, "synapse_federation_peers_file_invalid_total",
                    "Changes of --federation-peers that did not validate (each logged once).", peers.invalidEdits());
        }
        if (identity != null && identity != ClientIdentity.NONE) {
            PrometheusText.counter(out, "synapse_federation_client_identity_invalid_total",
                    "Changes of --multihub-client-certfile/--multihub-client-keyfile that did not validate (each "
                            + "logged once; every peer operation is refused until they do).", identity.invalidEdits());
        }
        if (deadLetterForwarder != null) {
            deadLetterForwarder.appendMetrics(out);
        }
        if (relayForwarder != null) {
            relayForwarder.appendMetrics(out);
        }
        if (relayServer != null) {
            relayServer.appendMetrics(out);
        }
        if (watch == null) {
            return;
        }
        PrometheusText.counter(out, "synapse_multihub_polls_total", "Successful polls of watched peers.",
                watch.metrics().polls.get());
        PrometheusText.counter(out, "synapse_multihub_poll_failures_total", "Failed polls of watched peers.",
                watch.metrics().pollFailures.get());
        PrometheusText.counter(out, "synapse_multihub_events_folded_total", "Peer log events folded.",
                watch.metrics().eventsFolded.get());
        PrometheusText.counter(out, "synapse_multihub_equivocations_total", "Peers quarantined for equivocation.",
                watch.metrics().equivocations.get());
        watch.metrics().observationErrors.appendTo(out);
        PeerGauges.appendTo(out, fold.peers(), hub.clock().nowSeconds());
    }

    /** Peers file or client identity invalid (every peer operation refused), or a watched peer quarantined. */
    @Override
    public List<String> degradedReasons() {
        return FederationHealth.degraded(routes, identity,
                fold.peers().stream().anyMatch(dev.synapsehub.federation.follow.PeerView::quarantined));
    }

    /** The cockpit's Cluster view: watched peers and partitions (null until bound). */
    @Override
    public ObjectNode cockpitStatus(double now) {
        return cockpit == null ? null : cockpit.status(now);
    }

    /** The cockpit's {@code observed} list: the claims the watched peers assert (advisory). */
    @Override
    public ObjectNode cockpitRows(String list, java.util.function.Predicate<String> matches, int offset, int limit,
                                  double now) {
        return cockpit == null || !"observed".equals(list) ? null : cockpit.observed(matches, offset, limit, now);
    }

    @Override
    public void close() {
        if (logServer != null) {
            logServer.close();
        }
        if (background != null) {
            background.shutdownNow();
        }
        if (forwarding != null) {
            java.util.List<Runnable> dropped = forwarding.shutdownNow();
            if (forwarder != null) {
                forwarder.abandon(dropped); // the sends not yet made: answered, not left to their bound
            }
        }
        if (relaying != null) {
            java.util.List<Runnable> dropped = relaying.shutdownNow();
            if (relayForwarder != null) {
                relayForwarder.abandon(dropped); // the relays not yet sent: answered, never written
            }
        }
        if (deadLetterForwarder != null) {
            deadLetterForwarder.close();
        }
        if (watch != null) {
            watch.close();
        }
        if (links != null) {
            links.close();
        }
        if (routes instanceof PeersFile peers) {
            peers.close();
        }
        if (identity != null) {
            identity.close();
        }
    }

    /** The client identity toward peers (tests: await the watcher's check of an edit; closed with the hub). */
    public ClientIdentity clientIdentity() {
        return identity;
    }

    /** Where the routes come from (tests: a peers file's watcher is closed with the hub). */
    public PeerRouteSource routes() {
        return routes;
    }

    /** The counters (tests, status). */
    public FederationMetrics metrics() {
        return metrics;
    }

    /** The partitions as last journaled (status, tests). */
    public Map<String, Set<String>> partitions() {
        return partitions.current();
    }

    /** The sending side of dead-letter forwarding (status, tests). */
    public dev.synapsehub.federation.route.DeadLetterForwarder deadLetterForwarder() {
        return deadLetterForwarder;
    }

    /** The forwarding side of operator relays (status, tests). */
    public dev.synapsehub.federation.route.RelayForwarder relayForwarder() {
        return relayForwarder;
    }

    /** The advisory view of the watched peers. */
    public AdvisoryFold fold() {
        return fold;
    }
}
