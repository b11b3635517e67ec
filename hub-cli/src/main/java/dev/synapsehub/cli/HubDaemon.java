package dev.synapsehub.cli;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.journal.JournalControl;
import dev.synapsehub.journal.ReplayStats;
import dev.synapsehub.journal.Retention;
import dev.synapsehub.journal.SnapshotPolicy;
import dev.synapsehub.journal.Snapshotter;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.journal.StartupPhases;
import dev.synapsehub.journal.StateRecovery;
import dev.synapsehub.mesh.MeshConfig;
import dev.synapsehub.mesh.MeshHub;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.federation.FederationExtension;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.Mirror;
import dev.synapsehub.federation.follow.SqliteMirror;
import dev.synapsehub.federation.trust.ServingTrust;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The composition root of a running hub: journal (SQLite or in memory), state rebuilt from the
 * newest snapshot plus the journal tail (or by replay), the mutation actor, the snapshotter and
 * the Netty server. Closing it stops the server first, takes the shutdown snapshot, then lets
 * the actor finish what it accepted and closes the journal (nothing acknowledged is lost).
 *
 * <p>It supervises the actor: when the writer thread fails for good, {@link #writerFailure()}
 * completes, and the command shuts the hub down and exits non-zero so that a service manager
 * restarts it from the journal (docs/operations.md, "When the writer fails").
 */
final class HubDaemon implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HubDaemon.class);
    /** How long a mesh node waits to catch up with the cluster before serving agents anyway. */
    private static final long CATCH_UP_MILLIS = 30_000;
    /** The retention hold of the rows federation peers have yet to pull (docs/operations.md, retention). */
    private static final String PEER_CURSORS = "federation peers' log cursors";

    private final HubServer server;
    private final CoordinationActor actor;
    private final Snapshotter snapshotter;
    private final JournalControl control;
    private final MeshHub mesh;
    private final HubConfig config;
    private final int port;
    private final CompletableFuture<Throwable> writerFailure = new CompletableFuture<>();
    private boolean closed;

    private HubDaemon(HubServer server, CoordinationActor actor, Snapshotter snapshotter, JournalControl control,
                      MeshHub mesh, HubConfig config, int port) {
        this.server = server;
        this.actor = actor;
        this.snapshotter = snapshotter;
        this.control = control;
        this.mesh = mesh;
        this.config = config;
        this.port = port;
        // the actor has logged the cause with its stack trace; this line says what happens next
        actor.onFailure(cause -> {
            LOG.error("the writer thread failed ({}); /health answers 503 and the hub shuts down to be restarted",
                    cause.toString());
            writerFailure.complete(cause);
        });
    }

    /** Validates the options, logs the effective configuration once, and starts serving. */
    static HubDaemon start(ServeOptions options, FederationOptions federationOptions)
            throws JournalException, InterruptedException {
        return start(options, federationOptions, () -> false);
    }

    /**
     * Whether this hub may build a TLS context: its port ({@code --tls-certfile}), a link to a
     * peer hub (watched, forwarded to, relayed to, or listed in a peers file, any of which may be
     * {@code wss://}), or a mesh node (its transport may run TLS).
     */
    static boolean usesTls(HubConfig config, boolean meshNode, FederationSettings federation) {
        return config.tls() != null || meshNode || federation.linksPeers();
    }

    /** The start was stopped by a signal before the server was bound; everything it opened is closed. */
    static final class StoppedBeforeServing extends RuntimeException {
        StoppedBeforeServing() {
            super("stopped during the start, before serving");
        }
    }

    /**
     * As {@link #start(ServeOptions, FederationOptions)}, but when {@code stopRequested} holds
     * once the state is restored (a SIGTERM came during the start) a single hub binds no server:
     * it closes what it opened (the journal cleanly) and throws {@link StoppedBeforeServing}. A
     * mesh node looks at it while it waits for its cluster and before it binds, and stops the same way.
     */
    static HubDaemon start(ServeOptions options, FederationOptions federationOptions,
                           java.util.function.BooleanSupplier stopRequested)
            throws JournalException, InterruptedException {
        return start(options, federationOptions, stopRequested, dev.synapsehub.journal.SnapshotReadAhead.none());
    }

    /**
     * As {@link #start(ServeOptions, FederationOptions, java.util.function.BooleanSupplier)},
     * loading the snapshot {@code readAhead} read if it is the one chosen.
     */
    static HubDaemon start(ServeOptions options, FederationOptions federationOptions,
                           java.util.function.BooleanSupplier stopRequested,
                           dev.synapsehub.journal.SnapshotReadAhead readAhead)
            throws JournalException, InterruptedException {
        // JVM start, class loading, logging and option parsing, up to here
        StartupPhases phases = StartupPhases.sinceJvmStart("jvm and options");
        // an unknown -Dsynapsehub.tls refuses the start here, before anything listens, rather than at
        // the first TLS context (which for a hub without --tls-certfile may be a peer link much later)
        dev.synapsehub.client.tls.TlsEngine.parse(System.getProperty(dev.synapsehub.client.tls.TlsEngine.PROPERTY));
        HubConfig config = options.hubConfig();
        java.nio.file.Path relayLogFile = options.relayLog(); // checks --relay-max-lines before anything starts
        ServingTrust trust = federationOptions.servingTrust(config.tls() != null, LOG::warn);
        FederationSettings federationSettings = federationOptions.settings(trust, options.hubId, config.hubId());
        dev.synapsehub.federation.gate.FrameGate frameGate = federationOptions.frameGate(options.requireMessageAuth, LOG::warn);
        if (trust.startupPolicy() != null) {
            config = config.toBuilder().tls(config.tls().withClientCa(trust.startupPolicy().clientCaFile())).build();
        }
        // BoringSSL's library (for the TLS engine's line) and the server's classes load beside the summary and restore
        StartupWarmup warmup = StartupWarmup.begin(config,
                usesTls(config, options.meshRequested(), federationSettings), LOG);
        RegistryLimits limits;
        ActorSettings actorSettings;
        CompactHint compactHint;
        SnapshotPolicy snapshotPolicy;
        Retention retention;
        try {
            compactHint = options.compactHint();
            options.logFormat(); // logging already runs in it; an unknown value still stops the start
            limits = options.registryLimits();
            actorSettings = options.actorSettings();
            // every setting is refused here, before a journal is created, opened or restored
            options.newState();
            snapshotPolicy = options.snapshotPolicy();
            retention = options.retention();
            List<String> inert = options.inertOptionWarnings();
            if (config.tls() != null) {
                dev.synapsehub.net.tls.ServerTls.checkFiles(config.tls());
            }
            Map<String, Object> effective = options.effectiveSummary(config, limits, actorSettings);
            effective.putAll(federationOptions.effectiveSummary(federationSettings, frameGate != null));
            StringBuilder line = new StringBuilder("synapse-hub ").append(VersionProvider.version()).append(" starting:");
            effective.forEach((k, v) -> line.append(' ').append(k).append('=').append(v).append(';'));
            LOG.info(line.toString());
            inert.forEach(LOG::warn);
            if (!options.logFormat().equals(LogSetup.activeFormat())) {
                LOG.warn("log-format {} is not used: logging started as {} before the --config file was read; give "
                        + "--log-format on the command line or set SYNAPSE_LOG_FORMAT", options.logFormat(),
                        LogSetup.activeFormat());
            }
            String emptyToken = options.emptyTokenWarning(config);
            if (emptyToken != null) {
                LOG.warn(emptyToken);
            }
            String volatilePins = options.volatilePinsWarning(config);
            if (volatilePins != null) {
                LOG.warn(volatilePins);
            }
            List<String> waived = options.waivedOffLoopback(config);
            if (!waived.isEmpty()) {
                LOG.warn("listening on {} without {}: --insecure-off-loopback accepts the risk", config.host(),
                        String.join(", ", waived));
            }
        } finally {
            warmup.startLineLogged(); // also when an option is refused: the thread does not wait forever
        }

        Clock clock = Clock.system();
        MeshConfig meshConfig = options.meshConfig();
        if (meshConfig != null) {
            return startMesh(options, config, meshConfig, actorSettings, clock, frameGate, trust, federationSettings,
                    stopRequested);
        }
        phases.mark("configuration");
        Journal journal = options.db() == null ? new InMemoryJournal() : SqliteJournal.open(options.db());
        phases.mark("journal open");
        CoordinationActor actor = null;
        Snapshotter snapshotter = null;
        JournalControl control = null;
        try {
            CoordinationState state;
            StateRecovery.Recovery recovery = null;
            if (journal instanceof SqliteJournal sqlite) {
                recovery = StateRecovery.recover(sqlite, options::newState, clock.nowSeconds(),
                        phases, readAhead);
                state = recovery.state();
                logRecovery(sqlite, recovery, state, readAhead.used());
                // seqs are never reused and retention deletes a prefix: the rows held, without a COUNT(*) scan
                compactHint.message(sqlite.path(), sqlite.lastSeq() - sqlite.compactedThrough(), options.journalKeepRows)
                        .ifPresent(LOG::info);
            } else {
                state = options.newState();
                state.replay(journal, clock.nowSeconds(), n -> { });
            }
            actor = new CoordinationActor(state, journal, clock, actorSettings);
            actor.start();
            if (journal instanceof SqliteJournal sqlite) {
                // held before anything compacts: the federation that knows the peers' cursors is made below
                retention.hold(PEER_CURSORS, () -> FederationExtension.peerCursorFloorBeforeStart(federationSettings));
                snapshotter = Snapshotter.start(sqlite, actor, clock, snapshotPolicy, retention, recovery);
                control = JournalControl.start(sqlite, actor, retention).orElse(null);
            }
            phases.mark("writer start");
        } catch (JournalException | RuntimeException e) {
            if (actor != null) {
                actor.close();
            } else {
                journal.close();
            }
            throw e;
        }
        FederationExtension federation;
        try {
            federation = new FederationExtension(federationSettings,
                    journal instanceof SqliteJournal sqlite ? sqlite : null,
                    // the mirror keeps only watched peers' views: a hub that follows none makes no file for it
                    options.db() == null || federationSettings.watch().peers().isEmpty() ? Mirror.memory()
                            : SqliteMirror.open(options.db()));
        } catch (Mirror.MirrorException e) {
            closeUnserved(null, control, snapshotter, actor); // no control socket or snapshot timer outlives the start
            throw new JournalException(e.getMessage(), e);
        }
        phases.mark("federation");
        // rows a federation peer has yet to pull are kept (docs/operations.md, retention)
        retention.hold(PEER_CURSORS, federation::peerCursorFloor);
        List<dev.synapsehub.net.extension.HubExtension> extensions = new java.util.ArrayList<>();
        if (frameGate != null) {
            extensions.add(frameGate);
        }
        extensions.add(federation);
        if (snapshotter != null) {
            extensions.add(new SnapshotMetrics(snapshotter));
        }
        HubServer server = new HubServer(config, actor, clock, options.db() == null ? null : journal,
                new HubExtensions(extensions));
        if (relayLogFile != null) {
            try {
                server.relayLog(dev.synapsehub.net.relay.RelayLog.open(relayLogFile, options.relayMaxLines()));
            } catch (java.io.IOException e) {
                closeUnserved(server, control, snapshotter, actor); // the server closes its extensions (federation)
                throw new IllegalArgumentException("--relay-log: cannot open " + relayLogFile + ": " + e.getMessage(), e);
            }
        }
        int port;
        if (stopRequested.getAsBoolean()) {
            LOG.info("stopping before serving: a signal came during the start");
            closeUnserved(server, control, snapshotter, actor);
            throw new StoppedBeforeServing();
        }
        try {
            port = server.start();
        } catch (Exception e) { // Netty throws a BindException it does not declare: close everything for it too
            closeUnserved(server, control, snapshotter, actor); // the journal too: nothing is left locked
            IllegalArgumentException setting = ListenFailure.explain(e, config.host(), config.port());
            if (setting != null) {
                throw setting; // a port in use is the configuration's problem: exit 2, not 70
            }
            throw e;
        }
        phases.mark("server bind");
        LOG.info(phases.summary());
        LOG.info("listening on {}://{}:{}/ (hub_id {}){}", config.scheme(), config.host(), port, config.hubId(),
                config.metricsEnabled() ? "; /health and /metrics served" : "");
        if (config.ui()) {
            LOG.info("operator cockpit at {}://{}:{}/ui{}", config.tls() == null ? "http" : "https", config.host(), port,
                    config.secured() ? " (asks for the connect token)" : "");
        }
        if (trust.startupPolicy() != null) {
            LOG.info("serving the log to {} peer hub(s) under {}", trust.startupPolicy().grants().size(),
                    trust.startupPolicy().file());
        }
        return new HubDaemon(server, actor, snapshotter, control, null, config, port);
    }

    /** Closes a hub that serves nothing (yet): server and extensions, journal control, snapshotter, actor and journal. */
    private static void closeUnserved(HubServer server, JournalControl control, Snapshotter snapshotter,
                                      CoordinationActor actor) throws JournalException {
        if (server != null) { // null: the start failed before the server was made
            server.close();
        }
        if (control != null) {
            control.close();
        }
        if (snapshotter != null) {
            snapshotter.close();
        }
        actor.close();
    }

    private static void logRecovery(SqliteJournal sqlite, StateRecovery.Recovery recovery, CoordinationState state,
                                    boolean readAhead) {
        ReplayStats stats = recovery.tail();
        String from = recovery.snapshot() == null ? "a full replay" : "snapshot #" + recovery.snapshot().id()
                + " at seq " + recovery.snapshot().seq() + String.format(" (loaded in %.3f s%s)", recovery.loadSeconds(),
                readAhead ? ", read ahead" : "");
        LOG.info("journal {}: state from {} plus {} events replayed in {} s; {} live claims, epoch counter {}",
                sqlite.path(), from, stats.replayed(), String.format("%.3f", stats.seconds()),
                state.claims().liveCount(), state.claims().epochCounter());
        if (sqlite.corruptRows() > 0) {
            LOG.warn("journal {}: {} corrupt row(s), first at seq {}; they were skipped. "
                    + "Run `synapse-hub journal verify --db {}` with the hub stopped.",
                    sqlite.path(), sqlite.corruptRows(), sqlite.firstCorruptSeq(), sqlite.path());
        }
    }

    /**
     * A mesh node: its journal is a copy of the replicated log, so it must start empty (or be
     * this node's own copy, with the Raft log beside it); a single hub's journal is refused.
     */
    private static HubDaemon startMesh(ServeOptions options, HubConfig config, MeshConfig meshConfig,
                                       ActorSettings actorSettings, Clock clock,
                                       dev.synapsehub.federation.gate.FrameGate frameGate, ServingTrust trust,
                                       FederationSettings federation,
                                       java.util.function.BooleanSupplier stopRequested)
            throws JournalException, InterruptedException {
        dev.synapsehub.federation.route.NamespaceOwners owners = federation.owners();
        dev.synapsehub.federation.follow.WatchSettings watch = federation.watch();
        SqliteJournal local = SqliteJournal.open(options.db());
        if (local.lastSeq() > 0 && !Files.isDirectory(meshConfig.storageDir())) {
            local.close();
            throw new IllegalArgumentException(options.db() + " holds " + local.lastSeq() + " events of a single hub "
                    + "and there is no Raft log at " + meshConfig.storageDir() + "; a mesh node starts from an empty "
                    + "journal (turning a single hub into a mesh is not supported yet). If this is a mesh node's "
                    + "journal whose Raft directory was moved aside to restore the node from its peers, move the "
                    + "journal (with its -wal and -shm files) aside too (docs/mesh.md, \"Snapshots and log compaction\")");
        }
        // each node mirrors what it fans out to its own sockets (docs/mesh.md, "The relay log on a mesh")
        dev.synapsehub.net.relay.RelayLog relayLog = null;
        if (options.relayLog() != null) {
            try {
                relayLog = dev.synapsehub.net.relay.RelayLog.open(options.relayLog(), options.relayMaxLines());
            } catch (IOException e) {
                local.close();
                throw new IllegalArgumentException("--relay-log: cannot open " + options.relayLog() + ": "
                        + e.getMessage(), e);
            }
        }
        List<dev.synapsehub.net.extension.HubExtension> extensions = new java.util.ArrayList<>();
        if (frameGate != null) {
            extensions.add(frameGate);
        }
        // every node serves peer log pulls from its journal copy under the cluster's hub id, decides the
        // claims in the namespaces the cluster owns, and answers peers without a serving policy as a single
        // hub does, refusing them; each serves the offer bundle from its own file, and forwards its own agents'
        // claims in other hubs' namespaces along the --claim-peer routes (docs/mesh.md, "Federation on a mesh node")
        // operator relays are decided by the leader under the relay policy, the approvals replicated (docs/mesh.md);
        // with --multihub-watch the node that decides polls for the cluster; the partitions and quarantines are
        // replicated state, and a governed claim is refused where the leader's actor decides it (docs/mesh.md,
        // "Watching other hubs on a mesh")
        java.util.concurrent.atomic.AtomicReference<MeshHub> started = new java.util.concurrent.atomic.AtomicReference<>();
        java.nio.file.Path db = options.db();
        // --relay-peer and the peers file: each node reads its own; the leader sends relays and dead-letter reports
        // over its links (docs/mesh.md, "Federation on a mesh node")
        extensions.add(new dev.synapsehub.federation.MeshFederationExtension(trust, local, owners,
                federation.offerFile(), federation.forward(), federation.relay())
                .relaying(federation.relayRoutes(), federation.peersFile())
                .watching(new dev.synapsehub.federation.MeshFederationExtension.Watching(watch,
                        () -> SqliteMirror.open(db), () -> {
                            MeshHub m = started.get();
                            return m != null && m.node().decides();
                        })));
        dev.synapsehub.core.state.CoordinationState state = options.newState();
        if (!watch.peers().isEmpty()) {
            state.governClaims(owners.owners());
        }
        MeshHub mesh;
        try {
            // the flags every node must share, compared with the leader's while the node runs (docs/mesh.md)
            mesh = MeshHub.start(meshConfig, config, local, state, clock, actorSettings, CATCH_UP_MILLIS,
                    options.meshCompaction(), relayLog, extensions, MeshGovernanceFlags.of(config.hubId(),
                            federation, config.defaultDelivery().mode().wire(), trust.startupPolicy() != null,
                            MeshGovernanceFlags.Liveness.of(config)),
                    stopRequested);
        } catch (MeshHub.StoppedBeforeServing e) {
            // the node, its journal copy and the relay log are closed; nothing was bound
            LOG.info("stopping before serving: a signal came during the mesh node's start");
            throw new StoppedBeforeServing();
        } catch (dev.synapsehub.mesh.MeshRejoinRefused | dev.synapsehub.mesh.MeshFoundingUnconfirmed e) {
            // a voter whose storage is gone, or a founder nobody could vouch for: the operator must act (exit 2);
            // MeshHub.start closed the journal copy and the relay log
            throw new IllegalArgumentException(e.getMessage(), e);
        } catch (IOException e) { // Netty's undeclared BindException too; MeshHub.start closed what it opened
            IllegalArgumentException setting = e instanceof dev.synapsehub.mesh.RaftAddressUnavailable raft
                    ? ListenFailure.explainRaft(raft) : ListenFailure.explain(e, config.host(), config.port());
            if (setting != null) {
                throw setting; // a port in use is the configuration's problem: exit 2, as on a single hub
            }
            throw new JournalException("mesh node " + meshConfig.nodeId() + " could not start: " + e.getMessage(), e);
        }
        started.set(mesh);
        LOG.info("mesh node {} listening on {}://{}:{}/ (hub_id {}), raft {}, {} voters, quorum {}",
                meshConfig.nodeId(), config.scheme(), config.host(), mesh.port(), config.hubId(), meshConfig.self().address(),
                mesh.node().voters().count(), mesh.node().voters().quorum());
        if (config.ui()) {
            LOG.info("operator cockpit at {}://{}:{}/ui (this node's reads, labelled with their staleness)",
                    config.tls() == null ? "http" : "https", config.host(), mesh.port());
        }
        if (trust.startupPolicy() != null) {
            LOG.info("serving the cluster's log to {} peer hub(s) under {}", trust.startupPolicy().grants().size(),
                    trust.startupPolicy().file());
        }
        return new HubDaemon(mesh.server(), mesh.node().actor(), null, null, mesh, config, mesh.port());
    }

    /** The mesh node, or null on a single hub (tests: which node leads). */
    MeshHub mesh() {
        return mesh;
    }

    /** The bound port. */
    int port() {
        return port;
    }

    /** The mesh node's status (which node leads), or null on a single hub. */
    dev.synapsehub.mesh.MeshStatus meshStatus() {
        return mesh == null ? null : mesh.node().status();
    }

    /** The effective hub configuration. */
    HubConfig config() {
        return config;
    }

    /** The mutation actor (the hub's only writer). */
    CoordinationActor actor() {
        return actor;
    }

    /** Completes with the cause once the writer thread has failed for good; never completes otherwise. */
    CompletableFuture<Throwable> writerFailure() {
        return writerFailure;
    }

    /** Stops the server, lets the actor finish what it accepted, closes the journal; once (later calls wait for it). */
    @Override
    public synchronized void close() throws JournalException {
        if (closed) {
            return;
        }
        closed = true;
        LOG.info("shutting down: closing connections, then committing what was accepted");
        if (mesh != null) {
            try {
                mesh.close();
            } catch (IOException e) {
                LOG.warn("mesh node did not stop cleanly: {}", e.getMessage());
            }
        } else {
            server.close();
            if (control != null) {
                control.close(); // a backup in progress finishes first
            }
            if (snapshotter != null) {
                snapshotter.close(); // the shutdown snapshot, written through the actor before it stops
            }
            actor.close();
        }
        // an in-memory hub has no journal to close (a durable one always has a snapshotter)
        LOG.info(mesh == null && snapshotter == null ? "stopped" : "stopped; the journal is closed");
    }
}
