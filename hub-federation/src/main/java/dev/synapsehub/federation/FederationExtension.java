package dev.synapsehub.federation;

import dev.synapsehub.federation.serve.LogServer;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.protocol.HubContext;
import dev.synapsehub.net.protocol.Request;

/**
 * Federation plugged into the hub's network edge: serves peer log pulls (§11.1) under the
 * serving policy. The composition root builds it from validated settings and hands it to
 * {@code HubServer}.
 */
public final class FederationExtension implements HubExtension {
    private final ServingTrust trust;
    private final SqliteJournal journal;
    private final FederationMetrics metrics = new FederationMetrics();
    private LogServer logServer;

    /**
     * @param trust the serving policy ({@link ServingTrust#none()}: every peer refused)
     * @param journal the hub's journal, or null for a hub without {@code --db}
     */
    public FederationExtension(ServingTrust trust, SqliteJournal journal) {
        this.trust = trust;
        this.journal = journal;
    }

    @Override
    public void bind(HubContext hub, ClaimService claims) {
        logServer = new LogServer(hub, trust, journal, metrics);
    }

    @Override
    public boolean handles(String type) {
        return "multihub_log_request".equals(type);
    }

    @Override
    public void handle(Request request) {
        logServer.handle(request);
    }

    @Override
    public void appendMetrics(StringBuilder out) {
        metrics.appendTo(out);
    }

    /** The counters (tests, status). */
    public FederationMetrics metrics() {
        return metrics;
    }
}
