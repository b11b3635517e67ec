package dev.synapsehub.cli;

import dev.synapsehub.journal.Snapshotter;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.protocol.PrometheusText;

import java.util.List;

/**
 * A durable single hub's state snapshots on {@code /metrics} and {@code /health}: taken, failed,
 * and failed upkeep (rotation, compaction) after a written one. It answers no frame; it is an
 * extension only because extensions are how the composition root adds to the hub's figures.
 */
final class SnapshotMetrics implements HubExtension {
    private final Snapshotter snapshotter;

    SnapshotMetrics(Snapshotter snapshotter) {
        this.snapshotter = snapshotter;
    }

    @Override
    public void appendMetrics(StringBuilder out) {
        PrometheusText.counter(out, "synapse_snapshots_taken_total", "State snapshots written since start.",
                snapshotter.taken());
        PrometheusText.counter(out, "synapse_snapshot_failures_total",
                "State snapshots that could not be written since start (the journal is unaffected).",
                snapshotter.failures());
        PrometheusText.counter(out, "synapse_snapshot_upkeep_failures_total", "Rotations of older snapshots or"
                + " journal compactions that failed after a written snapshot, since start.", snapshotter.upkeepFailures());
        PrometheusText.gauge(out, "synapse_snapshots_unusable_at_start", "Snapshots the start found unusable"
                + " (each logged as a WARN) and retired, so rotation and retention no longer count them.",
                snapshotter.unusableAtStart());
        PrometheusText.gauge(out, "synapse_snapshot_last_seq", "The journal seq the newest snapshot covers, 0 when none.",
                snapshotter.lastSeq());
    }

    @Override
    public List<String> degradedReasons() {
        // a restart would replay more of the journal than the policy intends until one is written
        return snapshotter.lastAttemptFailed() ? List.of("snapshot_failing") : List.of();
    }
}
