package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.ActorMetrics;
import dev.synapsehub.net.wire.HubFrames;

import java.util.Locale;

/** Renders {@code /health} (contract §10) and {@code /metrics} (Prometheus text format). */
public final class HubMetricsText {
    private final HubContext hub;

    public HubMetricsText(HubContext hub) {
        this.hub = hub;
    }

    /** The {@code /health} JSON object. */
    public String health(int activeClaims, double now) {
        ObjectNode o = hub.json().object();
        o.put("status", "ok");
        o.put("journal_corrupt_rows", 0);
        o.put("version", hub.config().hubVersion());
        o.put("protocol_version", 2);
        o.put("hub_id", hub.frames().hubId());
        o.put("config_epoch", hub.configEpoch());
        HubFrames.putFloat(o, "uptime_seconds", Math.round((now - hub.startedAt()) * 1000.0) / 1000.0);
        o.put("online_agents", hub.registry().online().size());
        o.put("active_claims", Math.max(0, activeClaims));
        o.put("operation_outbox_pending", 0);
        return hub.json().write(o);
    }

    /** Prometheus text exposition. */
    public String prometheus(int activeClaims) {
        ActorMetrics a = hub.actor().metrics();
        HubMetrics m = hub.metrics();
        StringBuilder s = new StringBuilder(2048);
        gauge(s, "synapse_up", "1 while the hub serves.", 1);
        gauge(s, "synapse_journal_corrupt_rows", "Corrupt journal rows quarantined at start-up.", 0);
        gauge(s, "synapse_connected_clients", "Open WebSocket connections.", hub.registry().connectedClients());
        gauge(s, "synapse_online_agents", "Bound agent names.", hub.registry().online().size());
        gauge(s, "synapse_active_claims", "Live claims.", Math.max(0, activeClaims));
        gauge(s, "synapse_live_waiters", "Agents with advisory wait edges.", hub.registry().waitGraph().size());
        counter(s, "synapse_claims_granted_total", "Claims granted.", m.claimsGranted.get());
        counter(s, "synapse_claims_denied_total", "Claims denied.", m.claimsDenied.get());
        counter(s, "synapse_releases_granted_total", "Releases granted.", m.releasesGranted.get());
        counter(s, "synapse_auth_failures_total", "Token and per-message authentication failures.",
                m.authFailures.get());
        counter(s, "synapse_rate_limited_total", "Frames refused by the rate limit.", m.rateLimited.get());
        counter(s, "synapse_takeovers_total", "Name takeovers.", m.takeovers.get());
        counter(s, "synapse_takeover_quarantines_total", "Names pinned to their holder after repeated takeovers.",
                hub.registry().takeoverQuarantines());
        counter(s, "synapse_atomic_operations_replayed_total", "Idempotent retries answered from the store.",
                m.idempotentReplays.get());
        counter(s, "synapse_atomic_operations_conflicts_total", "Idempotency key conflicts.",
                m.idempotencyConflicts.get());
        counter(s, "synapse_slow_readers_disconnected_total", "Connections dropped for not reading.",
                m.slowReadersDisconnected.get());
        gauge(s, "synapse_fanout_backlog_bytes",
                "Broadcast bytes queued on the I/O loops for sockets that have not had them yet (summed over loops).",
                m.fanoutBacklogBytes.get());
        counter(s, "synapse_fanout_busy_refusals_total",
                "Requests answered busy because the broadcast backlog was over --max-fanout-backlog-mb.",
                m.fanoutBusyRefusals.get());
        counter(s, "synapse_tls_handshake_failures_total",
                "TLS handshakes that failed (plain ws:// to a wss:// port, a client certificate the CA refuses, ...).",
                m.tlsHandshakeFailures.get());
        gauge(s, "synapse_actor_queue_depth", "Submissions waiting for the coordination actor.",
                hub.actor().queueDepth());
        gaugeFloat(s, "synapse_actor_mean_batch_size", "Mean mutations per journal transaction.",
                a.meanBatchSize());
        gaugeFloat(s, "synapse_commit_latency_mean_microseconds", "Mean journal commit latency.",
                a.meanCommitMicros());
        gaugeFloat(s, "synapse_commit_latency_max_microseconds", "Slowest journal commit.", a.maxCommitMicros());
        counter(s, "synapse_actor_commands_total", "Mutations decided by the actor.", a.commands());
        counter(s, "synapse_actor_busy_refusals_total", "Submissions refused because the queue was full.",
                a.busyRefusals());
        gauge(s, "synapse_operation_outbox_pending", "Operation outbox rows pending.", 0);
        hub.extensions().appendMetrics(s);
        return s.toString();
    }

    private static void gauge(StringBuilder s, String name, String help, long value) {
        s.append("# HELP ").append(name).append(' ').append(help).append('\n');
        s.append("# TYPE ").append(name).append(" gauge\n");
        s.append(name).append(' ').append(value).append('\n');
    }

    private static void gaugeFloat(StringBuilder s, String name, String help, double value) {
        s.append("# HELP ").append(name).append(' ').append(help).append('\n');
        s.append("# TYPE ").append(name).append(" gauge\n");
        s.append(name).append(' ').append(String.format(Locale.ROOT, "%.3f", value)).append('\n');
    }

    private static void counter(StringBuilder s, String name, String help, long value) {
        s.append("# HELP ").append(name).append(' ').append(help).append('\n');
        s.append("# TYPE ").append(name).append(" counter\n");
        s.append(name).append(' ').append(value).append('\n');
    }
}
