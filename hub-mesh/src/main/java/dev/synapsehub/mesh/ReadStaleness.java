package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * How fresh a mesh node's reads are (seed 001 §12), measured when asked. A node reads its own
 * applied state; the label says whether that is the leader's committed state, a replica of it,
 * and how far behind it may be, so a client can decide whether to trust it.
 */
final class ReadStaleness {
    /** What the label reads of its node. */
    interface View {
        /** True while this node leads a term and decides. */
        boolean leading();

        /** True while this node knows a leader. */
        boolean leaderKnown();

        /** On a follower: milliseconds since the leader's last append or heartbeat arrived; -1 when unknown. */
        long sinceLeaderContactMillis();

        /** True when this node's state holds every record its Raft log knows committed. */
        boolean caughtUp();

        /** Strong writes queued here, waiting for replay. */
        int queueDepth();
    }

    /**
     * The §12 block.
     *
     * @param source {@code local-committed} on the leader, {@code replica} on a follower
     *     (queued writes are never shown as state, so {@code local-queued} is not used)
     * @param lastGlobalCommitAt hub time of the last committed record this node applied, or null
     * @param replicationLagMs how old this node's view of the committed state may be
     * @param isStale true without a leader, or when the lag exceeds the election timeout
     */
    record Staleness(String source, Double lastGlobalCommitAt, long replicationLagMs, int queueDepth,
                     boolean isStale) {
        ObjectNode toJson() {
            ObjectNode o = MeshJson.MAPPER.createObjectNode();
            o.put("source", source);
            if (lastGlobalCommitAt == null) {
                o.putNull("lastGlobalCommitAt");
            } else {
                o.put("lastGlobalCommitAt", lastGlobalCommitAt);
            }
            o.put("replicationLagMs", replicationLagMs);
            o.put("queueDepth", queueDepth);
            o.put("isStale", isStale);
            return o;
        }
    }

    private final View view;
    private final long staleAfterMillis;
    private volatile double lastCommitAt = Double.NaN;
    private volatile long lastInSyncNanos = System.nanoTime();

    /** @param staleAfterMillis the lag beyond which reads are stale (the election timeout: a leader is then in doubt) */
    ReadStaleness(View view, long staleAfterMillis) {
        this.view = view;
        this.staleAfterMillis = staleAfterMillis;
    }

    /** A committed record decided at hub time {@code createdAt} was applied here. */
    void committed(double createdAt) {
        lastCommitAt = createdAt;
    }

    /** Samples whether this node is in sync now (called often, so the lag is measured from the last time it was). */
    void sample() {
        if (inSync()) {
            lastInSyncNanos = System.nanoTime();
        }
    }

    private boolean inSync() {
        return view.leading() || (view.leaderKnown() && view.caughtUp());
    }

    /** The label now. */
    Staleness now() {
        boolean leading = view.leading();
        long lag;
        if (leading) {
            lag = 0;
        } else if (view.leaderKnown() && view.caughtUp()) {
            lastInSyncNanos = System.nanoTime();
            lag = Math.max(0, view.sinceLeaderContactMillis());
        } else {
            lag = Math.max(0, (System.nanoTime() - lastInSyncNanos) / 1_000_000);
        }
        double at = lastCommitAt;
        boolean stale = !leading && (!view.leaderKnown() || lag > staleAfterMillis);
        return new Staleness(leading ? "local-committed" : "replica", Double.isNaN(at) ? null : at, lag,
                view.queueDepth(), stale);
    }
}
