package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.federation.AuditJournal;
import dev.synapsehub.federation.follow.AdvisoryFold;
import dev.synapsehub.federation.follow.LogWatch;
import dev.synapsehub.federation.follow.Mirror;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.link.PeerLinks;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.net.protocol.HubContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The watch of a mesh cluster (contract §11.2 on a mesh): one answer for the whole cluster.
 *
 * <p>Only the leader polls the watched peers, folds their logs and compares the fold with the
 * ownership map; the transitions it finds ({@code multihub_partition}, {@code multihub_heal},
 * and the follower's {@code multihub_equivocation}) are journaled through the cluster like any
 * write, so each is one replicated record under one seq. Every node, the leader included, then
 * refuses claims from those records read back from its own journal copy, never from a fold of
 * its own: two nodes that have applied the same log give the same answer, and a node that is
 * behind answers as of the log it has, like every other read. A node that becomes leader starts
 * its own watch from its own mirror and from the partitions the journal holds; one that stops
 * leading stops polling.
 */
public final class ClusterWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterWatch.class);
    private static final Set<String> KINDS = Set.of("multihub_partition", "multihub_heal");
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final int PAGE = 1000;
    /** How often a node reads the partition records its journal copy gained. */
    public static final long READ_MILLIS = 200;

    /** Opens this node's mirror of the watched peers (beside its journal copy). */
    public interface Mirrors {
        Mirror open() throws Mirror.MirrorException;
    }

    private final HubContext hub;
    private final WatchSettings settings;
    private final OwnershipResolver decisions;
    private final SqliteJournal journal;
    private final Mirrors mirrors;
    private final BooleanSupplier leading;
    private final PeerLinks links;
    private final AuditJournal audit;
    private final ScheduledExecutorService thread;
    /** The unresolved partitions of the records read so far (namespace → contesting hubs). */
    private final Map<String, Set<String>> journaled = new TreeMap<>();
    private long readUpTo;
    private LogWatch watch;
    private PartitionTracker tracker;
    private volatile AdvisoryFold fold = new AdvisoryFold();
    private volatile Map<String, Set<String>> snapshot = Map.of();
    private double leadSince;

    /**
     * @param decisions the resolver every claim of this node is decided with; its fold stays
     *        empty, so only the journaled partitions refuse
     * @param leading whether this node leads the cluster now
     */
    public ClusterWatch(HubContext hub, WatchSettings settings, OwnershipResolver decisions, SqliteJournal journal,
                        Mirrors mirrors, BooleanSupplier leading, PeerLinks links) {
        this.hub = hub;
        this.settings = settings;
        this.decisions = decisions;
        this.journal = journal;
        this.mirrors = mirrors;
        this.leading = leading;
        this.links = links;
        this.audit = new AuditJournal(hub.actor(), hub.config().hubId());
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "synapse-cluster-watch");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Reads the partition records this node's journal copy gained every {@value #READ_MILLIS} ms
     * (what the node refuses trails what it applied by at most that), and on the leader watches
     * and compares once a second.
     */
    public void start() {
        thread.scheduleWithFixedDelay(this::read, 0, READ_MILLIS, TimeUnit.MILLISECONDS);
        thread.scheduleWithFixedDelay(this::tick, 0, 1, TimeUnit.SECONDS);
    }

    private void read() {
        try {
            readJournal();
        } catch (RuntimeException fault) {
            LOG.error("cluster watch: reading partition records failed", fault);
        }
    }

    private void tick() {
        try {
            boolean lead = leading.getAsBoolean();
            if (lead && watch == null) {
                lead();
            } else if (!lead && watch != null) {
                LOG.info("cluster watch: this node no longer leads; it stops polling the watched peers");
                stop();
            }
            if (tracker != null && polledSinceLeading()) {
                tracker.refresh(hub.clock().nowSeconds());
            }
        } catch (RuntimeException fault) {
            LOG.error("cluster watch tick failed", fault);
        }
    }

    /** Applies the partition records committed since the last read to what this node refuses. */
    private void readJournal() {
        List<JournaledEvent> rows;
        long last;
        try {
            // the copy's end, read with the rows on the actor (its writer): the next read starts there, so
            // each read looks only at the rows applied since, found or not
            Map.Entry<Long, List<JournaledEvent>> read = hub.actor().read(s -> {
                try {
                    return Map.entry(journal.lastSeq(), journal.readAfter(readUpTo, PAGE, KINDS));
                } catch (JournalException e) {
                    throw new IllegalStateException(e.getMessage(), e);
                }
            }).get();
            last = read.getKey();
            rows = read.getValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (java.util.concurrent.ExecutionException e) {
            LOG.warn("cluster watch: cannot read partition records: {}", e.getCause().getMessage());
            return;
        }
        if (rows.size() < PAGE) {
            readUpTo = Math.max(readUpTo, last);
        }
        if (rows.isEmpty()) {
            return;
        }
        List<Map.Entry<String, JsonNode>> records = new ArrayList<>();
        for (JournaledEvent e : rows) {
            readUpTo = Math.max(readUpTo, e.seq());
            if (e.event() instanceof AuditRecordEvent a) {
                try {
                    records.add(Map.entry(a.kind(), MAPPER.readTree(a.payloadJson())));
                } catch (java.io.IOException bad) {
                    LOG.warn("cluster watch: unreadable {} record at seq {}", a.kind(), e.seq());
                }
            }
        }
        for (Map.Entry<String, JsonNode> r : records) {
            Map<String, Set<String>> one = PartitionTracker.unresolved(List.of(r));
            String ns = r.getValue().path("namespace").asText(null);
            if (ns == null) {
                continue;
            }
            if (one.containsKey(ns)) {
                journaled.put(ns, new TreeSet<>(one.get(ns)));
            } else {
                journaled.remove(ns);
            }
        }
        decisions.journaledPartitions().retainAll(journaled.keySet());
        decisions.journaledPartitions().addAll(journaled.keySet());
        snapshot = new TreeMap<>(journaled);
        if (rows.size() == PAGE) {
            readJournal();
        }
    }

    private void lead() {
        try {
            AdvisoryFold next = new AdvisoryFold();
            watch = new LogWatch(settings, next, mirrors.open(), audit, hub.config().hubId(),
                    () -> hub.clock().nowSeconds());
            fold = next;
            leadSince = hub.clock().nowSeconds();
        } catch (Mirror.MirrorException e) {
            LOG.error("cluster watch: cannot open this node's mirror; it leads without watching: {}", e.getMessage());
            return;
        }
        readJournal(); // the partitions as the journal holds them now, so none is entered twice
        tracker = new PartitionTracker(new OwnershipResolver(decisions.owners(), fold), audit, new TreeMap<>(journaled));
        watch.start(links);
        LOG.info("cluster watch: this node leads; it polls {} watched peer(s) for the cluster", settings.peers().size());
    }

    /**
     * Whether every watched peer was polled since this node began to lead: until then its fold
     * (from its own mirror, maybe old or empty) would make a journaled partition look healed.
     * A peer that cannot be polled keeps the cluster's partition state as journaled (fails closed).
     */
    private boolean polledSinceLeading() {
        for (dev.synapsehub.federation.follow.WatchPeer p : settings.peers()) {
            dev.synapsehub.federation.follow.PeerView v = fold.peer(p.label());
            if (v == null || v.lastSuccess() < leadSince) {
                return false;
            }
        }
        return true;
    }

    private void stop() {
        watch.close();
        watch = null;
        tracker = null;
        fold = new AdvisoryFold();
    }

    /** The leader's fold of the watched peers (empty on a follower). */
    public AdvisoryFold fold() {
        return fold;
    }

    /** The partitions this node refuses, as read from its journal copy. */
    public Map<String, Set<String>> partitions() {
        return snapshot;
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
    }
}
