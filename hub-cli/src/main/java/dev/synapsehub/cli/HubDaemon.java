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

import java.util.Map;

/**
 * The composition root of a running hub: journal (SQLite or in memory), state rebuilt by
 * replay, the mutation actor, and the Netty server. Closing it stops the server first, then
 * lets the actor finish what it accepted and closes the journal (nothing acknowledged is lost).
 */
final class HubDaemon implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HubDaemon.class);

    private final HubServer server;
    private final CoordinationActor actor;
    private final HubConfig config;
    private final int port;

    private HubDaemon(HubServer server, CoordinationActor actor, HubConfig config, int port) {
        this.server = server;
        this.actor = actor;
        this.config = config;
        this.port = port;
    }

    /** Validates the options, logs the effective configuration once, and starts serving. */
    static HubDaemon start(ServeOptions options, FederationOptions federationOptions)
            throws JournalException, InterruptedException {
        HubConfig config = options.hubConfig();
        ServingTrust trust = federationOptions.servingTrust(config.tls() != null, LOG::warn);
        FederationSettings federationSettings = federationOptions.settings(trust, options.hubId, config.hubId());
        if (trust.startupPolicy() != null) {
            config = config.toBuilder().tls(config.tls().withClientCa(trust.startupPolicy().clientCaFile())).build();
        }
        RegistryLimits limits = options.registryLimits();
        ActorSettings actorSettings = options.actorSettings();
        Map<String, Object> effective = options.effectiveSummary(config, limits, actorSettings);
        StringBuilder line = new StringBuilder("synapse-hub ").append(VersionProvider.version()).append(" starting:");
        effective.forEach((k, v) -> line.append(' ').append(k).append('=').append(v).append(';'));
        LOG.info(line.toString());

        Clock clock = Clock.system();
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
        FederationExtension federation;
        try {
            federation = new FederationExtension(federationSettings,
                    journal instanceof SqliteJournal sqlite ? sqlite : null,
                    options.db() == null ? Mirror.memory() : SqliteMirror.open(options.db()));
        } catch (Mirror.MirrorException e) {
            actor.close();
            throw new JournalException(e.getMessage(), e);
        }
        HubServer server = new HubServer(config, actor, clock, options.db() == null ? null : journal,
                new HubExtensions(List.of(federation)));
        int port;
        try {
            port = server.start();
        } catch (InterruptedException | RuntimeException e) {
            server.close();
            actor.close();
            throw e;
        }
        LOG.info("listening on {}://{}:{}/ (hub_id {}){}", config.scheme(), config.host(), port, config.hubId(),
                config.metricsEnabled() ? "; /health and /metrics served" : "");
        if (trust.startupPolicy() != null) {
            LOG.info("serving the log to {} peer hub(s) under {}", trust.startupPolicy().grants().size(),
                    trust.startupPolicy().file());
        }
        return new HubDaemon(server, actor, config, port);
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
        server.close();
        actor.close();
        LOG.info("stopped; the journal is closed");
    }
}
