package dev.synapsehub.mesh;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.relay.RelayLog;

import java.io.IOException;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A mesh node serving agents: the {@link MeshNode} and, once it has caught up with the cluster,
 * the unchanged WebSocket hub over the node's actor. Agents may connect to any node; the whole
 * mesh shows them one hub id.
 */
public final class MeshHub implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(MeshHub.class.getName());

    private final MeshNode node;
    private final HubServer server;
    private final int port;

    private MeshHub(MeshNode node, HubServer server, int port) {
        this.node = node;
        this.server = server;
        this.port = port;
    }

    /**
     * Starts the node, waits up to {@code catchUpMillis} for it to apply what the cluster
     * committed, then serves {@code hub} (whose hub id must be the mesh's).
     *
     * @param local the node's journal copy (closed with the node)
     */
    public static MeshHub start(MeshConfig mesh, HubConfig hub, Journal local, CoordinationState state, Clock clock,
                                ActorSettings settings, long catchUpMillis)
            throws IOException, JournalException, InterruptedException {
        return start(mesh, hub, local, state, clock, settings, catchUpMillis, MeshCompaction.DEFAULTS);
    }

    /** As {@link #start(MeshConfig, HubConfig, Journal, CoordinationState, Clock, ActorSettings, long)}, compacting as {@code compaction} says. */
    public static MeshHub start(MeshConfig mesh, HubConfig hub, Journal local, CoordinationState state, Clock clock,
                                ActorSettings settings, long catchUpMillis, MeshCompaction compaction)
            throws IOException, JournalException, InterruptedException {
        return start(mesh, hub, local, state, clock, settings, catchUpMillis, compaction, null);
    }

    /**
     * As {@link #start(MeshConfig, HubConfig, Journal, CoordinationState, Clock, ActorSettings, long,
     * MeshCompaction)}, mirroring every frame this node fans out to its own sockets (its own
     * agents' requests and the decisions replicated to it) into {@code relayLog}
     * ({@code --relay-log}, contract A5.2; null: none). The hub closes it.
     */
    public static MeshHub start(MeshConfig mesh, HubConfig hub, Journal local, CoordinationState state, Clock clock,
                                ActorSettings settings, long catchUpMillis, MeshCompaction compaction,
                                RelayLog relayLog) throws IOException, JournalException, InterruptedException {
        return start(mesh, hub, local, state, clock, settings, catchUpMillis, compaction, relayLog, List.of());
    }

    /**
     * As {@link #start(MeshConfig, HubConfig, Journal, CoordinationState, Clock, ActorSettings, long,
     * MeshCompaction, RelayLog)}, with {@code gates} before the mesh's own extension on this node's
     * edge (e.g. the federation frame gate): they see each frame from this node's sockets, with
     * the socket's client certificate, before it is replicated.
     */
    public static MeshHub start(MeshConfig mesh, HubConfig hub, Journal local, CoordinationState state, Clock clock,
                                ActorSettings settings, long catchUpMillis, MeshCompaction compaction,
                                RelayLog relayLog, List<dev.synapsehub.net.extension.HubExtension> gates)
            throws IOException, JournalException, InterruptedException {
        return start(mesh, hub, local, state, clock, settings, catchUpMillis, compaction, relayLog, gates,
                MeshGovernanceSettings.NONE);
    }

    /**
     * As {@link #start(MeshConfig, HubConfig, Journal, CoordinationState, Clock, ActorSettings, long,
     * MeshCompaction, RelayLog, List)}, with this node's {@code governance} settings, compared with
     * the leader's while it runs (docs/mesh.md, "Nodes agree on their governance settings").
     */
    public static MeshHub start(MeshConfig mesh, HubConfig hub, Journal local, CoordinationState state, Clock clock,
                                ActorSettings settings, long catchUpMillis, MeshCompaction compaction,
                                RelayLog relayLog, List<dev.synapsehub.net.extension.HubExtension> gates,
                                MeshGovernanceSettings governance)
            throws IOException, JournalException, InterruptedException {
        return start(mesh, hub, local, state, clock, settings, catchUpMillis, compaction, relayLog, gates, governance,
                () -> false);
    }

    /**
     * As {@link #start(MeshConfig, HubConfig, Journal, CoordinationState, Clock, ActorSettings, long,
     * MeshCompaction, RelayLog, List, MeshGovernanceSettings)}, but when {@code stopRequested} holds
     * (or the thread is interrupted) while a node with empty storage asks its peers ({@link MeshStart}),
     * during the waits for the cluster or before the bind (a SIGTERM came during a long start), the
     * node binds no server: it closes what it opened (the node, its journal copy, the relay log)
     * and throws {@link StoppedBeforeServing}.
     */
    public static MeshHub start(MeshConfig mesh, HubConfig hub, Journal local, CoordinationState state, Clock clock,
                                ActorSettings settings, long catchUpMillis, MeshCompaction compaction,
                                RelayLog relayLog, List<dev.synapsehub.net.extension.HubExtension> gates,
                                MeshGovernanceSettings governance, BooleanSupplier stopRequested)
            throws IOException, JournalException, InterruptedException {
        List<dev.synapsehub.net.extension.HubExtension> extensions = new java.util.ArrayList<>(gates);
        WireEdge edge = new WireEdge();
        MeshNode node;
        try {
            node = new MeshNode(mesh, hub.hubId(), local, state, clock, settings, edge, compaction, stopRequested);
        } catch (IOException | RuntimeException e) {
            // refused (MeshRejoinRefused) or stopped while it asked its peers (MeshStart) before it opened anything
            // of its own: close what it was given, as below; a stop is heard as one, not as a refusal
            RuntimeException stopped = e instanceof java.io.InterruptedIOException
                    ? new StoppedBeforeServing(mesh.nodeId()) : null;
            try {
                if (relayLog != null) {
                    relayLog.close();
                }
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            } finally {
                try {
                    local.close();
                } catch (JournalException | RuntimeException closing) {
                    e.addSuppressed(closing);
                }
            }
            if (stopped != null) {
                stopped.initCause(e);
                throw stopped;
            }
            throw e;
        }
        node.governance(governance);
        // after the given gates (a sender the frame gate refuses gets that refusal) and before any frame is
        // answered: every admits() runs before a verb, so a refused frame is neither decided nor forwarded
        extensions.add(new MeshSettingsGate(node.settingsCheck()));
        for (dev.synapsehub.net.extension.HubExtension e : gates) {
            e.joinCluster(node.leader()); // before bind: what the cluster does from one place goes to its leader
        }
        HubServer server = null;
        try {
            node.start();
            boolean caughtUp = node.awaitCaughtUp(catchUpMillis, stopRequested);
            stopIfRequested(mesh, stopRequested);
            if (!caughtUp) {
                LOG.log(System.Logger.Level.WARNING, "mesh node " + mesh.nodeId() + " has not caught up with a"
                        + " leader within " + catchUpMillis + " ms; serving anyway (writes wait for a quorum)");
            }
            // a node with an ownership map refuses claims until it has compared its settings: compare before serving
            long compareMillis = Math.min(catchUpMillis, SETTINGS_WAIT_MILLIS);
            boolean compared = node.settingsCheck().awaitCompared(compareMillis, stopRequested);
            stopIfRequested(mesh, stopRequested);
            if (!compared) {
                LOG.log(System.Logger.Level.WARNING, "mesh node " + mesh.nodeId() + " has not compared its governance"
                        + " settings with a leader within " + compareMillis + " ms; serving anyway, refusing claims"
                        + " under its ownership map until it has");
            }
            extensions.add(new MeshFace(node)); // mesh figures on /metrics; §12 read labels
            server = new HubServer(hub, node.actor(), clock, node.journal(), new HubExtensions(extensions));
            if (relayLog != null) {
                server.relayLog(relayLog);
            }
            stopIfRequested(mesh, stopRequested);
            int port = server.start();
            edge.bind(server);
            return new MeshHub(node, server, port);
        } catch (IOException | InterruptedException | RuntimeException e) {
            // what failed (or the stop) is what the caller hears; a failure to close rides along with it
            try {
                if (server != null) {
                    server.close();
                } else if (relayLog != null) {
                    relayLog.close();
                }
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            } finally {
                try {
                    node.close();
                } catch (IOException | JournalException | RuntimeException closing) {
                    e.addSuppressed(closing);
                }
            }
            throw e;
        }
    }

    /** The start was stopped by a signal before the server was bound; the node and its journal copy are closed. */
    public static final class StoppedBeforeServing extends RuntimeException {
        StoppedBeforeServing(String nodeId) {
            super("mesh node " + nodeId + " stopped during the start, before serving");
        }
    }

    /** Throws (the start's catch closes what it opened) when a stop has been requested. */
    private static void stopIfRequested(MeshConfig mesh, BooleanSupplier stopRequested) {
        if (stopRequested.getAsBoolean()) {
            throw new StoppedBeforeServing(mesh.nodeId());
        }
    }

    /** How long a start waits for the first settings comparison, at most (a leader that cannot answer must not hold it). */
    static final long SETTINGS_WAIT_MILLIS = 5_000;

    /** The node. */
    public MeshNode node() {
        return node;
    }

    /** The WebSocket server. */
    public HubServer server() {
        return server;
    }

    /** The bound WebSocket port. */
    public int port() {
        return port;
    }

    /** Closes the agents' connections, then the node. */
    @Override
    public void close() throws IOException, JournalException {
        server.close();
        node.close();
    }
}
