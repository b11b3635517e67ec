package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorRefusedException;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.CommitUnknownException;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import dev.synapsehub.journal.SqliteJournal;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * One node of a mesh: an embedded Ratis server whose state machine feeds the node's own
 * {@link CoordinationActor}. The leader's actor decides and proposes each group commit as one
 * record ({@link MeshJournal}); every node applies committed records on its actor through the
 * same {@code CoordinationState.apply} that replay uses; followers hand their mutations to the
 * leader ({@link Forwarder}). Start with {@link #start()}, then serve the edge on
 * {@link #actor()}.
 */
public final class MeshNode implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(MeshNode.class.getName());

    private final MeshConfig config;
    private final String nodeId;
    private final RaftGroup group;
    private final EdgeBinding edge;
    private final ReplicaCursor cursor = new ReplicaCursor();
    private final Map<Mutation, String> forwardedOrigins = Collections.synchronizedMap(new IdentityHashMap<>());
    /** The intent id of each write in flight here (exactly-once forwarding and replay). */
    private final IntentTags tags = new IntentTags();
    /** What committed under each recent intent id (actor thread). */
    private final DecidedIntents decidedIntents = new DecidedIntents();
    /** Forwarded writes this leader is deciding now, by intent id: a retry joins the first attempt. */
    private final Map<String, CompletableFuture<Message>> forwardsInFlight = new java.util.HashMap<>();
    private final ScheduledExecutorService scheduler;
    private final MeshStateMachine stateMachine;
    private final RaftServer server;
    private final RaftClient client;
    private final MeshJournal journal;
    private final MeshSite site;
    private final Forwarder forwarder;
    /** Extensions' asks of the leader (federation's one link per owning hub), on a client of their own. */
    private final RaftClient askClient;
    /**
     * The settings check's asks of the leader, on a client of their own: a client's RPC matches replies
     * by call id per server, so two users numbering their calls from 1 on one client collide.
     */
    private final RaftClient settingsClient;
    private final LeaderAsks leaderAsks;
    /** The channel resets of the read-index and lead-confirmation client. */
    private final ChannelResets readResets;
    private final CoordinationActor actor;
    private final MutationCodec mutations;
    private final OutcomeCodec outcomes = new OutcomeCodec();
    private final ReplyCodec replies = new ReplyCodec();
    private final ClientId proposerId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    /** Applied records whose edge effects could not be applied here (endHere), since start. */
    private final AtomicLong edgeEffectFailures = new AtomicLong();
    /** Other nodes' decisions that could not be published here (publishRemote), since start. */
    private final AtomicLong remotePublishFailures = new AtomicLong();
    /** Forwarded mutations whose decision failed here, answered as a refusal (Replica#decisionFault), since start. */
    private final AtomicLong forwardDecisionFaults = new AtomicLong();
    private volatile boolean closed;
    private final MeshIntents intents;
    private final ReadStaleness staleness;
    /** How long this node has known no leader (/health's mesh_no_leader). */
    private final LeaderAbsence leaderAbsence;
    private final LinearizableReads reads;
    /** Confirms this node still leads, for linearizable reads and decisions without events. */
    private final LeadershipCheck lead;
    /** Read indexes and lead confirmations, on a client of their own. */
    private final RaftClient readsClient;
    /** This node's mesh TLS files, followed while it runs; null without TLS. */
    private final MeshTlsReload tlsReload;
    /** This node's governance settings against the leader's (docs/mesh.md, "Nodes agree on their governance settings"). */
    private final MeshSettingsCheck settingsCheck;
    /** The leader this node last heard of (its intents' fence names it). */
    private volatile String lastLeader;
    /** Told of each batch applied here but decided elsewhere (the cockpit's feed), or null. */
    private volatile java.util.function.Consumer<List<JournaledEvent>> replicatedTap;
    /** Told when an installed snapshot replaced the state (the cockpit's open pages reload), or null. */
    private volatile Runnable restoredTap;
    /** Test only: runs before each committed record is applied (a fault it throws is an apply failure). */
    private volatile Runnable applyTap;
    private final java.util.concurrent.atomic.AtomicLong unannounced = new java.util.concurrent.atomic.AtomicLong();
    /** True from a record left unannounced for its age (logged) until one is announced again; Ratis' apply thread only. */
    private boolean unannouncing;
    /** The thread that closes the Raft server of a node that could not apply a committed record, once started. */
    private final java.util.concurrent.atomic.AtomicReference<Thread> leaving = new java.util.concurrent.atomic.AtomicReference<>();
    /**
     * The commit index this node found when it first heard from a leader: the records up to it
     * are history (replayed after a restart, or missed while down) that it applies but does not
     * publish to its connections. Until then nothing is published.
     */
    private volatile long publishAfter = Long.MAX_VALUE;
    private final Clock clock;
    private final MeshCompaction compaction;
    /** The log index of the last state image captured for a snapshot; touched on the actor thread only. */
    private long lastCaptureIndex;

    /** A node with the default log compaction ({@link MeshCompaction#DEFAULTS}). */
    public MeshNode(MeshConfig config, String hubId, Journal local, CoordinationState state, Clock clock,
                    ActorSettings settings, EdgeBinding edge) throws IOException {
        this(config, hubId, local, state, clock, settings, edge, MeshCompaction.DEFAULTS);
    }

    /**
     * Builds a node; nothing runs until {@link #start()}.
     *
     * @param hubId the hub id the whole mesh shows agents (the same on every node)
     * @param local the node's own journal, kept as a copy of the committed events (mailbox replay)
     * @param state a fresh state: the node rebuilds it from the Raft log
     * @throws MeshRejoinRefused when its storage is empty but the running mesh counts it as a voter ({@link MeshStart})
     */
    public MeshNode(MeshConfig config, String hubId, Journal local, CoordinationState state, Clock clock,
                    ActorSettings settings, EdgeBinding edge, MeshCompaction compaction) throws IOException {
        this(config, hubId, local, state, clock, settings, edge, compaction, () -> false);
    }

    /**
     * As above; when {@code stopRequested} holds or the thread is interrupted while a node with empty
     * storage asks its peers ({@link MeshStart}), it throws {@link java.io.InterruptedIOException}
     * having opened nothing.
     */
    public MeshNode(MeshConfig config, String hubId, Journal local, CoordinationState state, Clock clock,
                    ActorSettings settings, EdgeBinding edge, MeshCompaction compaction,
                    java.util.function.BooleanSupplier stopRequested) throws IOException {
        this.config = config;
        this.compaction = compaction;
        this.nodeId = config.nodeId();
        this.edge = edge;
        this.clock = clock;
        this.mutations = new MutationCodec(edge);
        List<RaftPeer> peers = new ArrayList<>();
        for (MeshPeer p : config.peers()) {
            peers.add(RaftPeer.newBuilder().setId(p.id()).setAddress(p.address()).build());
        }
        this.group = RaftGroup.valueOf(RaftGroupId.valueOf(config.groupId()), peers);
        // decided before anything is opened: a node refused here (MeshRejoinRefused) leaves nothing to close
        RaftGroup startGroup = MeshStart.serverGroup(config, group, stopRequested);
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "synapse-mesh-" + nodeId);
            t.setDaemon(true);
            return t;
        });
        RaftProperties properties = properties(config);
        compaction(properties, compaction);
        this.stateMachine = new MeshStateMachine(new Replica(), nodeId);
        // one TLS setting for Raft, forwarding and admin traffic alike (seed 001 §15); empty without TLS
        // the TLS files are re-read when they change (MeshTlsReload): a rotation needs no restart
        this.tlsReload = config.tls() == null ? null : new MeshTlsReload(nodeId, config.tls());
        org.apache.ratis.conf.Parameters transport = tlsReload == null ? MeshTls.parameters(null) : tlsReload.parameters();
        this.client = RaftClient.newBuilder().setRaftGroup(group).setProperties(properties).setParameters(transport)
                .setRetryPolicy(RetryPolicies.noRetry()).build();
        this.forwarder = new Forwarder(nodeId, group.getGroupId(), client.getClientRpc(), new Forwarder.Node() {
            @Override
            public RaftPeerId leader() {
                DivisionInfo info = info();
                return info == null ? null : info.getLeaderId();
            }

            @Override
            public void whenApplied(long seq, Runnable release) {
                actor().applyReplicated(s -> {
                    cursor.whenApplied(seq, release);
                    return null;
                });
            }

            @Override
            public boolean decidesHere() {
                return !closed && site.decidesHere();
            }

            @Override
            public long hold() {
                return MeshNode.this.hold();
            }

            @Override
            public void decideHere(Mutation mutation, CompletableFuture<Outcome> future) {
                actor().submit(mutation).whenComplete((outcome, fault) -> {
                    if (fault != null) {
                        future.completeExceptionally(fault);
                    } else {
                        future.complete(outcome);
                    }
                });
            }
        }, mutations, scheduler, config.commitTimeout().toMillis());
        // an ask waits on the leader's handler (a claim forwarded to its owner: up to its 10 s bound), longer than
        // a commit, so it has a client whose request timeout covers it; each ask bounds itself
        RaftProperties askProperties = properties(config);
        RaftClientConfigKeys.Rpc.setRequestTimeout(askProperties, millis(ASK_TIMEOUT_MILLIS));
        this.askClient = RaftClient.newBuilder().setRaftGroup(group).setProperties(askProperties)
                .setParameters(transport).setRetryPolicy(RetryPolicies.noRetry()).build();
        this.leaderAsks = new LeaderAsks(nodeId, group.getGroupId(), askClient.getClientRpc(), () -> {
            DivisionInfo info = info();
            return info == null ? null : info.getLeaderId();
        }, () -> !closed && MeshNode.this.site.decidesHere(), scheduler);
        this.lastLeader = nodeId;
        this.intents = new MeshIntents(nodeId, IntentQueue.open(new IntentStore(
                IntentStore.beside(config.storageDir()), nodeId), nodeId, mutations), new IntentView(), this::actor,
                edge, clock, scheduler, config.commitTimeout().toMillis() + " ms", tags);
        // read indexes and lead confirmations on a client of their own, numbering their calls from one counter
        this.readsClient = RaftClient.newBuilder().setRaftGroup(group).setProperties(properties(config))
                .setParameters(transport).setRetryPolicy(RetryPolicies.noRetry()).build();
        AtomicLong readCallIds = new AtomicLong();
        ChannelResets readResets = new ChannelResets();
        this.readResets = readResets;
        this.lead = new LeadershipCheck(nodeId, group.getGroupId(), readsClient.getClientRpc(), readCallIds, readResets,
                new LeadershipCheck.Node() {
                    @Override
                    public boolean decides() {
                        return !closed && site.decidesHere();
                    }

                    @Override
                    public long term() {
                        DivisionInfo i = info();
                        return i == null ? -1 : i.getCurrentTerm();
                    }

                    @Override
                    public MeshVoters voters() {
                        return MeshNode.this.voters();
                    }
                }, scheduler, config.commitTimeout().toMillis());
        this.site = new MeshSite(nodeId, cursor, this::info, forwarder, forwardedOrigins, intents::queueInstead, tags,
                decidedIntents, lead::confirm, config.commitTimeout().toMillis());
        this.reads = new LinearizableReads(readsClient.getClientRpc(), readCallIds, readResets, group.getGroupId(),
                new LinearizableReads.Node() {
                    @Override
                    public CompletableFuture<Void> afterAppliedSoFar() {
                        // a node that failed to apply is not at the read index whatever its actor says: refused
                        return site.failure() != null ? CompletableFuture.failedFuture(
                                new dev.synapsehub.core.actor.ActorRefusedException(new Outcome.Refused(
                                        Outcome.Reason.BUSY, "This node stopped applying the mesh's records ("
                                        + site.failure() + "); nothing was read. Read through another node.")))
                                : actor().<Void>applyReplicated(s -> null);
                    }

                    @Override
                    public boolean decides() {
                        return !closed && site.decidesHere();
                    }

                    @Override
                    public RaftPeerId leader() {
                        DivisionInfo i = info();
                        return closed || i == null ? null : i.getLeaderId();
                    }

                    @Override
                    public long commitIndex() {
                        return MeshNode.this.commitIndex();
                    }

                    @Override
                    public long appliedIndex() {
                        return lastAppliedLogIndex();
                    }
                }, lead, scheduler, config.commitTimeout().toMillis());
        this.settingsClient = RaftClient.newBuilder().setRaftGroup(group).setProperties(properties(config))
                .setParameters(transport).setRetryPolicy(RetryPolicies.noRetry()).build();
        this.settingsCheck = new MeshSettingsCheck(nodeId, settingsClient.getClientRpc(), group.getGroupId(), () -> {
            DivisionInfo info = info();
            return closed || info == null ? null : info.getLeaderId();
        }, config.commitTimeout().toMillis());
        this.staleness = new ReadStaleness(new IntentView(), config.electionTimeoutMax().toMillis());
        this.leaderAbsence = new LeaderAbsence(this::knowsALeader, LeaderAbsence.afterMillis(config));
        this.journal = new MeshJournal(nodeId, hubId, cursor, this::propose, local, edge, forwardedOrigins,
                stateMachine::highestOwnOriginSeq, tags, decidedIntents, this::hold);
        this.actor = new CoordinationActor(state, journal, clock, settings, site);
        this.server = RaftServer.newBuilder().setServerId(RaftPeerId.valueOf(nodeId)).setGroup(startGroup)
                .setStateMachine(stateMachine).setProperties(properties).setParameters(transport)
                .setOption(RaftStorage.StartupOption.RECOVER).build();
    }

    /** The Raft settings of a node of {@code config} (package-private: tests pin them). */
    static RaftProperties properties(MeshConfig config) {
        RaftProperties p = MeshTransport.properties();
        RaftServerConfigKeys.setStorageDir(p, List.of(config.storageDir().toFile()));
        GrpcConfigKeys.Server.setHost(p, config.self().host());
        GrpcConfigKeys.Server.setPort(p, config.self().port());
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, millis(config.electionTimeoutMin().toMillis()));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, millis(config.electionTimeoutMax().toMillis()));
        // a leader that steps down (it heard no majority in time) may stand again after this, not Ratis' 10 s:
        // with two survivors of a leader kill the other cannot win without its vote, so every such step-down
        // on a loaded host stalled the mesh about 11 s (docs/benchmarks.md, "Mesh")
        RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(p, millis(config.electionTimeoutMax().toMillis()));
        // snapshots are requested by the node when its actor has captured an image (MeshSnapshots), not by Ratis
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, false);
        RaftServerConfigKeys.Log.setPreallocatedSize(p, SizeInBytes.valueOf("1MB"));
        // an entry counts toward a commit only once fsynced here (Ratis' defaults, pinned)
        RaftServerConfigKeys.Log.setUnsafeFlushEnabled(p, false);
        RaftServerConfigKeys.Log.setAsyncFlushEnabled(p, false);
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, millis(config.commitTimeout().toMillis()));
        // the mesh's own requests are non-linearizable or stale reads; linearizable reads on request do not use
        // Ratis' ReadIndex, which in 3.2.2 may answer a deposed leader without a heartbeat round (LeadershipCheck)
        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        RaftServerConfigKeys.Read.setTimeout(p, millis(config.commitTimeout().toMillis()));
        return p;
    }

    /** Log compaction: snapshots every N entries, the log purged up to the newest, two intervals kept. */
    private static void compaction(RaftProperties p, MeshCompaction c) {
        RaftServerConfigKeys.Snapshot.setCreationGap(p, 1);
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 3);
        // purge past a follower that is down: it catches up by snapshot install instead of holding the log
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Log.setPurgePreservationLogNum(p, c.preservedEntries());
        RaftServerConfigKeys.Log.setPurgeGap(p, (int) Math.max(1, Math.min(1024, c.snapshotEvery())));
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(c.segmentBytes()));
        RaftServerConfigKeys.Log.setPreallocatedSize(p, SizeInBytes.valueOf(Math.min(1L << 20, c.segmentBytes())));
    }

    private static TimeDuration millis(long ms) {
        return TimeDuration.valueOf(ms, TimeUnit.MILLISECONDS);
    }

    /** Starts the actor, then the Raft server (which replays the log into the actor). */
    public void start() throws IOException {
        checkRaftAddress();
        actor.start();
        server.start();
        intents.start();
        scheduler.scheduleWithFixedDelay(staleness::sample, 100, 100, TimeUnit.MILLISECONDS);
        scheduler.scheduleWithFixedDelay(leaderAbsence::sample, 100, 100, TimeUnit.MILLISECONDS);
        settingsCheck.logEffective();
        scheduler.scheduleWithFixedDelay(settingsCheck::tick, 0, MeshSettingsCheck.TICK_MILLIS, TimeUnit.MILLISECONDS);
        if (tlsReload != null) {
            long every = MeshTlsReload.CHECK_EVERY.toMillis();
            scheduler.scheduleWithFixedDelay(tlsReload::check, every, every, TimeUnit.MILLISECONDS);
        }
        LOG.log(System.Logger.Level.INFO, "mesh node " + nodeId + " started: raft " + config.self().address()
                + ", group " + group.getGroupId() + ", " + voters().count() + " voters, quorum "
                + voters().quorum() + ", storage " + config.storageDir() + ", transport "
                + (config.tls() == null ? "plain gRPC (unauthenticated)" : config.tls().describe()));
    }

    /**
     * Ratis ends the JVM (System.exit 1, nothing closed) when its gRPC server cannot bind, so the
     * address is tried first and a busy one told as this node's. A program that takes the port
     * between this check and Ratis's bind still meets Ratis's exit.
     */
    private void checkRaftAddress() throws RaftAddressUnavailable {
        MeshPeer self = config.self();
        try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
            probe.setReuseAddress(true); // never stricter than the real bind: a port in TIME_WAIT is no conflict
            probe.bind(new java.net.InetSocketAddress(self.host(), self.port()));
        } catch (IOException e) {
            throw new RaftAddressUnavailable(self, e);
        }
    }

    /** The longest an extension's ask of the leader may wait ({@link LeaderAsks}); each ask bounds itself below it. */
    static final long ASK_TIMEOUT_MILLIS = 60_000;

    /** What extensions ask of the cluster's current leader (federation: one link per owning hub). */
    public dev.synapsehub.net.extension.ClusterLeader leader() {
        return leaderAsks;
    }

    /** The node's actor: the edge submits to it as to a single hub's. */
    public CoordinationActor actor() {
        return actor;
    }

    /** The node's journal (the Raft log; mailbox reads go to its local copy), for the edge. */
    public Journal journal() {
        return journal;
    }

    /** The last seq of the node's local journal copy. */
    long journalLastSeq() {
        return journal.local().lastSeq();
    }

    /**
     * This node's hold (docs/mesh.md, "Intent ids"): the lowest hand-over base among the writes
     * it holds in flight or queued, its applied index when none. No intent id this node may still
     * send commits at or below it, so every node may forget this node's ids up to it. Read in
     * this order (applied, in flight, queued) because a write is queued before its tag goes.
     */
    long hold() {
        long applied = cursor.appliedIndex();
        long inFlight = tags.lowestOwnBase();
        long queued = intents.queue().lowestHandOverBase();
        return Math.max(0, Math.min(applied, Math.min(inFlight, queued)));
    }

    /**
     * Sets how many intent ids every node remembers in any case and how many more it keeps for
     * origins that may still replay them (tests use small ones; every node of a mesh the same).
     * Before {@link #start()}.
     */
    void intentMemory(int window, int pinnedLimit) {
        decidedIntents.bound(window, pinnedLimit);
    }

    /** What this node remembers of intent ids, as a snapshot would carry it (tests). */
    CompletableFuture<DecidedIntents.Memory> intentMemory() {
        return actor.applyReplicated(s -> decidedIntents.memory());
    }

    /** The intent ids whose decisions this node remembers, oldest first (tests). */
    CompletableFuture<List<String>> decidedIntentIds() {
        return actor.applyReplicated(s -> decidedIntents.ids());
    }

    /**
     * True while this node decides: it leads a term and has applied every record before it
     * (work only the leader does, such as watching other hubs for the cluster, waits for this).
     */
    public boolean decides() {
        return site.decidesHere();
    }

    /** Where this node's actor decides (for tests and status). */
    MeshSite site() {
        return site;
    }

    /** Forwards from now on through {@code wrap} applied to the forwarding transport (tests only). */
    void wrapForwardTransport(java.util.function.UnaryOperator<org.apache.ratis.client.RaftClientRpc> wrap) {
        forwarder.transport(wrap);
    }

    /** The node's offline queue (seed 001 §9). */
    MeshIntents intents() {
        return intents;
    }

    /**
     * Hands {@code tap} every committed batch this node applies without having decided it (on
     * the actor thread, in commit order; it must not block): the cockpit's live feed.
     */
    public void tapReplicated(java.util.function.Consumer<List<JournaledEvent>> tap) {
        this.replicatedTap = tap;
    }

    /**
     * Tells {@code tap} (on the actor thread, after the batches applied before it; it must not
     * block) each time a snapshot replaced this node's state: what was shown of the old state is gone.
     */
    public void tapRestored(Runnable tap) {
        this.restoredTap = tap;
    }

    /** Test only: {@code tap} runs before each committed record is applied; what it throws fails the apply. */
    void tapApply(Runnable tap) {
        this.applyTap = tap;
    }

    /**
     * A node that cannot apply what its group committed leaves the group: its Raft server is
     * closed, on a thread of its own (not from an apply's completion). Left in, it would keep the
     * lead, or win a later election, and never decide, so every write of the mesh would be
     * queued. Its own agents should reconnect to a healthy node (its writes are answered queued or
     * commit_unknown); it must be restored from a healthy peer.
     */
    private void leaveRaft(String why) {
        Thread t = new Thread(() -> {
            try {
                server.close();
                LOG.log(System.Logger.Level.ERROR, "mesh node " + nodeId + " left its Raft group (" + why + "): the"
                        + " others elect a leader without it; restore it from a healthy peer (docs/mesh.md)");
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "mesh node " + nodeId + " could not close its Raft server after"
                        + " failing to apply: " + e);
            }
        }, "mesh-leave-raft-" + nodeId);
        if (leaving.compareAndSet(null, t)) {
            t.setDaemon(true);
            t.start();
        }
    }

    /** The last Raft log index this node's state machine applied (records and Raft's own entries), -1 unknown. */
    long lastAppliedLogIndex() {
        var applied = stateMachine.getLastAppliedTermIndex();
        return applied == null ? -1 : applied.getIndex();
    }

    /**
     * Failures to carry a committed record to this node's edge, since start: each is logged once
     * and counted here.
     *
     * @param edgeEffects applied records whose edge effects (a reclaim's eviction) could not be applied
     * @param remotePublishes other nodes' decisions that could not be published to this node's connections
     */
    public record EdgeFailures(long edgeEffects, long remotePublishes) {
    }

    /**
     * Records applied while this node was in touch but not announced to its connections because
     * they were decided longer ago than {@link #staleAfterSeconds} by this node's clock: a node
     * catching up, or one whose clock runs ahead of the leader's (which would otherwise silence its
     * live delivery without a trace).
     */
    public long unannouncedRecords() {
        return unannounced.get();
    }

    /** The answer to a forwarded mutation whose decision failed on this leader with anything but a refusal. */
    static final Outcome.Refused FORWARD_DECISION_FAILED = new Outcome.Refused(Outcome.Reason.COMMIT_UNKNOWN,
            "The leader failed while deciding this write; it may still apply. Retry with the same idem_key to learn"
                    + " the outcome.");

    /**
     * Forwarded mutations whose decision failed on this node as leader since start: each answered
     * as a refusal (never a failed query, which would end the follower's stream), logged once.
     */
    public long forwardDecisionFaults() {
        return forwardDecisionFaults.get();
    }

    /** Resets of a Raft client's channel that threw, on any of this node's clients, since start. */
    public long channelResetFaults() {
        return forwarder.channelResetFaults() + leaderAsks.channelResetFaults() + settingsCheck.channelResetFaults()
                + readResets.failedResets();
    }

    /** The Ratis state machine (tests ask it as Ratis does). */
    MeshStateMachine stateMachine() {
        return stateMachine;
    }

    /** This node's edge failures, measured now. */
    public EdgeFailures edgeFailures() {
        return new EdgeFailures(edgeEffectFailures.get(), remotePublishFailures.get());
    }

    /** Failures of this node's asks of the leader and of its leadership listeners since start, measured now. */
    LeaderAsks.Failures leaderAskFailures() {
        return leaderAsks.failures();
    }

    /** The offline queue's counters (depth, queued, reconciled, failures), measured now. */
    public IntentCounters intentCounters() {
        return intents.counters();
    }

    /** Strong writes queued here that wait for replay (seed 001 §9, §12 queueDepth). */
    public int queueDepth() {
        return intents.depth();
    }

    /** Linearizable reads on request (seed 001 §12). */
    LinearizableReads reads() {
        return reads;
    }

    /** How fresh this node's reads are now (seed 001 §12). */
    ReadStaleness.Staleness staleness() {
        return staleness.now();
    }

    /**
     * Sets this node's governance settings, compared with the leader's while it runs
     * (before {@link #start()}; without it the node holds {@link MeshGovernanceSettings#NONE}).
     */
    public void governance(MeshGovernanceSettings settings) {
        settingsCheck.settings(settings);
    }

    /** This node's governance settings check. */
    MeshSettingsCheck settingsCheck() {
        return settingsCheck;
    }

    /** This node's mesh TLS files as it follows them, or null without TLS. */
    MeshTlsReload tlsReload() {
        return tlsReload;
    }

    /** This node's id. */
    public String nodeId() {
        return nodeId;
    }

    /** The configuration. */
    public MeshConfig config() {
        return config;
    }

    /**
     * Waits until a leader is known and this node's state holds every record committed when
     * that was learned, so an edge started afterwards does not serve a state far behind.
     *
     * @return true when caught up within {@code timeoutMillis}
     */
    public boolean awaitCaughtUp(long timeoutMillis) throws InterruptedException {
        return awaitCaughtUp(timeoutMillis, () -> false);
    }

    /** As {@link #awaitCaughtUp(long)}, giving up (false) as soon as {@code stopRequested} holds. */
    public boolean awaitCaughtUp(long timeoutMillis, java.util.function.BooleanSupplier stopRequested)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        long target = -1;
        while (System.nanoTime() - deadline < 0 && !stopRequested.getAsBoolean()) {
            DivisionInfo info = info();
            if (info != null && info.getLeaderId() != null) {
                if (target < 0) {
                    target = commitIndex();
                }
                if (stateMachine.getLastAppliedTermIndex() != null
                        && stateMachine.getLastAppliedTermIndex().getIndex() >= target
                        && cursor.appliedIndex() >= stateMachine.lastAccepted()) {
                    return true;
                }
            }
            Thread.sleep(20);
        }
        return false;
    }

    /** True once this node heard from a leader and publishes what commits from then on. */
    public boolean inTouch() {
        return publishAfter != Long.MAX_VALUE;
    }

    /** True while this node's Raft server runs and names a leader (this node or another). */
    private boolean knowsALeader() {
        DivisionInfo info = info();
        return !closed && info != null && info.getLeaderId() != null;
    }

    /**
     * True once this node has known no leader for longer than {@link LeaderAbsence#afterMillis}
     * (an election's worth of time and the commit timeout): its writes are queued or answered
     * commit_unknown meanwhile.
     */
    public boolean leaderMissing() {
        return leaderAbsence.overdue();
    }

    /**
     * True while this node can have its writes decided: it has not stopped applying its group's
     * records and it knows a leader (itself or another).
     */
    public boolean deciding() {
        return site.failure() == null && knowsALeader();
    }

    /** The node's view of the cluster, measured now. */
    public MeshStatus status() {
        DivisionInfo info = info();
        Map<String, Long> match = new LinkedHashMap<>();
        String role = "STOPPED";
        String leader = null;
        long term = 0;
        if (info != null && !closed) {
            role = info.getCurrentRole().name();
            leader = info.getLeaderId() == null ? null : info.getLeaderId().toString();
            term = info.getCurrentTerm();
            if (info.isLeader()) {
                // both lists come from the leader's appenders, in the same order
                long[] indices = info.getFollowerMatchIndices();
                var followers = info.getRoleInfoProto().getLeaderInfo().getFollowerInfoList();
                if (indices != null && indices.length == followers.size()) {
                    for (int i = 0; i < indices.length; i++) {
                        match.put(followers.get(i).getId().getId().toStringUtf8(), indices[i]);
                    }
                }
            }
        }
        return new MeshStatus(nodeId, role, leader, term, commitIndex(), cursor.appliedIndex(), cursor.appliedSeq(),
                voters().quorum(), match, stateMachine.rejected(), forwarder.forwarded(), forwarder.unknownOutcomes(),
                site.failure());
    }

    /**
     * The voters of the Raft configuration this node holds now (it follows membership changes);
     * the start-up peers only until its Raft server has loaded its configuration.
     */
    public MeshVoters voters() {
        MeshVoters startUp = new MeshVoters(config.peers().stream().map(MeshPeer::id).toList(), List.of());
        try {
            MeshVoters held = MeshVoters.of(server.getDivision(group.getGroupId()).getRaftConf());
            // a joining node starts with no configuration until the leader sends one (MeshStart)
            return held.count() == 0 ? startUp : held;
        } catch (IOException | RuntimeException e) {
            return startUp;
        }
    }

    private long commitIndex() {
        try {
            return server.getDivision(group.getGroupId()).getRaftLog().getLastCommittedIndex();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * Whether this node's state holds all its Raft log does: Ratis' state machine applied up to the
     * log's commit index and last entry, and the actor took all it accepted. Not yet after a restart:
     * Ratis answers once it has read its log back, before it has replayed it.
     */
    private boolean holdsItsLog() {
        try {
            RaftLog log = server.getDivision(group.getGroupId()).getRaftLog();
            TermIndex last = log.getLastEntryTermIndex();
            long held = Math.max(log.getLastCommittedIndex(), last == null ? -1 : last.getIndex());
            TermIndex applied = stateMachine.getLastAppliedTermIndex();
            return (applied == null ? -1 : applied.getIndex()) >= held
                    && cursor.appliedIndex() >= stateMachine.lastAccepted();
        } catch (IOException | RuntimeException e) {
            return false; // its division is not there (yet): it cannot tell
        }
    }

    private DivisionInfo info() {
        try {
            return server.getDivision(group.getGroupId()).getInfo();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    // ------------------------------------------------------------------------- proposing

    private MeshJournal.Proposal propose(byte[] record) throws JournalException {
        RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(proposerId)
                .setServerId(RaftPeerId.valueOf(nodeId)).setGroupId(group.getGroupId())
                .setCallId(callIds.incrementAndGet()).setMessage(Message.valueOf(ByteString.copyFrom(record)))
                .setType(RaftClientRequest.writeRequestType()).build();
        CompletableFuture<RaftClientReply> pending;
        try {
            pending = server.submitClientRequestAsync(request);
        } catch (IOException e) {
            throw new JournalException("the record was not proposed: " + e.getMessage(), e);
        }
        RaftClientReply reply;
        try {
            reply = pending.get(config.commitTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new CommitUnknownException("no quorum committed the record within " + config.commitTimeout(), e);
        } catch (ExecutionException e) {
            throw new CommitUnknownException("the proposal failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CommitUnknownException("interrupted while the record was proposed", e);
        }
        if (reply.isSuccess()) {
            return new MeshJournal.Proposal(MeshStateMachine.Verdict.parse(reply.getMessage()), reply.getLogIndex());
        }
        if (reply.getLeaderNotReadyException() != null) {
            throw new JournalException("the record was not proposed: this leader is not ready yet");
        }
        // NotLeader may come after the record was appended: the next leader may still commit it
        throw new CommitUnknownException("the proposal was not confirmed: " + reply.getException(),
                reply.getException());
    }

    // ------------------------------------------------------------------------- applying

    /** Applies a committed record on the actor thread (skipping the state of our own, already applied). */
    private Void applyCommitted(CoordinationState state, long index, ReplicatedBatch batch, boolean publish) {
        if (index > cursor.appliedIndex()) {
            Runnable fault = applyTap;
            if (fault != null) {
                fault.run();
            }
            if (batch.firstSeq() != state.lastSeq() + 1) {
                throw new IllegalStateException("record at index " + index + " starts at seq " + batch.firstSeq()
                        + " but this node's state is at seq " + state.lastSeq());
            }
            for (CoordinationEvent event : batch.events()) {
                state.apply(event);
            }
            decidedIntents.record(index, batch);
            try {
                journal.copyLocally(batch, "replicated");
            } catch (CommitUnknownException e) {
                LOG.log(System.Logger.Level.ERROR, "record at index " + index + ": "
                        + LogRedactor.scrub(e.getMessage()));
            }
            cursor.applied(index, state.lastSeq());
            endHere(batch);
            java.util.function.Consumer<List<JournaledEvent>> tap = replicatedTap;
            if (tap != null) {
                tap.accept(batch.journaled()); // another node's decision: the cockpit's feed sees it here
            }
        }
        captureIfDue(state);
        for (int i = 0; publish && i < batch.decisions().size(); i++) {
            ReplicatedBatch.Decision d = batch.decisions().get(i);
            if (!nodeId.equals(d.originNodeId())) {
                publishRemote(batch, i, d);
            }
        }
        return null;
    }

    /**
     * Every {@code snapshotEvery} log entries, captures the state (committed: replicated jobs run
     * between batches) for the next snapshot and asks Ratis to take it; Ratis writes it on its
     * own thread: the actor never waits for the disk, and Ratis never waits for the actor (which
     * may be blocked on a proposal that only Ratis' apply thread can complete).
     */
    private void captureIfDue(CoordinationState state) {
        long index = cursor.appliedIndex();
        if (index - lastCaptureIndex < compaction.snapshotEvery()) {
            return;
        }
        lastCaptureIndex = index;
        if (!copyDurable(state.lastSeq())) {
            stateMachine.snapshots().notCaptured(); // counted, and /health says snapshots fail
            return; // the next capture tries again; until then the Raft log keeps what the copy may lack
        }
        stateMachine.snapshots().offer(new MeshSnapshotFile(0, index, clock.nowSeconds(), stateMachine.originSeqs(),
                state.image(), decidedIntents.memory()));
        scheduler.execute(this::requestSnapshot);
    }

    /**
     * Syncs the local copy through {@code seq} before a snapshot covers it: after a restart Ratis
     * replays only the entries after the snapshot, and the copy skips what it lacks below it
     * (skipLocalCopyTo), so a row the host's crash took from the copy's unsynced WAL would be gone
     * for good. False when the copy cannot be synced (no snapshot is offered then).
     */
    private boolean copyDurable(long seq) {
        if (!(journal.local() instanceof SqliteJournal sqlite)) {
            return true; // not a file: nothing a host crash could take that a snapshot would hide
        }
        try {
            sqlite.syncCopies();
            return true;
        } catch (JournalException e) {
            LOG.log(System.Logger.Level.ERROR, "mesh node " + nodeId + ": cannot sync the local journal copy through"
                    + " seq " + seq + ": " + LogRedactor.scrub(e.getMessage()) + "; no snapshot is taken until it can");
            return false;
        }
    }

    private void requestSnapshot() {
        if (closed) {
            return;
        }
        SnapshotManagementRequest request = SnapshotManagementRequest.newCreate(proposerId, RaftPeerId.valueOf(nodeId),
                group.getGroupId(), callIds.incrementAndGet(), config.commitTimeout().toMillis());
        try {
            server.snapshotManagementAsync(request).whenComplete((reply, fault) -> {
                if (fault != null || reply == null || !reply.isSuccess()) {
                    LOG.log(System.Logger.Level.WARNING, "mesh node " + nodeId + ": snapshot request not done: "
                            + (fault != null ? fault : reply == null ? "no reply" : reply.getException())
                            + "; the capture is written with the next one");
                }
            });
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "mesh node " + nodeId + ": cannot request a snapshot: " + e);
        }
    }

    /** This node's snapshots, measured now. */
    public SnapshotStatus snapshotStatus() {
        MeshSnapshots s = stateMachine.snapshots();
        return new SnapshotStatus(s.latestIndex(), s.loadedIndex(), s.taken(), s.corrupt(), s.failed(),
                s.failing(), logStartIndex(), compaction.snapshotEvery());
    }

    /**
     * A node's snapshots and compacted log.
     *
     * @param lastSnapshotIndex the newest snapshot's log index, -1 when none
     * @param loadedIndex the snapshot this node started from or last installed, -1 when none
     * @param taken snapshots written since start
     * @param corrupt snapshot files refused as corrupt since start
     * @param failed snapshots that could not be written since start
     * @param failing true while the last snapshot tried could not be written
     * @param logStartIndex the first index the Raft log still holds (compaction moves it forward), -1 unknown
     * @param snapshotEvery the configured interval, in log entries
     */
    public record SnapshotStatus(long lastSnapshotIndex, long loadedIndex, long taken, long corrupt, long failed,
                                 boolean failing, long logStartIndex, long snapshotEvery) {
    }

    private long logStartIndex() {
        try {
            return server.getDivision(group.getGroupId()).getRaftLog().getStartIndex();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * A decision older than this is history, not news: a node that catches up after being cut
     * off applies it but does not announce it to its connections (they read the current state).
     */
    private double staleAfterSeconds() {
        return (2 * config.commitTimeout().toMillis() + config.electionTimeoutMax().toMillis()) / 1000.0;
    }

    /** What an applied record ends on every node ends here, published or not (EdgeBinding#appliedRemote). */
    private void endHere(ReplicatedBatch batch) {
        try {
            edge.appliedRemote(batch.journaled());
        } catch (RuntimeException e) {
            edgeEffectFailures.incrementAndGet();
            LOG.log(System.Logger.Level.ERROR, "cannot apply a committed record's edge effects here",
                    LogRedactor.safe(e));
        }
    }

    private void publishRemote(ReplicatedBatch batch, int i, ReplicatedBatch.Decision d) {
        try {
            edge.publishRemote(new RemoteDecision(d.originNodeId(), edge.context(d.context()), replies.read(d.reply()),
                    d.storedResponse(), batch.committedOf(i)));
        } catch (RuntimeException e) {
            remotePublishFailures.incrementAndGet();
            LOG.log(System.Logger.Level.ERROR, "cannot publish a decision of " + d.originNodeId() + " here",
                    LogRedactor.safe(e));
        }
    }

    /** What the offline queue reads of this node. */
    private final class IntentView implements MeshIntents.View, ReadStaleness.View {
        @Override
        public boolean leading() {
            return !closed && site.decidesHere();
        }

        @Override
        public boolean leaderKnown() {
            DivisionInfo i = info();
            return !closed && i != null && i.getLeaderId() != null && inTouch();
        }

        @Override
        public long sinceLeaderContactMillis() {
            DivisionInfo i = info();
            if (i == null) {
                return -1;
            }
            var role = i.getRoleInfoProto();
            return role.hasFollowerInfo() && role.getFollowerInfo().hasLeaderInfo()
                    ? role.getFollowerInfo().getLeaderInfo().getLastRpcElapsedTimeMs() : -1;
        }

        @Override
        public boolean caughtUp() {
            var applied = stateMachine.getLastAppliedTermIndex();
            return applied != null && applied.getIndex() >= commitIndex()
                    && cursor.appliedIndex() >= stateMachine.lastAccepted();
        }

        @Override
        public int queueDepth() {
            return intents.depth();
        }

        @Override
        public long term() {
            DivisionInfo i = info();
            return i == null ? 0 : i.getCurrentTerm();
        }

        @Override
        public String leader() {
            return lastLeader;
        }

        @Override
        public long baseIndex() {
            return cursor.appliedIndex();
        }

        /** Seed 001 §11 step 4: a leader is known, this node heard from it and holds what was accepted. */
        @Override
        public boolean readyToReplay() {
            DivisionInfo i = info();
            if (closed || i == null || i.getLeaderId() == null || !inTouch() || site.failure() != null
                    || cursor.appliedIndex() < stateMachine.lastAccepted()) {
                return false;
            }
            return !i.isLeader() || site.decidesHere();
        }
    }

    /** The Ratis state machine's view of this node. */
    private final class Replica implements MeshStateMachine.Replica {
        @Override
        public void committed(long index, MeshEnvelope record, ReplicatedBatch batch) {
            staleness.committed(record.createdAt());
            double age = clock.nowSeconds() - record.createdAt();
            boolean publish = index > publishAfter && age <= staleAfterSeconds();
            if (index > publishAfter && !publish) {
                unannounced.incrementAndGet();
                if (!unannouncing) {
                    unannouncing = true;
                    LOG.log(System.Logger.Level.WARNING, "mesh node " + nodeId + " applies record " + record.recordId()
                            + " without announcing it to its connections: decided " + String.format(java.util.Locale.ROOT,
                            "%.1f", age) + " s ago by this node's clock, more than " + staleAfterSeconds() + " s (a catch-up,"
                            + " or this node's clock is ahead of the leader's); logged once until one is announced again,"
                            + " counted in synapse_mesh_unannounced_records_total");
                }
            } else if (publish && unannouncing) {
                unannouncing = false;
                LOG.log(System.Logger.Level.INFO, "mesh node " + nodeId + " announces applied records again");
            }
            actor.applyReplicated(s -> applyCommitted(s, index, batch, publish)).whenComplete((done, fault) -> {
                if (fault != null && !closed) {
                    String why = "cannot apply committed record " + record.recordId() + " at index " + index + ": "
                            + LogRedactor.scrub(fault.getMessage());
                    site.fail(why);
                    LOG.log(System.Logger.Level.ERROR, "mesh node " + nodeId + " stops deciding: " + why
                            + "; restore it from a healthy peer");
                    leaveRaft(why);
                }
            });
        }

        @Override
        public void restored(long index, StateImage image, DecidedIntents.Memory intents) {
            actor.applyReplicated(s -> {
                if (index > cursor.appliedIndex()) {
                    Map<String, String> pinsBefore = pinKeys(s);
                    s.replaceWith(image);
                    decidedIntents.restore(intents); // the ids committed up to the snapshot, as every node remembers them
                    cursor.applied(index, s.lastSeq());
                    endPins(pinsBefore, pinKeys(s));
                    lastCaptureIndex = Math.max(lastCaptureIndex, index);
                    skipLocalCopyTo(s.lastSeq());
                    Runnable tap = restoredTap;
                    if (tap != null) {
                        tap.run(); // the snapshot carries no events: the cockpit's pages must reload
                    }
                }
                return null;
            }).whenComplete((done, fault) -> {
                if (fault != null && !closed) {
                    site.fail("cannot load the snapshot at index " + index + ": "
                            + LogRedactor.scrub(fault.getMessage()));
                    LOG.log(System.Logger.Level.ERROR, "mesh node " + nodeId + " stops deciding: cannot load the"
                            + " snapshot at index " + index + ": " + LogRedactor.scrub(fault));
                    leaveRaft("cannot load the snapshot at index " + index);
                }
            });
        }

        /** Each committed pin's key id, by name. */
        private Map<String, String> pinKeys(CoordinationState state) {
            Map<String, String> keys = new java.util.HashMap<>();
            state.pins().image().forEach(p -> keys.put(p.name(), p.keyId()));
            return keys;
        }

        /**
         * A snapshot that replaced the state may hold the end of pins this node held (a reclaim it
         * never applied as a record: it was cut off while the log was compacted past it). What an
         * applied reclaim ends here ends for those too: every pin the snapshot no longer has, or
         * has for another key, has its holder evicted and its ownership lease ended on this node.
         */
        private void endPins(Map<String, String> before, Map<String, String> after) {
            List<String> ended = new ArrayList<>();
            before.forEach((name, key) -> {
                if (!key.equals(after.get(name))) {
                    ended.add(name);
                }
            });
            if (ended.isEmpty()) {
                return;
            }
            Collections.sort(ended);
            LOG.log(System.Logger.Level.INFO, "mesh node " + nodeId + ": the installed snapshot ends " + ended.size()
                    + " identity pin(s) this node held; their holders here are evicted and leases ended");
            try {
                edge.pinsEnded(ended);
            } catch (RuntimeException e) {
                edgeEffectFailures.incrementAndGet();
                LOG.log(System.Logger.Level.ERROR, "cannot end here the identity pins an installed snapshot ended",
                        LogRedactor.safe(e));
            }
        }

        /**
         * The local copy serves mailbox replay, and the Raft log no longer holds what the snapshot
         * covers: the copy numbers on after it (the gap recorded as compacted), so later records
         * keep their seqs there.
         */
        private void skipLocalCopyTo(long seq) {
            long copied = journal.local().lastSeq();
            if (copied >= seq) {
                return;
            }
            String gap = "seqs " + (copied + 1) + ".." + seq;
            if (!(journal.local() instanceof SqliteJournal sqlite)) {
                LOG.log(System.Logger.Level.WARNING, "mesh node " + nodeId + ": the local journal copy lacks " + gap
                        + " (in the loaded snapshot only)");
                return;
            }
            try {
                sqlite.advanceTo(seq);
                LOG.log(System.Logger.Level.WARNING, "mesh node " + nodeId + ": the local journal copy skips " + gap
                        + " (in the loaded snapshot only: installed from the leader, or copies of them that"
                        + " failed here); mailbox replay and log serving on this node cannot serve them");
            } catch (JournalException e) {
                LOG.log(System.Logger.Level.ERROR, "mesh node " + nodeId + ": cannot skip the local journal copy past "
                        + gap + ": " + LogRedactor.scrub(e.getMessage()) + "; mailbox seqs may be off");
            }
        }

        @Override
        public void leaderKnown() {
            DivisionInfo known = info();
            if (known != null && known.getLeaderId() != null) {
                lastLeader = known.getLeaderId().toString();
            }
            if (publishAfter == Long.MAX_VALUE) {
                publishAfter = Math.max(0, commitIndex()); // what committed before we were in touch is history
            }
        }

        @Override
        public void leaderChanged() {
            leaderAsks.leadershipChanged(); // a leader that lost the lead lets go of what only the leader holds
        }

        @Override
        public void leaderReady() {
            DivisionInfo info = info();
            if (info == null) {
                return;
            }
            long term = info.getCurrentTerm();
            actor.applyReplicated(s -> {
                cursor.ready(term);
                return null;
            });
            LOG.log(System.Logger.Level.INFO, "mesh node " + nodeId + " leads term " + term);
            // decidesHere() turns true once the actor took the term: tell the listeners after it
            actor.applyReplicated(s -> null).whenComplete((done, fault) -> leaderAsks.leadershipChanged());
        }

        @Override
        public CompletableFuture<Message> forwarded(byte[] request) {
            Mutation mutation;
            String origin;
            JsonNode json;
            try {
                json = MeshJson.tree(request);
                String incompatible = MeshProtocol.incompatibility(json.path("protocol").asText(null),
                        json.path("version").asText(null));
                if (incompatible != null) {
                    throw new IllegalArgumentException(incompatible);
                }
                if (LinearizableReads.QUERY.equals(json.path(MeshQueueProbe.QUERY).asText(null))) {
                    // a follower's read index: this leader's commit index once a majority confirmed it still leads
                    CompletableFuture<Long> index = closed || !site.decidesHere()
                            ? CompletableFuture.failedFuture(new IllegalStateException("this node does not lead"))
                            : reads.readIndexHere();
                    return index.handle((i, f) -> Message.valueOf(ByteString.copyFrom(MeshJson.bytes(
                            LinearizableReads.answer(i, f)))));
                }
                if (LeadershipCheck.QUERY.equals(json.path(MeshQueueProbe.QUERY).asText(null))) {
                    DivisionInfo i = info();
                    return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(MeshJson.bytes(
                            LeadershipCheck.answer(i == null ? -1 : i.getCurrentTerm())))));
                }
                if (json.has(LeaderAsks.SERVICE)) {
                    return leaderAsks.forwarded(json); // an extension's ask of the leader
                }
                if (MeshSettingsCheck.QUERY.equals(json.path(MeshQueueProbe.QUERY).asText(null))) {
                    return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(MeshJson.bytes(
                            // a follower's settings check, or mesh status, which reads the queue depth from it too
                            MeshQueueProbe.withDepth(settingsCheck.answer(), intents.depth())))));
                }
                if (MeshStart.QUERY.equals(json.path(MeshQueueProbe.QUERY).asText(null))) {
                    return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(MeshJson.bytes(
                            // a node with empty storage asks (MeshStart); "none" only once this one holds its log
                            MeshStart.answer(cursor.appliedIndex(), holdsItsLog())))));
                }
                if (json.has(MeshQueueProbe.QUERY)) {
                    return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(MeshJson.bytes(
                            MeshQueueProbe.answer(json, intents.depth())))));
                }
                origin = json.path("origin").asText();
                mutation = mutations.read(json.get("mutation"));
            } catch (IllegalArgumentException e) {
                LOG.log(System.Logger.Level.WARNING, "refusing a forwarded mutation: "
                        + LogRedactor.scrub(e.getMessage()));
                return CompletableFuture.completedFuture(encode(new Outcome.Refused(Outcome.Reason.INTERNAL_FAULT,
                        "The leader could not read the forwarded request; nothing was applied.")));
            }
            String intent = json.path("intent").asText(null);
            if (intent == null) {
                return decide(mutation, origin); // a node without intent ids
            }
            CompletableFuture<Message> answer;
            synchronized (forwardsInFlight) {
                CompletableFuture<Message> first = forwardsInFlight.get(intent);
                if (first != null) {
                    return first; // the same write again (its channel was reset): one decision answers both
                }
                answer = new CompletableFuture<>();
                forwardsInFlight.put(intent, answer);
            }
            // the origin's hand-over base and hold travel with it: the decision records the hold
            IntentTags.Tag tag = tags.tag(mutation, new IntentTags.Tag(intent, json.path("replay").asBoolean(false),
                    false, json.path("base").asLong(-1), origin, json.path("hold").asLong(-1)));
            decide(mutation, origin).whenComplete((message, fault) -> {
                tags.untag(mutation, tag);
                synchronized (forwardsInFlight) {
                    forwardsInFlight.remove(intent);
                }
                answer.complete(fault == null ? message : encode(decisionFault(fault)));
            });
            return answer;
        }

        /**
         * Submits a forwarded mutation to this node's actor and encodes its outcome. Never fails:
         * Ratis answers a failed query future by erroring the follower's whole gRPC stream, which
         * fails every other forward in flight on it; a fault is answered as a refusal instead.
         */
        private CompletableFuture<Message> decide(Mutation mutation, String origin) {
            forwardedOrigins.put(mutation, origin);
            CompletableFuture<Outcome> decided;
            try {
                decided = actor.submit(mutation);
            } catch (RuntimeException e) {
                decided = CompletableFuture.failedFuture(e);
            }
            return decided.thenApplyAsync(outcome -> {
                forwardedOrigins.remove(mutation);
                if (outcome == MeshSite.NOT_DECIDING) {
                    return Message.valueOf(ByteString.copyFrom(MeshJson.bytes(
                            MeshJson.MAPPER.createObjectNode().put("outcome", Forwarder.NOT_DECIDING))));
                }
                return encode(outcome);
            }, scheduler).handle((message, fault) -> {
                if (fault == null) {
                    return message;
                }
                forwardedOrigins.remove(mutation);
                return encode(decisionFault(fault));
            });
        }

        /**
         * The answer to a forwarded mutation whose decision failed here (the actor refused it, the
         * scheduler that encodes answers is closing, the outcome could not be encoded): the actor's
         * own refusal, anything else commit_unknown (the decision may have committed). Logged and counted.
         */
        private Outcome.Refused decisionFault(Throwable fault) {
            Throwable cause = fault instanceof java.util.concurrent.CompletionException && fault.getCause() != null
                    ? fault.getCause() : fault;
            Outcome.Refused answer = cause instanceof ActorRefusedException refused ? refused.refusal()
                    : FORWARD_DECISION_FAILED;
            forwardDecisionFaults.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "mesh node " + nodeId + ": deciding a forwarded mutation failed ("
                    + LogRedactor.scrub(cause) + "); answered " + answer.reason() + ", counted in"
                    + " synapse_mesh_forward_decision_faults_total");
            return answer;
        }

        private Message encode(Outcome outcome) {
            return Message.valueOf(ByteString.copyFrom(MeshJson.bytes(outcomes.write(outcome))));
        }
    }

    /** Stops Raft first (no more records), then lets the actor finish and closes the local journal. */
    @Override
    public void close() throws IOException, JournalException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Thread left = leaving.getAndSet(new Thread(() -> { })); // no leaving from now on: close does it
            server.close(); // idempotent: a leave that is closing it too is waited for below
            if (left != null) {
                left.join(10_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            client.close();
            askClient.close();
            settingsClient.close();
            readsClient.close();
            scheduler.shutdownNow();
            actor.close();
        }
    }
}
