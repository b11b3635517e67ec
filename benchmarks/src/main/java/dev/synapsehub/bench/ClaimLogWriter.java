package dev.synapsehub.bench;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.journal.SqliteJournal;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a synthetic journal for the replay and federation benchmarks: claim, task_update and
 * release events cycling over 10,000 tasks held by 97 agents, in batches of 10,000.
 */
final class ClaimLogWriter {
    private ClaimLogWriter() {
    }

    /** {@code n} events into the journal at {@code db}; agents are named {@code <ownerPrefix>agent-<k>}. */
    static void write(Path db, int n, String ownerPrefix) throws Exception {
        double base = System.currentTimeMillis() / 1000.0;
        long epoch = 0;
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            List<CoordinationEvent> batch = new ArrayList<>(10_000);
            int tasks = 10_000;
            Claim[] held = new Claim[tasks];
            for (int i = 0; i < n; i++) {
                int t = i % tasks;
                double ts = base + i * 1e-4;
                Claim c = held[t];
                if (c == null) {
                    String owner = ownerPrefix + "agent-" + (t % 97);
                    c = new Claim("task-" + t, owner, owner, "bench", ts, ts + 3600,
                            ClaimStatus.CLAIMED, "", "wt-" + t, List.of("src/module" + t, "docs/" + t), ++epoch, 0, "",
                            null);
                    held[t] = c;
                    batch.add(new ClaimSnapshotEvent(ts, ClaimSnapshotEvent.Kind.CLAIM, c));
                } else if ((i / tasks) % 3 == 1) {
                    c = new Claim(c.taskId(), c.owner(), c.principal(), "working on it", c.claimedAt(),
                            c.leaseExpiresAt(), ClaimStatus.WORKING, "ref", c.worktree(), c.paths(), c.epoch(),
                            c.version() + 1, "ckpt-" + i, c.git());
                    held[t] = c;
                    batch.add(new ClaimSnapshotEvent(ts, ClaimSnapshotEvent.Kind.TASK_UPDATE, c));
                } else {
                    held[t] = null;
                    batch.add(new ClaimReleasedEvent(ts, c.taskId()));
                }
                if (batch.size() == 10_000) {
                    journal.append(batch);
                    batch.clear();
                }
            }
            if (!batch.isEmpty()) {
                journal.append(batch);
            }
        }
    }
}
