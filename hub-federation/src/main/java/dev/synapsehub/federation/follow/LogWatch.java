package dev.synapsehub.federation.follow;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.AuditJournal;
import dev.synapsehub.federation.link.PeerLinks;
import dev.synapsehub.federation.trust.PeerRouteSource;
import dev.synapsehub.federation.trust.PeerRoutes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;

/**
 * The standing watch of contract §11.2: one {@link PeerFollower} per configured peer, each on a
 * thread of its own with its own backoff, feeding the {@link AdvisoryFold}. Views are restored
 * from the {@link Mirror} at start, so a restarted follower resumes from its cursors and its
 * advisory view (and any quarantine) is back before the first poll.
 */
public final class LogWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogWatch.class);

    private final WatchSettings settings;
    private final AdvisoryFold fold;
    private final Mirror mirror;
    private final AuditJournal audit;
    private final String localHubId;
    private final DoubleSupplier clock;
    private final WatchMetrics metrics = new WatchMetrics();
    private final Map<String, ScheduledExecutorService> threads = new LinkedHashMap<>();
    private final Map<String, PeerFollower> followers = new LinkedHashMap<>();
    /** Whether a follower may open (or take) a link now: on a mesh, only while this node decides. */
    private volatile java.util.function.BooleanSupplier mayLink = () -> true;

    public LogWatch(WatchSettings settings, AdvisoryFold fold, Mirror mirror, AuditJournal audit, String localHubId,
                    DoubleSupplier clock) throws Mirror.MirrorException {
        this.settings = settings;
        this.fold = fold;
        this.mirror = mirror;
        this.audit = audit;
        this.localHubId = localHubId;
        this.clock = clock;
        Map<String, PeerView> stored = new LinkedHashMap<>();
        for (PeerView v : mirror.load()) {
            stored.put(v.peer(), v);
        }
        for (WatchPeer p : settings.peers()) {
            PeerView v = stored.getOrDefault(p.label(), PeerView.fresh(p.label()));
            // the live fold starts with no last error: a persisted one is the previous run's (only the offline
            // view shows it), and kept here it showed the peer FAILING and unreachable until the first poll
            v = v.failed(null, Double.NaN);
            fold.put(v);
            if (v.cursor() > 0) {
                LOG.info("multihub watch: peer '{}' resumes after seq {} with {} observed claim(s){}", p.label(),
                        v.cursor(), v.claims().size(), v.quarantined() ? "; QUARANTINED: " + v.quarantine() : "");
            }
        }
    }

    /** The link to watched peer {@code peer}, or null (not watched, or not started). */
    public dev.synapsehub.federation.link.PeerLink link(String peer) {
        PeerFollower f = followers.get(peer);
        return f == null ? null : f.link();
    }

    /** Starts following every peer through {@code links}, with the routes the flags gave. */
    public void start(PeerLinks links) {
        start(links, () -> true);
    }

    /**
     * As {@link #start(PeerLinks)}, a follower taking a link only while {@code mayLink} holds (on a
     * mesh: while this node decides; a link it opened after losing the lead would hold the cluster's
     * hub id at the peer, which then refuses the new leader's connection as a name conflict).
     */
    public void start(PeerLinks links, java.util.function.BooleanSupplier mayLink) {
        this.mayLink = mayLink;
        java.util.Map<String, dev.synapsehub.federation.trust.PeerRoute> routes = new LinkedHashMap<>();
        for (WatchPeer p : settings.peers()) {
            routes.put(p.label(), new dev.synapsehub.federation.trust.PeerRoute(p.label(), p.uri(), p.pin(),
                    settings.token()));
        }
        start(links, PeerRouteSource.fixed(new PeerRoutes(routes, Map.of(), Map.of())));
    }

    /**
     * As {@link #start(PeerLinks, PeerRouteSource)}, a follower taking a link only while
     * {@code mayLink} holds (a mesh node's peers file: the routes reload, the lead still decides).
     */
    public void start(PeerLinks links, java.util.function.BooleanSupplier mayLink, PeerRouteSource source) {
        this.mayLink = mayLink;
        start(links, source);
    }

    /**
     * Starts following every peer through {@code links}; before each poll the peer's route (URI,
     * pin, token) is taken from {@code source}: a changed route reconnects, a route removed or a
     * source that does not validate fails the poll as a transport failure. A peer added to the
     * source is followed from the next restart (its view, cursor and thread are made at start).
     */
    public void start(PeerLinks links, PeerRouteSource source) {
        Set<String> announced = java.util.concurrent.ConcurrentHashMap.newKeySet();
        // fixed before any follower polls: a first poll that asked while this loop still filled the
        // maps took a peer it was about to start for one added to the peers file
        Set<String> followed = new java.util.HashSet<>();
        settings.peers().forEach(p -> followed.add(p.label()));
        for (WatchPeer p : settings.peers()) {
            ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "synapse-watch-" + p.label());
                t.setDaemon(true);
                return t;
            });
            PeerFollower.LinkFor linkFor = () -> {
                if (!mayLink.getAsBoolean()) {
                    throw new java.io.IOException("this node no longer decides for the cluster; it does not poll '"
                            + p.label() + "'");
                }
                PeerRoutes now = source.current();
                dev.synapsehub.federation.trust.PeerRoute r = now.watch().get(p.label());
                for (String added : now.watch().keySet()) {
                    if (!followed.contains(added) && announced.add(added)) {
                        LOG.warn("multihub watch: peer '{}' was added to --federation-peers; it is followed from the "
                                + "next restart", added);
                    }
                }
                if (r == null) {
                    throw new java.io.IOException("watched peer '" + p.label() + "' is no longer in --federation-peers; "
                            + "it is not polled while it is not there");
                }
                return links.link(p.label(), r.uri(), settings.tlsFor(new WatchPeer(p.label(), r.uri(), r.pin())),
                        r.token());
            };
            PeerFollower f = new PeerFollower(p, linkFor, settings, fold, mirror, audit, localHubId, thread, clock,
                    metrics);
            threads.put(p.label(), thread);
            followers.put(p.label(), f);
        }
        followers.values().forEach(PeerFollower::start); // the maps are complete before any poll (recover reads them)
    }

    /** The watch's counters. */
    public WatchMetrics metrics() {
        return metrics;
    }

    /** The configured peers' labels. */
    public List<String> peers() {
        return new ArrayList<>(threads.keySet());
    }

    /**
     * An operator recovery of {@code peer} (after an equivocation or a log regression): journals
     * {@code multihub_equivocation_recovery}, starts a new log generation (cursor 0, no observed
     * claims, no fingerprint) and polls at once. Completes with a detail line, or exceptionally
     * for an unknown peer.
     */
    public CompletableFuture<String> recover(String peer, String operator, String reason) {
        ScheduledExecutorService thread = threads.get(peer);
        if (thread == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("'" + peer + "' is not a watched peer"));
        }
        return CompletableFuture.supplyAsync(() -> {
            PeerView old = fold.peer(peer);
            PeerView next = new PeerView(peer, 0, -1, 0, null, old.clockSkewSeconds(), null, old.generation() + 1,
                    Map.of());
            ObjectNode p = AuditJournal.payload();
            AuditJournal.putIdentity(p, "peer_id", peer);
            AuditJournal.putIdentity(p, "recovered_by", operator);
            AuditJournal.putIdentity(p, "new_log_generation", Long.toString(next.generation()));
            p.put("reason_sha256", AuditJournal.sha256(reason == null ? "" : reason));
            p.put("recovered_at", clock.getAsDouble());
            p.put("explicit_recovery", true);
            p.put("status", "recovered");
            // recorded first: a recovery the hub (on a mesh, the cluster) did not commit changes nothing here
            if (!audit.record("multihub_equivocation_recovery", p).join()) {
                throw new IllegalStateException("the recovery of peer '" + peer + "' was not recorded; nothing changed");
            }
            try {
                mirror.reset(next);
            } catch (Mirror.MirrorException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
            fold.put(next);
            LOG.warn("multihub watch: peer '{}' recovered by {}{}; following it again from seq 0 (log generation {})",
                    peer, operator, old.quarantined() ? " (was quarantined: " + old.quarantine() + ")" : "",
                    next.generation());
            thread.execute(followers.get(peer)::pollOnce);
            if (!old.quarantined()) { // the same recovery, but the operator may have meant another peer
                return "peer '" + peer + "' was not quarantined; recovered it all the same: log generation "
                        + next.generation() + ", re-reading it from seq 0";
            }
            return "recovered peer '" + peer + "'; log generation " + next.generation() + ", following from seq 0";
        }, thread);
    }

    /** Stops every follower at once (interrupting a poll), without waiting; never blocks. {@link #close} still follows. */
    public void halt() {
        threads.values().forEach(ScheduledExecutorService::shutdownNow);
    }

    @Override
    public void close() {
        threads.values().forEach(ScheduledExecutorService::shutdownNow);
        for (ScheduledExecutorService t : threads.values()) {
            try {
                t.awaitTermination(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        mirror.close();
    }
}
