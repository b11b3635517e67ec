package dev.synapsehub.federation.follow;

import dev.synapsehub.federation.LabelledCounters;

import java.util.concurrent.atomic.AtomicLong;

/** Counters of the standing watch, over every peer, and its observation errors per peer and kind. */
public final class WatchMetrics {
    public final AtomicLong polls = new AtomicLong();
    public final AtomicLong pollFailures = new AtomicLong();
    public final AtomicLong eventsFolded = new AtomicLong();
    public final AtomicLong equivocations = new AtomicLong();
    /**
     * Failed observations by peer and kind: transport, timeout, no_log_end, malformed, gap,
     * oversized_page, log_behind_cursor, mirror, equivocation, fault.
     */
    public final LabelledCounters observationErrors = new LabelledCounters(
            "synapse_multihub_peer_observation_errors_total",
            "Failed polls of a watched peer by kind (transport, timeout, no_log_end, malformed, gap, oversized_page, "
                    + "log_behind_cursor, mirror, equivocation, fault); each keeps the last observation.",
            "peer", "kind");
}
