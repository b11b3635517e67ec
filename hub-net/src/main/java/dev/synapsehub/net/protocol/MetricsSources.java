package dev.synapsehub.net.protocol;

import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.WireJson;

import java.util.function.Consumer;

/**
 * What {@link HubMetricsText} reads to answer {@code /health} and {@code /metrics}, and nothing
 * more; wired once by {@code HubServer}.
 *
 * @param hubId this hub's id ({@code hub_id} in /health)
 * @param hubVersion the version /health reports
 * @param maxFanoutBacklogBytes the broadcast backlog above which the hub reports {@code fanout_backlogged}
 * @param maxFanoutDelayNanos how long a broadcast may wait for a socket before the hub reports {@code fanout_delayed}
 * @param maxFanoutWrites the writes an I/O loop may owe before the hub reports {@code fanout_writes_backlogged}
 * @param configEpoch fingerprint of the effective configuration
 * @param startedAt when the hub started (hub clock seconds), for {@code uptime_seconds}
 * @param journal the durable journal, or null for a hub without one
 * @param extensionMetrics appends the plugged-in modules' metric families after the hub's own
 * @param extensionDegraded why the plugged-in modules hold the hub degraded now (empty: nothing)
 * @param extensionFailed why the plugged-in modules hold the hub failed now (empty: nothing)
 */
public record MetricsSources(
        CoordinationActor actor,
        HubMetrics metrics,
        SessionRegistry registry,
        Outbox outbox,
        WireJson json,
        String hubId,
        String hubVersion,
        long maxFanoutBacklogBytes,
        long maxFanoutDelayNanos,
        long maxFanoutWrites,
        String configEpoch,
        double startedAt,
        Journal journal,
        Consumer<StringBuilder> extensionMetrics,
        java.util.function.Supplier<java.util.List<String>> extensionDegraded,
        java.util.function.Supplier<java.util.List<String>> extensionFailed) {
}
