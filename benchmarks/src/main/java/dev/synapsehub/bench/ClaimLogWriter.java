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
        List<CoordinationEvent> events = events(n, ownerPrefix, System.currentTimeMillis() / 1000.0);
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            for (int from = 0; from < events.size(); from += 10_000) {
                journal.append(events.subList(from, Math.min(events.size(), from + 10_000)));
            }
        }
    }

    /** The {@code n} events {@link #write} journals, stamped from {@code base} on, 0.1 ms apart. */
    static List<CoordinationEvent> events(int n, String ownerPrefix, double base) {
        long epoch = 0;
        List<CoordinationEvent> events = new ArrayList<>(n);
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
                events.add(new ClaimSnapshotEvent(ts, ClaimSnapshotEvent.Kind.CLAIM, c));
            } else if ((i / tasks) % 3 == 1) {
                c = new Claim(c.taskId(), c.owner(), c.principal(), "working on it", c.claimedAt(),
                        c.leaseExpiresAt(), ClaimStatus.WORKING, "ref", c.worktree(), c.paths(), c.epoch(),
                        c.version() + 1, "ckpt-" + i, c.git());
                held[t] = c;
                events.add(new ClaimSnapshotEvent(ts, ClaimSnapshotEvent.Kind.TASK_UPDATE, c));
            } else {
                held[t] = null;
                events.add(new ClaimReleasedEvent(ts, c.taskId()));
            }
        }
        return events;
    }
}
