package dev.synapsehub.federation;

import dev.synapsehub.federation.serve.LogServer;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.protocol.HubContext;
import dev.synapsehub.net.protocol.Request;

/**
 * Serving peer log pulls ({@code multihub_log_request}, contract §11.1) and nothing else of
 * federation: what a mesh node runs. Every node's journal copy holds the committed events under
 * the seqs the replicated batches carry, so any node answers a follower with the cluster's one
 * hub id and the same {@code (seq, event)} pairs; a node behind the others serves a shorter log,
 * which a follower treats as "not yet" and keeps its cursor.
 */
public final class LogServingExtension implements HubExtension {
    private final ServingTrust trust;
    private final SqliteJournal journal;
    private final FederationMetrics metrics = new FederationMetrics();
    private LogServer server;

    /** {@code journal}: the node's journal copy, read on the node's actor thread. */
    public LogServingExtension(ServingTrust trust, SqliteJournal journal) {
        this.trust = trust;
        this.journal = journal;
    }

    @Override
    public void bind(HubContext hub, ClaimService claims) {
        server = new LogServer(hub, trust, journal, metrics);
    }

    @Override
    public boolean handles(String type) {
        return "multihub_log_request".equals(type);
    }

    @Override
    public void handle(Request request) {
        server.handle(request);
    }

    @Override
    public void appendMetrics(StringBuilder out) {
        metrics.appendServingTo(out);
    }
}
