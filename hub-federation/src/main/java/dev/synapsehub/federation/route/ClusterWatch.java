package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.governance.NamespaceGovernance;
import dev.synapsehub.core.governance.Partition;
import dev.synapsehub.federation.AuditJournal;
import dev.synapsehub.federation.LabelledCounters;
import dev.synapsehub.federation.follow.AdvisoryFold;
import dev.synapsehub.federation.follow.LogWatch;
import dev.synapsehub.federation.follow.Mirror;
import dev.synapsehub.federation.follow.ObservedClaim;
import dev.synapsehub.federation.follow.PeerView;
import dev.synapsehub.federation.follow.WatchPeer;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.link.PeerLinks;
import dev.synapsehub.net.extension.HubServices;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The watch of other hubs for a mesh cluster (contract §11.2 on a mesh).
 *
 * <p>The partitions and quarantines are replicated state ({@link NamespaceGovernance}, applied
 * from the committed records on every node and carried in snapshots), and a governed claim is
 * refused where the leader's actor decides it, so no node grants on a copy that has not read a
 * record yet. This class is the leader's half: only the node that decides polls the watched
 * peers ({@link LogWatch}: one thread and one backoff per peer, so one dead peer delays no
 * other), compares what it observed with the replicated state, and proposes each change as a
 * record ({@code multihub_partition} entered or updated, {@code multihub_heal}; the followers
 * propose {@code multihub_equivocation} themselves).
 *
 * <p>What counts for a peer: once the current leader has read that peer's whole log (a complete
 * poll, not one budget-bounded step) since it began to lead, its observation; until then, the
 * last replicated one (the peer contests a namespace exactly when the replicated partition names
 * it). So a new leader neither heals nor forgets what its predecessor recorded before it has
 * looked itself, a peer that cannot be polled keeps its replicated state (fails closed), and a
 * partition another peer enters is recorded without waiting for it. A peer the replicated state
 * quarantines is not polled by any leader until an operator recovery is recorded: any node
 * takes {@code multihub_recover_request} and asks the leader ({@link #serveRecover}), which
 * records it and follows the peer again; the advisory view is the leader's too ({@link #serveObserved}).
 */
public final class ClusterWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterWatch.class);
    /** How often the leader compares its observation with the replicated state. */
    public static final long COMPARE_MILLIS = 500;

    /** Opens this node's mirror of the watched peers (its cursors, beside its journal copy). */
    public interface Mirrors {
        Mirror open() throws Mirror.MirrorException;
    }

    private final HubServices hub;
    private final WatchSettings settings;
    private final NamespaceOwners owners;
    private final Mirrors mirrors;
    private final BooleanSupplier decides;
    private final PeerLinks links;
    private final AuditJournal audit;
    private final ScheduledExecutorService thread;
    private final LabelledCounters transitions = new LabelledCounters("synapse_mesh_watch_transitions_total",
            "Partition records this node proposed as leader and the cluster committed.", "kind");
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong comparisons = new AtomicLong();
    private volatile LogWatch watch; // written on the watch thread; halted from a leadership listener too
    private volatile AdvisoryFold fold = new AdvisoryFold();
    private double leadSince;
    private volatile dev.synapsehub.federation.trust.PeerRouteSource routes;
    private String lastFailure;

    /** @param decides whether this node decides for the cluster now (leads, and has applied every earlier record) */
    public ClusterWatch(HubServices hub, WatchSettings settings, NamespaceOwners owners, Mirrors mirrors,
                        BooleanSupplier decides, PeerLinks links) {
        this.hub = hub;
        this.settings = settings;
        this.owners = owners;
        this.mirrors = mirrors;
        this.decides = decides;
        this.links = links;
        this.audit = new AuditJournal(hub.actor(), hub.hubId());
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "synapse-cluster-watch");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Takes each poll's route (URI, pin, token) from {@code source} (this node's peers file) rather
     * than the settings' fixed ones; call before {@link #start}.
     */
    public ClusterWatch routes(dev.synapsehub.federation.trust.PeerRouteSource source) {
        this.routes = source;
        return this;
    }

    /** Starts looking, every {@value #COMPARE_MILLIS} ms, whether this node leads and what changed. */
    public void start() {
        thread.scheduleWithFixedDelay(this::tick, 0, COMPARE_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void tick() {
        try {
            boolean lead = decides.getAsBoolean();
            if (lead && watch == null) {
                lead();
            } else if (!lead && watch != null) {
                LOG.info("cluster watch: this node no longer leads; it stops polling the watched peers");
                stop();
            }
            if (watch != null) {
                compare();
            }
        } catch (RuntimeException fault) {
            failed("cluster watch tick failed: " + fault, fault);
        }
    }

    private void lead() {
        NamespaceGovernance.Image replicated = replicated();
        if (replicated == null) {
            return; // tried again next tick
        }
        AdvisoryFold next = new AdvisoryFold();
        LogWatch w;
        Mirror mirror = null;
        try {
            mirror = mirrors.open();
            w = new LogWatch(settings, next, mirror, audit, hub.hubId(), () -> hub.clock().nowSeconds());
        } catch (Mirror.MirrorException | RuntimeException e) {
            if (mirror != null) {
                mirror.close(); // opened, then unreadable: tried again next tick, so it must not stay open
            }
            failed("cluster watch: cannot open this node's mirror; it leads without watching: " + e.getMessage(), null);
            return;
        }
        // a quarantine recorded by an earlier leader holds here too: that peer is not followed
        for (Map.Entry<String, String> q : replicated.quarantines().entrySet()) {
            PeerView v = next.peer(q.getKey());
            if (v != null && !v.quarantined()) {
                next.put(new PeerView(v.peer(), v.cursor(), v.logEnd(), v.lastSuccess(), q.getValue(),
                        v.clockSkewSeconds(), q.getValue(), v.generation(), v.claims()));
                LOG.warn("cluster watch: peer '{}' stays quarantined ({}), as the cluster recorded", q.getKey(),
                        q.getValue());
            }
        }
        leadSince = hub.clock().nowSeconds();
        fold = next;
        if (routes != null) { // --federation-peers: each poll asks this node's file for the peer's route
            w.start(links, decides, routes);
        } else {
            w.start(links, decides); // a follower takes no link once this node stops deciding
        }
        watch = w;
        if (!decides.getAsBoolean()) { // lost the lead while starting: a listener may have missed this watch
            stop();
            return;
        }
        LOG.info("cluster watch: this node leads; it polls {} watched peer(s) for the cluster, keeping {} recorded "
                + "partition(s) until it has read each peer itself", settings.peers().size(),
                replicated.partitions().size());
    }

    /** The replicated governance as this node's actor holds it, or null (counted and logged) when unreadable. */
    private NamespaceGovernance.Image replicated() {
        try {
            return hub.actor().read(s -> s.governance().image()).get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (ExecutionException | TimeoutException e) {
            failed("cluster watch: cannot read the replicated partitions: " + e, null);
            return null;
        }
    }

    private void compare() {
        NamespaceGovernance.Image replicated = replicated();
        if (replicated == null) {
            return;
        }
        Map<String, Partition> recorded = new java.util.TreeMap<>();
        replicated.partitions().forEach(p -> recorded.put(p.namespace(), p));
        double now = hub.clock().nowSeconds();
        for (String ns : owners.owners().keySet()) {
            Partition before = recorded.get(ns);
            Set<String> contesting = contesting(ns, before, now);
            Set<String> was = before == null ? null : new TreeSet<>(before.contestingHubs());
            if (!contesting.isEmpty() && !contesting.equals(was)) {
                propose("multihub_partition", PartitionTracker.partitionPayload(owners, ns, contesting, was == null), ns,
                        (was == null ? "entered" : "changed") + " a partition: contested by " + contesting);
            } else if (contesting.isEmpty() && was != null) {
                propose("multihub_heal", PartitionTracker.healPayload(owners, ns, was), ns,
                        "healed: no watched hub contests it in a complete observation by this leader");
            }
        }
        comparisons.incrementAndGet();
    }

    /** The service under which the leader takes an operator recovery any node was asked for. */
    public static final String RECOVER = "multihub_recover";
    /** The service under which the leader answers the advisory view any node was asked for. */
    public static final String OBSERVED = "multihub_observed";

    /**
     * The leader's half of {@code multihub_recover_request} (body {@code peer}, {@code operator},
     * {@code reason}): on the watch thread, so it never races a comparison, the recovery a single
     * hub makes ({@link LogWatch#recover}: the {@code multihub_equivocation_recovery} record through
     * this node's actor, so the cluster commits it and every node's governance lifts the
     * quarantine; a new log generation in this leader's fold; a poll at once). Completes with
     * {@code recovered} and {@code detail}, as a single hub answers; never on a Raft thread.
     */
    public java.util.concurrent.CompletableFuture<ObjectNode> serveRecover(ObjectNode body) {
        java.util.concurrent.CompletableFuture<ObjectNode> out = new java.util.concurrent.CompletableFuture<>();
        onWatchThread(out, () -> {
            String peer = body.path("peer").asText("");
            if (!watching(out)) {
                return;
            }
            watch.recover(peer, body.path("operator").asText(""), body.path("reason").asText(""))
                    .whenComplete((detail, failure) -> {
                        Throwable why = failure == null ? null : failure.getCause() != null ? failure.getCause() : failure;
                        if (why != null) {
                            failed("cluster watch: recovery of peer '" + peer + "' failed: " + why.getMessage(), null);
                        }
                        out.complete(recoveryAnswer(why == null, why == null ? detail : why.getMessage()));
                    });
        });
        return out;
    }

    /**
     * The leader's half of {@code multihub_observed_request} (body {@code peer} or null, {@code claims}):
     * this leader's fold rendered as a single hub renders its own ({@code peers}), with the live link's
     * round trip and certificate expiry. Fails when this node no longer leads (the asker says so).
     */
    public java.util.concurrent.CompletableFuture<ObjectNode> serveObserved(ObjectNode body) {
        java.util.concurrent.CompletableFuture<ObjectNode> out = new java.util.concurrent.CompletableFuture<>();
        onWatchThread(out, () -> {
            if (!decides.getAsBoolean()) {
                out.completeExceptionally(new IllegalStateException("this node no longer leads the cluster"));
                return;
            }
            if (watch == null) {
                lead(); // a new leader answers from the fold it starts with, quarantines included
            }
            String only = body.path("peer").isTextual() ? body.path("peer").textValue() : null;
            boolean withClaims = body.path("claims").asBoolean(true);
            double now = hub.clock().nowSeconds();
            ObjectNode answer = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
            com.fasterxml.jackson.databind.node.ArrayNode peers = answer.putArray("peers");
            LogWatch w = watch;
            for (PeerView v : fold.peers()) {
                if (only == null || only.equals(v.peer())) {
                    ObjectNode rendered = dev.synapsehub.federation.serve.ObservedQuery.render(v, now, withClaims);
                    dev.synapsehub.federation.serve.ObservedQuery.connection(rendered, w == null ? null : w.link(v.peer()));
                    peers.add(rendered);
                }
            }
            out.complete(answer);
        });
        return out;
    }

    /** True when this node leads and watches (starting the watch if it just began to lead); otherwise answers why not. */
    private boolean watching(java.util.concurrent.CompletableFuture<ObjectNode> out) {
        if (!decides.getAsBoolean()) {
            out.complete(recoveryAnswer(false, "this node no longer leads the cluster; nothing was recorded, ask again"));
            return false;
        }
        if (watch == null) {
            lead();
        }
        if (watch == null) {
            out.complete(recoveryAnswer(false, "the cluster's leader cannot watch its peers yet (" + lastFailure
                    + "); nothing was recorded, ask again"));
            return false;
        }
        return true;
    }

    private void onWatchThread(java.util.concurrent.CompletableFuture<ObjectNode> out, Runnable work) {
        try {
            thread.execute(() -> {
                try {
                    work.run();
                } catch (RuntimeException fault) {
                    failed("cluster watch: an operator request failed: " + fault, fault);
                    out.completeExceptionally(fault);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            out.completeExceptionally(new IllegalStateException("this node's cluster watch is closed"));
        }
    }

    /** The body of a recovery answer: what a single hub's {@code multihub_recover_result} carries. */
    public static ObjectNode recoveryAnswer(boolean recovered, String detail) {
        ObjectNode o = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        o.put("recovered", recovered);
        o.put("detail", detail);
        return o;
    }

    /** How many comparisons this node has made as leader (tests wait on it instead of on time). */
    public long comparisons() {
        return comparisons.get();
    }

    /**
     * The watched hubs contesting {@code ns}: a peer whose view (partial or complete) asserts a live
     * claim in it; and a peer this leader has not read completely since it began to lead that the
     * replicated partition ({@code recorded}) names.
     */
    Set<String> contesting(String ns, Partition recorded, double now) {
        String owner = owners.owner(ns);
        Set<String> out = new TreeSet<>();
        for (WatchPeer p : settings.peers()) {
            String label = p.label();
            if (label.equals(owner) || label.equals(owners.localHubId())) {
                continue;
            }
            PeerView v = fold.peer(label);
            boolean followed = v != null && !v.quarantined();
            boolean complete = followed && fold.completeAt(label) >= leadSince;
            // a live claim in what was read counts at once, as on a single hub, however much is left to read;
            // only forgetting a recorded contester (a heal) waits for a complete read by this leader
            if (followed && asserts(v, ns, now)
                    || !complete && recorded != null && recorded.contestingHubs().contains(label)) {
                out.add(label);
            }
        }
        return out;
    }

    private static boolean asserts(PeerView v, String ns, double now) {
        for (ObservedClaim c : v.claims().values()) {
            if (c.namespace().equals(ns) && c.liveAt(now)) {
                return true;
            }
        }
        return false;
    }

    private void propose(String kind, ObjectNode payload, String ns, String what) {
        if (!decides.getAsBoolean()) {
            return; // lost the lead since the tick began: the next leader compares for itself
        }
        boolean committed;
        try {
            committed = audit.record(kind, payload).get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (ExecutionException | TimeoutException e) {
            failed("cluster watch: recording " + kind + " for namespace '" + ns + "' failed: " + e, null);
            return;
        }
        if (!committed) {
            failed("cluster watch: the cluster refused to record " + kind + " for namespace '" + ns + "'", null);
            return;
        }
        transitions.increment(kind);
        lastFailure = null;
        if ("multihub_heal".equals(kind)) {
            LOG.info("namespace '{}' {}", ns, what);
        } else {
            LOG.warn("namespace '{}' {}; every claim in it is refused", ns, what);
        }
    }

    /** Counts every failure and logs it once per distinct message (a repeating one is not logged again). */
    private void failed(String message, Throwable fault) {
        failures.incrementAndGet();
        if (!message.equals(lastFailure)) {
            if (fault != null) {
                LOG.error(message, fault);
            } else {
                LOG.warn(message);
            }
            lastFailure = message;
        }
    }

    /**
     * This node's leadership may have changed (any thread; never blocks): one that no longer
     * decides stops its followers at once, wherever the watch thread is (a read of the replicated
     * state or a proposal can hold it for seconds), and the watch thread then closes the watch
     * and releases the links.
     */
    public void leadershipChanged() {
        if (decides.getAsBoolean()) {
            return;
        }
        LogWatch w = watch;
        if (w != null) {
            w.halt();
        }
        try {
            thread.execute(this::tick);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // closed: nothing polls any more
        }
    }

    private void stop() {
        watch.close(); // waits for the followers: none is left opening a link after this
        watch = null;
        fold = new AdvisoryFold();
        if (!decides.getAsBoolean()) {
            // a follower may have opened a link between the lead's loss and the listener's release of the
            // links: the peer would bind the cluster's hub id to it and refuse the new leader (name_conflict)
            links.retain(Set.of());
        }
    }

    /** The leader's fold of the watched peers (empty on a follower). */
    public AdvisoryFold fold() {
        return fold;
    }

    /** Appends the watch's counters in the Prometheus text format. */
    public void appendMetrics(StringBuilder out) {
        transitions.appendTo(out);
        out.append("# HELP synapse_mesh_watch_failures_total Failures of the cluster watch (reads, proposals, mirror).\n");
        out.append("# TYPE synapse_mesh_watch_failures_total counter\n");
        out.append("synapse_mesh_watch_failures_total ").append(failures.get()).append('\n');
    }

    @Override
    public void close() {
        thread.shutdownNow();
        try {
            thread.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (watch != null) {
            watch.close();
        }
        // the links are the caller's: on a mesh the leader's forwards share them
    }

    /** The watched peers' labels (tests). */
    public List<String> peers() {
        return settings.peers().stream().map(WatchPeer::label).toList();
    }
}
