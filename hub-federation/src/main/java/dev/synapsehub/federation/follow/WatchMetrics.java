package dev.synapsehub.federation.follow;

import java.util.concurrent.atomic.AtomicLong;

/** Counters of the standing watch, over every peer. */
public final class WatchMetrics {
    public final AtomicLong polls = new AtomicLong();
    public final AtomicLong pollFailures = new AtomicLong();
    public final AtomicLong eventsFolded = new AtomicLong();
    public final AtomicLong equivocations = new AtomicLong();
}
