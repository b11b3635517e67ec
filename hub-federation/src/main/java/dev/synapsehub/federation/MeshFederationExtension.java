package dev.synapsehub.federation;

import dev.synapsehub.federation.follow.AdvisoryFold;
import dev.synapsehub.federation.link.ClientIdentity;
import dev.synapsehub.federation.link.PeerLinks;
import dev.synapsehub.federation.route.ClaimRoute;
import dev.synapsehub.federation.route.ClaimForwarder;
import dev.synapsehub.federation.route.ClaimServer;
import dev.synapsehub.federation.route.DeadLetterForwardingServer;
import dev.synapsehub.federation.route.ForwardSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.federation.route.OwnershipResolver;
import dev.synapsehub.federation.serve.LogServer;
import dev.synapsehub.federation.serve.OfferServer;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The part of federation a mesh node runs, so that the cluster is one hub to its peers.
 *
 * <p>Serving peer log pulls ({@code multihub_log_request}, contract §11.1): every node's journal
 * copy holds the committed events under the seqs the replicated batches carry, so any node
 * answers a follower with the cluster's one hub id and the same {@code (seq, event)} pairs; a
 * node behind the others serves a shorter log, which a follower treats as "not yet" and keeps its
 * cursor.
 *
 * <p>With an ownership map, the owning side of §11.3: claims from this node's agents resolve by
 * namespace (only {@code local} is decided; a remote or ungoverned namespace is refused, as on a
 * single hub without a route), and {@code multihub_claim_request} from authorised peers is
 * decided through the node's claim path, which the mesh decides on its leader and replicates.
 * With {@code --claim-peer} routes, the forwarding side too: a claim by this node's agent in a
 * namespace another hub owns is handed to the cluster's leader, which alone holds the cluster's
 * one warm link to each owner (the owner binds the one hub id to one connection, contract
 * F9.4), and sends it there as a {@code multihub_claim_request} carrying the agent's claim frame
 * (its {@code idem_key} included); the owner's verdict is relayed to the agent by its node.
 * Nothing about the forward is kept in the cluster: the owner keys its ledger by the cluster's
 * one hub id, the claimant and the {@code idem_key}, so a retry through another node, or after
 * a leader change, is answered from the owner's ledger and is never granted twice. A node that
 * loses the lead closes its links; the new leader opens them on its first forward.
 *
 * <p>With {@code --multihub-watch} the node that leads watches the peers for the cluster and
 * every partition it finds is replicated state, refused where the leader decides
 * ({@link dev.synapsehub.federation.route.ClusterWatch}). Without it the cluster detects no
 * partition (it refuses nothing for one either). An operator's {@code multihub_recover_request}
 * and {@code multihub_observed_request} are taken by any node and asked of the leader, which
 * alone follows the peers: it records the recovery through the cluster (every node lifts the
 * quarantine) and answers the view from its fold, in a single hub's reply frames.
 *
 * <p>{@code dead_letter_forwarding} (contract §11.5, F5) from an authorised peer about a
 * recipient in a namespace the cluster owns is journaled as an audit record, replicated like
 * every other (any node may take it; every node holds it), and broadcast to the sockets of the
 * node that took it; a refusal sends nothing, as on a single hub.
 *
 * <p>With {@code --relay-peer} routes, an operator relay this node takes from a client on its own
 * machine for a namespace another hub owns is asked of the leader, which sends it over its link
 * ({@link dev.synapsehub.federation.route.RelayForwarder#serveRelay}) and the owner's answer is
 * returned here; a committed dead-letter escalation this node published (the leader decided its
 * count on the replicated state) is handed to the leader, which alone sends the report, with a
 * single hub's retries (a report whose answer was lost may reach the owner twice; a leader that
 * fails or loses the lead before the send does not send it). With
 * {@code --federation-peers} every route comes from this node's own file, reloaded as on a single
 * hub; an invalid edit refuses the peer operations this node takes or sends.
 *
 * <p>{@code federation_offer_request} (contract A4) is answered from the node's own
 * {@code --federation-offer} file, re-read on every request (give every node the same file), or
 * with the contract's "no offer" error without one.
 */
public final class MeshFederationExtension implements HubExtension {
    private static final Logger LOG = LoggerFactory.getLogger(MeshFederationExtension.class);
    private static final Set<String> TYPES = Set.of("multihub_log_request", "multihub_claim_request",
            DeadLetterForwardingServer.TYPE, "federation_offer_request", "operator_relay_request",
            "multihub_recover_request", "multihub_observed_request");
    /** How long a node waits for the leader to take an operator recovery or answer the advisory view. */
    private static final java.time.Duration ASK_LEADER = java.time.Duration.ofSeconds(30);
    private final ServingTrust trust;
    private final SqliteJournal journal;
    private final NamespaceOwners owners;
    private final java.nio.file.Path offerFile;
    private final ForwardSettings forward;
    private final FederationMetrics metrics = new FederationMetrics();
    private PeerLinks links;
    /** This node's client certificate toward owners, checked on a watcher thread of its own. */
    private ClientIdentity identity;
    /** The leader's relay sends, a thread per owner with work, each owner's in the order they came. */
    private ExecutorService connector;
    /** The leader's claim sends, a thread per owner with work, each owner's in the order they came. */
    private ExecutorService claimConnector;
    private LogServer logServer;
    private ClaimForwarder ownership;
    private ClaimServer claimServer;
    private DeadLetterForwardingServer deadLetters;
    private OfferServer offers;
    private final FederationSettings.RelayPolicy relayPolicy;
    private dev.synapsehub.federation.route.RelayServer relays;
    /** The cluster's leader (set before {@link #bind}); null only when no mesh joined this extension. */
    private dev.synapsehub.net.extension.ClusterLeader cluster;
    // --multihub-watch (the cluster watch): polls on the leader's links, the same ones the forwards use
    private Watching watching = Watching.NONE;
    private volatile dev.synapsehub.federation.route.ClusterWatch clusterWatch; // read by the leadership listener
    private HubServices hub;
    // --relay-peer routes and the peers file (--federation-peers): each node reads its own; the leader sends
    private ForwardSettings relayRoutes = ForwardSettings.none();
    private java.nio.file.Path peersFile;
    private dev.synapsehub.federation.trust.PeerRouteSource routes;
    private dev.synapsehub.federation.route.RelayForwarder relayForwarder;
    private dev.synapsehub.federation.route.DeadLetterForwarder deadLetterForwarder;
    private final java.util.concurrent.atomic.AtomicLong deadLetterHandoffFailures =
            new java.util.concurrent.atomic.AtomicLong();
    /** The name under which the leader takes the cluster's dead-letter reports ({@link #serveDeadLetter}). */
    public static final String DEAD_LETTER_SERVICE = "dead_letter_report";
    private final LabelledCounters askFailures = new LabelledCounters("synapse_mesh_operator_ask_failures_total",
            "Operator recoveries and advisory-view queries this node took that the cluster's leader did not answer.",
            "verb");

    /**
     * @param journal the node's journal copy, whose rows peers' log pulls read through a reader of their own
     * @param owners the ownership map ({@link NamespaceOwners#none} without {@code --namespace-owner})
     * @param offerFile the {@code --federation-offer} bundle, validated at start-up, or null for none
     * @param forward the {@code --claim-peer} routes ({@link ForwardSettings#none} without any: a
     *        claim in another hub's namespace is refused {@code ownership: remote})
     */
    public MeshFederationExtension(ServingTrust trust, SqliteJournal journal, NamespaceOwners owners,
                                   java.nio.file.Path offerFile, ForwardSettings forward) {
        this(trust, journal, owners, offerFile, forward, FederationSettings.RelayPolicy.DEFAULT);
    }

    /**
     * As above, deciding operator relays under {@code relayPolicy} ({@code --require-relay-reason},
     * {@code --require-two-person-relay}).
     */
    public MeshFederationExtension(ServingTrust trust, SqliteJournal journal, NamespaceOwners owners,
                                   java.nio.file.Path offerFile, ForwardSettings forward,
                                   FederationSettings.RelayPolicy relayPolicy) {
        this.relayPolicy = relayPolicy;
        this.trust = trust;
        this.journal = journal;
        this.owners = owners;
        this.offerFile = offerFile;
        this.forward = forward;
    }

    /**
     * The cluster's watch of other hubs ({@code --multihub-watch}): the peers, how this node opens
     * its mirror of them, and whether it decides for the cluster now (only that node polls; see
     * {@link dev.synapsehub.federation.route.ClusterWatch}).
     */
    public record Watching(dev.synapsehub.federation.follow.WatchSettings settings,
                           dev.synapsehub.federation.route.ClusterWatch.Mirrors mirrors,
                           java.util.function.BooleanSupplier decides) {
        /** No peer watched. */
        public static final Watching NONE = new Watching(dev.synapsehub.federation.follow.WatchSettings.none(),
                dev.synapsehub.federation.follow.Mirror::memory, () -> false);
    }

    /** Watches {@code watching}'s peers for the cluster once bound (call before {@link #bind}). */
    public MeshFederationExtension watching(Watching watching) {
        this.watching = watching;
        return this;
    }

    /**
     * Relays operators' requests and dead-letter reports to other owners along {@code relayRoutes}
     * ({@code --relay-peer}), and, with a {@code peersFile} ({@code --federation-peers}), takes
     * every route (watch, claim, relay) from this node's file, checked about once a second, instead
     * of the fixed ones (call before {@link #bind}).
     */
    public MeshFederationExtension relaying(ForwardSettings relayRoutes, java.nio.file.Path peersFile) {
        this.relayRoutes = relayRoutes == null ? ForwardSettings.none() : relayRoutes;
        this.peersFile = peersFile;
        return this;
    }

    /** Where the routes come from (tests: a peers file's watcher is closed with the node). */
    public dev.synapsehub.federation.trust.PeerRouteSource routes() {
        return routes;
    }

    /** The cluster watch (null without {@code --multihub-watch}). */
    public dev.synapsehub.federation.route.ClusterWatch clusterWatch() {
        return clusterWatch;
    }

    @Override
    public void joinCluster(dev.synapsehub.net.extension.ClusterLeader leader) {
        this.cluster = leader;
    }

    @Override
    public void bind(HubServices hub, ClaimService claims) {
        try {
            bindAll(hub, claims);
        } catch (RuntimeException | Error failed) {
            close(); // a start that fails leaves no thread behind (the client identity's watcher among them)
            throw failed;
        }
    }

    private void bindAll(HubServices hub, ClaimService claims) {
        this.hub = hub;
        logServer = new LogServer(hub, trust, journal, metrics);
        // the partitions the cluster committed, as this node applied them: every edge (the claims it would forward,
        // relays, dead letters, peers' claims) refuses them as a single hub does; the leader's actor re-checks too
        OwnershipResolver resolver = new OwnershipResolver(owners, new AdvisoryFold(),
                () -> hub.actor().committedPartitions());
        // the owner binds the cluster's one hub id to one connection, so only the leader holds a link to it, warm as
        // a single hub's; every node hands its agents' forwards to the leader, and the owner's keyed ledger makes a
        // retry through another node (or after a leader change) an answer rather than a second grant
        // one client identity for every link, the watch's first, as on a single hub
        dev.synapsehub.federation.follow.WatchSettings watch = watching.settings();
        identity = watch.clientCertFile() != null
                ? ClientIdentity.watching(watch.clientCertFile(), watch.clientKeyFile(), LOG::warn)
                : forward.clientCertFile() != null
                ? ClientIdentity.watching(forward.clientCertFile(), forward.clientKeyFile(), LOG::warn)
                : ClientIdentity.watching(relayRoutes.clientCertFile(), relayRoutes.clientKeyFile(), LOG::warn);
        links = new PeerLinks(hub.hubId(), identity);
        routes = routeSource(watch);
        if (routes instanceof dev.synapsehub.federation.trust.PeersFile file) {
            // a route removed or moved: its old link goes, on the leader as on a single hub (a follower holds none)
            file.onChange(now -> links.retain(uris(now)));
        } else {
            try {
                for (dev.synapsehub.federation.follow.WatchPeer p : watch.peers()) {
                    links.expect("--multihub-watch " + p.label(), p.uri(), watch.tlsFor(p), watch.token());
                }
                for (ClaimRoute r : forward.routes().values()) {
                    links.expect("--claim-peer " + r.hubId(), r.uri(), forward.tlsFor(r), forward.token());
                }
                for (ClaimRoute r : relayRoutes.routes().values()) {
                    links.expect("--relay-peer " + r.hubId(), r.uri(), relayRoutes.tlsFor(r), relayRoutes.token());
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        }
        // the leader sends each owner's relays in the order they came, on a thread of that owner's (RelayForwarder)
        connector = ClaimForwarder.connector("synapse-mesh-relay-forwarding");
        claimConnector = ClaimForwarder.connector("synapse-mesh-claim-forwarding");
        ownership = new ClaimForwarder(hub, resolver, forward, links, metrics, claimConnector, routes, true, cluster);
        AuditJournal audit = new AuditJournal(hub.actor(), hub.hubId());
        relayForwarder = new dev.synapsehub.federation.route.RelayForwarder(hub, resolver, trust, relayRoutes, links,
                connector, audit, routes);
        deadLetterForwarder = new dev.synapsehub.federation.route.DeadLetterForwarder(hub, resolver, relayRoutes, links,
                audit, Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "synapse-dead-letter-forwarding");
                    t.setDaemon(true);
                    return t;
                }), routes);
        if (cluster != null) {
            // a relay the leader will not send (it resolves the namespace otherwise) is decided here, as on a single hub
            relayForwarder.viaLeader(cluster, request -> relays.handle(request));
            deadLetterForwarder.onlyWhile(cluster::leadsHere);
            cluster.serve(dev.synapsehub.federation.route.RelayForwarder.SERVICE, relayForwarder::serveRelay);
            cluster.serve(DEAD_LETTER_SERVICE, this::serveDeadLetter);
        }
        if (cluster != null) {
            cluster.serve(ClaimForwarder.SERVICE, ownership::serveForward);
            // the fold and the follower threads live on the leader: any node asks it (ClusterWatch.serveRecover)
            cluster.serve(dev.synapsehub.federation.route.ClusterWatch.RECOVER, body -> clusterWatch != null
                    ? clusterWatch.serveRecover(body) : java.util.concurrent.CompletableFuture.completedFuture(
                    dev.synapsehub.federation.route.ClusterWatch.recoveryAnswer(false, notWatched(body.path("peer")
                            .asText("")))));
            cluster.serve(dev.synapsehub.federation.route.ClusterWatch.OBSERVED, body -> clusterWatch != null
                    ? clusterWatch.serveObserved(body) : java.util.concurrent.CompletableFuture.completedFuture(
                    com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode().set("peers",
                            com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode())));
            cluster.onLeadershipChange(() -> {
                if (!cluster.leadsHere()) {
                    if (clusterWatch != null) {
                        clusterWatch.leadershipChanged(); // its followers stop before the links are released
                    }
                    links.retain(Set.of()); // a node that is not the leader holds no link: the new leader needs the name
                }
            });
        }
        claimServer = new ClaimServer(hub, trust, resolver, claims, metrics);
        deadLetters = new DeadLetterForwardingServer(hub, trust, resolver, audit);
        offers = new OfferServer(hub, offerFile);
        relays = dev.synapsehub.federation.route.RelayServer.replicated(hub, trust, resolver, relayPolicy);
        startWatching(hub);
    }

    /**
     * With {@code --multihub-watch}: the cluster watch, on the leader's links (a peer binds the
     * cluster's one hub id to one connection, so its log pulls and the forwards share it, as on a single hub).
     */
    private void startWatching(HubServices hub) {
        if (watching.settings().peers().isEmpty()) {
            return;
        }
        clusterWatch = new dev.synapsehub.federation.route.ClusterWatch(hub, watching.settings(), owners,
                watching.mirrors(), watching.decides(), links);
        if (peersFile != null) {
            clusterWatch.routes(routes);
        }
        clusterWatch.start();
    }

    @Override
    public boolean claimIsLocal(Request claim) {
        return ownership.claimIsLocal(claim);
    }

    @Override
    public boolean claimResolvesLocal(Request claim) {
        return ownership.resolvesLocal(claim);
    }

    @Override
    public boolean handles(String type) {
        return TYPES.contains(type);
    }

    @Override
    public void handle(Request request) {
        switch (request.type()) {
            case "multihub_log_request" -> logServer.handle(request);
            case DeadLetterForwardingServer.TYPE -> deadLetters.handle(request);
            case "federation_offer_request" -> offers.handle(request);
            case "operator_relay_request" -> {
                if (!relayForwarder.forwards(request)) { // not this machine's relay to a routed owner: decided here
                    relays.handle(request);
                }
            }
            case "multihub_recover_request" -> recover(request);
            case "multihub_observed_request" -> observed(request);
            default -> claimServer.handle(request);
        }
    }

    /**
     * {@code multihub_recover_request {peer, reason}} on any node, under a single hub's rule (a
     * connection on this machine, after the token): a watched peer's recovery is asked of the
     * leader, which records {@code multihub_equivocation_recovery} through the cluster and follows
     * the peer again; the answer is a single hub's {@code multihub_recover_result}.
     */
    private void recover(Request r) {
        String peer = r.get("peer") != null && r.get("peer").isTextual() ? r.get("peer").textValue().strip() : "";
        String reason = r.get("reason") != null && r.get("reason").isTextual() ? r.get("reason").textValue() : "";
        if (!LocalOperator.onThisMachine(r.session().remoteHost())) {
            LocalOperator.answerRecovery(hub, r, peer, false, LocalOperator.RECOVERY_OFF_MACHINE);
            return;
        }
        if (clusterWatch == null || !clusterWatch.peers().contains(peer)) {
            // every node is started with the same watched peers
            LocalOperator.answerRecovery(hub, r, peer, false, notWatched(peer));
            return;
        }
        ObjectNode body = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        body.put("peer", peer);
        body.put("operator", r.sender());
        body.put("reason", reason);
        java.util.concurrent.CompletableFuture<ObjectNode> asked = cluster != null
                ? cluster.ask(dev.synapsehub.federation.route.ClusterWatch.RECOVER, body, ASK_LEADER)
                : clusterWatch.serveRecover(body);
        // the connection's later edge answers (an error for its next frame) wait for the leader's answer
        hub.outbox().answeredWhen(r.session(), asked.orTimeout(ASK_LEADER.toSeconds() + 5,
                java.util.concurrent.TimeUnit.SECONDS).whenComplete((a, failure) -> {
            if (failure == null) {
                LocalOperator.answerRecovery(hub, r, peer, a.path("recovered").asBoolean(false),
                        a.path("detail").asText(""));
                return;
            }
            Throwable why = failure.getCause() != null ? failure.getCause() : failure;
            askFailed("multihub_recover_request", why);
            LocalOperator.answerRecovery(hub, r, peer, false, why instanceof dev.synapsehub.net.extension.ClusterLeader.Unreached
                    ? "no leader of the cluster took the recovery (" + why.getMessage() + "); nothing was recorded"
                    : "the cluster's leader did not answer the recovery (" + why + "); it may or may not have "
                    + "been recorded: ask for the advisory view (federation observed) before retrying");
        }));
    }

    private static String notWatched(String peer) {
        return "'" + peer + "' is not a watched peer";
    }

    /**
     * {@code multihub_observed_request} on any node: the advisory view is the leader's fold (only the
     * leader follows the peers), so it is asked of the leader and relayed in a single hub's
     * {@code multihub_observed} frame. No leader answering gets an error naming why: a follower has
     * no observation of its own to show (its mirror is left from when it last led, if ever).
     */
    private void observed(Request r) {
        double now = hub.clock().nowSeconds();
        if (clusterWatch == null) {
            sendObserved(r, now, com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode());
            return;
        }
        ObjectNode body = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        if (r.get("peer") != null && r.get("peer").isTextual()) {
            body.put("peer", r.get("peer").textValue());
        }
        body.put("claims", r.get("claims") == null || !r.get("claims").isBoolean() || r.get("claims").booleanValue());
        java.util.concurrent.CompletableFuture<ObjectNode> asked = cluster != null
                ? cluster.ask(dev.synapsehub.federation.route.ClusterWatch.OBSERVED, body, ASK_LEADER)
                : clusterWatch.serveObserved(body);
        // the connection's later edge answers wait for the leader's view
        hub.outbox().answeredWhen(r.session(), asked.orTimeout(ASK_LEADER.toSeconds() + 5,
                java.util.concurrent.TimeUnit.SECONDS).whenComplete((a, failure) -> {
            if (failure == null && a.path("peers").isArray()) {
                sendObserved(r, hub.clock().nowSeconds(), (com.fasterxml.jackson.databind.node.ArrayNode) a.get("peers"));
                return;
            }
            Throwable why = failure == null ? new IllegalStateException("a malformed answer " + a)
                    : failure.getCause() != null ? failure.getCause() : failure;
            askFailed("multihub_observed_request", why);
            // in order, not as an edge answer: that would queue behind the edge answers waiting for this one
            hub.outbox().sendInOrder(r.session(), hub.frames().write(hub.frames().error(r.sender(), "The advisory view "
                    + "lives on the cluster's leader, which did not answer: " + why.getMessage(), hub.clock().nowSeconds())));
        }));
    }

    private void sendObserved(Request r, double now, com.fasterxml.jackson.databind.node.ArrayNode peers) {
        ObjectNode f = hub.frames().envelope(r.sender(), "multihub_observed",
                "Advisory view of watched peers (grants nothing)", now);
        f.put("advisory", true);
        f.set("peers", peers);
        hub.outbox().sendInOrder(r.session(), hub.frames().write(f)); // also from the leader's answer: see observed
    }

    /** Counted per verb, logged once per distinct reason. */
    private void askFailed(String verb, Throwable why) {
        askFailures.increment(verb);
        String message = verb + ": the cluster's leader did not answer: " + why;
        if (!message.equals(lastAskFailure)) {
            LOG.warn(message);
            lastAskFailure = message;
        }
    }

    private volatile String lastAskFailure;

    /** A keyed operator relay's first answer, rendered on the leader for another node's request. */
    @Override
    public dev.synapsehub.core.actor.ResponseRenderer storedResponse(Request request) {
        return "operator_relay_request".equals(request.type()) ? relays.storedResponse(request) : null;
    }

    /** An operator relay another node took and the leader applied: its release broadcast, here. */
    @Override
    public void publishCommitted(Request request, dev.synapsehub.core.reply.Reply reply) {
        if ("operator_relay_request".equals(request.type())) {
            relays.publishCommitted(request, reply);
        }
    }

    /** {@code state_snapshot.snapshot.pending_relay_approvals}: the replicated approvals awaiting a second operator. */
    @Override
    public void labelRead(ObjectNode reply) {
        if (relays != null && "state_snapshot".equals(reply.path("type").asText())
                && reply.get("snapshot") instanceof ObjectNode snapshot) {
            relays.writePending(snapshot.putArray("pending_relay_approvals"));
        }
    }

    /**
     * A committed escalation of a chat this node's agent sent (the escalation and its count are the
     * leader's decision on the replicated state, published once, on the sender's node): when its
     * target is another hub's, it is handed to the leader, which alone holds the link to the owner
     * and sends the report ({@link #serveDeadLetter}), retried as on a single hub (so possibly twice).
     * A hand-over no leader took in time is not sent; one that failed otherwise is not known to be
     * sent (the leader may have queued it); both logged and counted here. A report the leader held
     * when it lost the lead or failed is not sent (counted {@code lead_lost} there); the next
     * escalation of the target carries the higher count.
     */
    @Override
    public void deadLetterEscalated(dev.synapsehub.core.event.DeadLetterEscalationEvent escalation) {
        if (deadLetterForwarder == null || escalation == null) {
            return;
        }
        if (cluster == null) {
            deadLetterForwarder.escalated(escalation);
            return;
        }
        if ((relayRoutes.routes().isEmpty() && !routes.reloads())
                || deadLetterForwarder.routeFor(escalation.target()) == null) {
            return; // not another hub's target, or no route to its owner from here: nothing to send
        }
        ObjectNode body = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        body.put("ts", escalation.ts());
        body.put("target", escalation.target());
        body.put("count", escalation.count());
        body.put("last_sender", escalation.lastSender());
        body.put("threshold", escalation.threshold());
        cluster.ask(DEAD_LETTER_SERVICE, body, ASK_LEADER).whenComplete((a, failure) -> {
            if (failure != null) {
                Throwable why = failure.getCause() != null ? failure.getCause() : failure;
                deadLetterHandoffFailures.incrementAndGet();
                // no leader took it: certainly not sent; any other failure may come after the leader queued it
                boolean unsent = why instanceof dev.synapsehub.net.extension.ClusterLeader.Unreached;
                LOG.warn("The dead-letter report for '{}' ({} messages) is not known to be sent: {} (the next "
                        + "escalation carries the higher count): {}", escalation.target(), escalation.count(),
                        unsent ? "no leader of the cluster took it, so it is not sent"
                                : "the cluster's leader did not confirm it queued it", why.toString());
            }
        });
    }

    /** The leader's side of a dead-letter report another node (or this one) handed over: queued for the owner. */
    private java.util.concurrent.CompletableFuture<ObjectNode> serveDeadLetter(ObjectNode body) {
        ObjectNode answer = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        if (!body.path("target").isTextual() || !body.path("count").canConvertToLong()) {
            answer.put("queued", false);
            return java.util.concurrent.CompletableFuture.completedFuture(answer);
        }
        deadLetterForwarder.escalated(new dev.synapsehub.core.event.DeadLetterEscalationEvent(
                body.path("ts").asDouble(), body.path("target").asText(), body.path("count").asLong(),
                body.path("last_sender").asText(""), body.path("threshold").asInt()));
        answer.put("queued", true);
        return java.util.concurrent.CompletableFuture.completedFuture(answer);
    }

    /** The routes in force: this node's peers file (checked about once a second), or the flags' routes, fixed. */
    private dev.synapsehub.federation.trust.PeerRouteSource routeSource(
            dev.synapsehub.federation.follow.WatchSettings watch) {
        if (peersFile == null) {
            java.util.Map<String, dev.synapsehub.federation.trust.PeerRoute> watched = new java.util.LinkedHashMap<>();
            for (dev.synapsehub.federation.follow.WatchPeer p : watch.peers()) {
                watched.put(p.label(), new dev.synapsehub.federation.trust.PeerRoute(p.label(), p.uri(), p.pin(),
                        watch.token()));
            }
            return dev.synapsehub.federation.trust.PeerRouteSource.fixed(new dev.synapsehub.federation.trust.PeerRoutes(
                    watched, dev.synapsehub.federation.route.RouteLookup.of(forward),
                    dev.synapsehub.federation.route.RouteLookup.of(relayRoutes)));
        }
        try {
            return dev.synapsehub.federation.trust.PeersFile.watching(peersFile, watch.clientCertFile() != null
                    || forward.clientCertFile() != null || relayRoutes.clientCertFile() != null, LOG::warn);
        } catch (dev.synapsehub.federation.trust.TrustFileException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private static Set<String> uris(dev.synapsehub.federation.trust.PeerRoutes now) {
        Set<String> out = new java.util.HashSet<>();
        now.watch().values().forEach(r -> out.add(r.uri().toString()));
        now.claim().values().forEach(r -> out.add(r.uri().toString()));
        now.relay().values().forEach(r -> out.add(r.uri().toString()));
        return out;
    }

    @Override
    public void appendMetrics(StringBuilder out) {
        metrics.appendTo(out);
        askFailures.appendTo(out);
        if (routes instanceof dev.synapsehub.federation.trust.PeersFile peers) {
            dev.synapsehub.net.protocol.PrometheusText.counter(out, "synapse_federation_peers_file_refusals_total",
                    "Peer operations (polls, forwarded claims, relays, dead-letter reports) refused while "
                            + "--federation-peers did not validate.", peers.refusedOperations());
            dev.synapsehub.net.protocol.PrometheusText.counter(out, "synapse_federation_peers_file_invalid_total",
                    "Changes of --federation-peers that did not validate (each logged once).", peers.invalidEdits());
        }
        if (deadLetterForwarder != null) {
            deadLetterForwarder.appendMetrics(out);
            dev.synapsehub.net.protocol.PrometheusText.counter(out, "synapse_mesh_dead_letter_handoff_failures_total",
                    "Dead-letter reports this node could not confirm it handed to the cluster's leader (not known to "
                            + "be sent; logged).",
                    deadLetterHandoffFailures.get());
        }
        if (relayForwarder != null) {
            relayForwarder.appendMetrics(out);
        }
        if (relays != null) {
            relays.appendMetrics(out); // this node's answers: each relay is counted where it arrived
        }
        if (clusterWatch != null) {
            clusterWatch.appendMetrics(out);
        }
    }

    /**
     * This node's peers file or client identity invalid (every peer operation it takes or sends is
     * refused), or a watched peer quarantined by the cluster (replicated: every node tells it).
     */
    @Override
    public java.util.List<String> degradedReasons() {
        return FederationHealth.degraded(routes, identity,
                hub != null && !hub.actor().committedQuarantines().isEmpty());
    }

    @Override
    public void close() {
        if (logServer != null) {
            logServer.close();
        }
        if (clusterWatch != null) {
            clusterWatch.close();
        }
        if (deadLetterForwarder != null) {
            deadLetterForwarder.close();
        }
        if (routes instanceof dev.synapsehub.federation.trust.PeersFile peers) {
            peers.close();
        }
        if (claimConnector != null) {
            java.util.List<Runnable> dropped = claimConnector.shutdownNow();
            if (ownership != null) {
                ownership.abandon(dropped); // answered as transport failures, not left to their bound
            }
        }
        if (connector != null) {
            java.util.List<Runnable> dropped = connector.shutdownNow();
            if (relayForwarder != null) {
                relayForwarder.abandon(dropped); // the leader's queued relay sends: answered, never written
            }
        }
        if (links != null) {
            links.close();
        }
        if (identity != null) {
            identity.close();
        }
    }

    /** The counters (tests, status). */
    public FederationMetrics metrics() {
        return metrics;
    }
}
