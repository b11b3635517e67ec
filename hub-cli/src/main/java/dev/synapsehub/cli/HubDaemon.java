package dev.synapsehub.cli;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.journal.ReplayStats;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.mesh.MeshConfig;
import dev.synapsehub.mesh.MeshHub;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.util.Map;

/**
 * The composition root of a running hub: journal (SQLite or in memory), state rebuilt by
 * replay, the mutation actor, and the Netty server. Closing it stops the server first, then
 * lets the actor finish what it accepted and closes the journal (nothing acknowledged is lost).
 */
final class HubDaemon implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HubDaemon.class);
    /** How long a mesh node waits to catch up with the cluster before serving agents anyway. */
    private static final long CATCH_UP_MILLIS = 30_000;

    private final HubServer server;
    private final CoordinationActor actor;
    private final MeshHub mesh;
    private final HubConfig config;
    private final int port;

    private HubDaemon(HubServer server, CoordinationActor actor, MeshHub mesh, HubConfig config, int port) {
        this.server = server;
        this.actor = actor;
        this.mesh = mesh;
        this.config = config;
        this.port = port;
    }

    /** Validates the options, logs the effective configuration once, and starts serving. */
    static HubDaemon start(ServeOptions options) throws JournalException, InterruptedException {
        HubConfig config = options.hubConfig();
        RegistryLimits limits = options.registryLimits();
        ActorSettings actorSettings = options.actorSettings();
        Map<String, Object> effective = options.effectiveSummary(config, limits, actorSettings);
        StringBuilder line = new StringBuilder("synapse-hub ").append(VersionProvider.version()).append(" starting:");
        effective.forEach((k, v) -> line.append(' ').append(k).append('=').append(v).append(';'));
        LOG.info(line.toString());

        Clock clock = Clock.system();
        MeshConfig meshConfig = options.meshConfig();
        if (meshConfig != null) {
            return startMesh(options, config, meshConfig, actorSettings, clock);
        }
        Journal journal = options.db() == null ? new InMemoryJournal() : SqliteJournal.open(options.db());
        CoordinationActor actor;
        try {
            CoordinationState state = options.newState();
            long replayed = state.replay(journal, clock.nowSeconds(), n -> { });
            if (journal instanceof SqliteJournal sqlite) {
                ReplayStats stats = sqlite.lastReplay();
                LOG.info("journal {}: replayed {} events in {} s; {} live claims, epoch counter {}",
                        sqlite.path(), replayed, String.format("%.3f", stats.seconds()), state.claims().liveCount(),
                        state.claims().epochCounter());
                if (!stats.clean()) {
                    LOG.warn("journal {}: {} corrupt row(s), first at seq {}; they were skipped. "
                            + "Run `synapse-hub journal verify --db {}` with the hub stopped.",
                            sqlite.path(), stats.corrupt(), stats.firstCorruptSeq(), sqlite.path());
                }
            }
            actor = new CoordinationActor(state, journal, clock, actorSettings);
            actor.start();
        } catch (JournalException | RuntimeException e) {
            journal.close();
            throw e;
        }
        HubServer server = new HubServer(config, actor, clock, options.db() == null ? null : journal);
        int port;
        try {
            port = server.start();
        } catch (InterruptedException | RuntimeException e) {
            server.close();
            actor.close();
            throw e;
        }
        LOG.info("listening on ws://{}:{}/ (hub_id {}){}", config.host(), port, config.hubId(),
                config.metricsEnabled() ? "; /health and /metrics served" : "");
        return new HubDaemon(server, actor, null, config, port);
    }

    /**
     * A mesh node: its journal is a copy of the replicated log, so it must start empty (or be
     * this node's own copy, with the Raft log beside it); a single hub's journal is refused.
     */
    private static HubDaemon startMesh(ServeOptions options, HubConfig config, MeshConfig meshConfig,
                                       ActorSettings actorSettings, Clock clock)
            throws JournalException, InterruptedException {
        SqliteJournal local = SqliteJournal.open(options.db());
        if (local.lastSeq() > 0 && !Files.isDirectory(meshConfig.storageDir())) {
            local.close();
            throw new IllegalArgumentException(options.db() + " holds " + local.lastSeq() + " events of a single hub "
                    + "and there is no Raft log at " + meshConfig.storageDir() + "; a mesh node starts from an empty "
                    + "journal (turning a single hub into a mesh is not supported yet)");
        }
        MeshHub mesh;
        try {
            mesh = MeshHub.start(meshConfig, config, local, options.newState(), clock, actorSettings, CATCH_UP_MILLIS);
        } catch (IOException e) {
            throw new JournalException("mesh node " + meshConfig.nodeId() + " could not start: " + e.getMessage(), e);
        }
        LOG.info("mesh node {} listening on ws://{}:{}/ (hub_id {}), raft {}, {} voters, quorum {}",
                meshConfig.nodeId(), config.host(), mesh.port(), config.hubId(), meshConfig.self().address(),
                meshConfig.peers().size(), meshConfig.quorum());
        return new HubDaemon(mesh.server(), mesh.node().actor(), mesh, config, mesh.port());
    }

    /** The bound port. */
    int port() {
        return port;
    }

    /** The effective hub configuration. */
    HubConfig config() {
        return config;
    }

    @Override
    public void close() throws JournalException {
        LOG.info("shutting down: closing connections, then committing what was accepted");
        if (mesh != null) {
            try {
                mesh.close();
            } catch (IOException e) {
                LOG.warn("mesh node did not stop cleanly: {}", e.getMessage());
            }
        } else {
            server.close();
            actor.close();
        }
        LOG.info("stopped; the journal is closed");
    }
}
