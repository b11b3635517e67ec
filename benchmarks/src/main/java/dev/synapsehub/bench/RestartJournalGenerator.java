package dev.synapsehub.bench;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.IdempotencyRecordedEvent;
import dev.synapsehub.journal.SqliteJournal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes a large, realistic journal for the restart benchmark straight into SQLite (no actor,
 * no sockets): {@code --rows} rows in all, ending with {@code --claims} live keyed claims.
 *
 * <p>History: claim, update, checkpoint and release cycles over the tasks (each claim a new
 * epoch), with a chat every 25 rows, so every registry a restart rebuilds has content; then one
 * keyed claim (claim + idempotency record) per task whose lease runs 30 days past now. 1,000
 * agents hold 100 claims each at the end, in 100 worktrees. Bounded by {@code --rows}; rows are
 * appended in transactions of 20,000. With {@code --append} it adds {@code --rows} more history
 * rows (on tasks of their own, all released) to an existing journal: a tail after its newest
 * snapshot, as a crash would leave.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.synapsehub.bench.RestartJournalGenerator \
 *     --db /tmp/restart.db --rows 10000000 --claims 100000</pre>
 */
public final class RestartJournalGenerator {
    private static final int BATCH = 20_000;

    private RestartJournalGenerator() {
    }

    public static void main(String[] args) throws Exception {
        Path db = null;
        long rows = 10_000_000;
        int claims = 100_000;
        boolean append = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--db" -> db = Path.of(args[++i]);
                case "--rows" -> rows = Long.parseLong(args[++i]);
                case "--claims" -> claims = Integer.parseInt(args[++i]);
                case "--append" -> append = true;
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + " (use --db FILE --rows N --claims N)");
            }
        }
        if (db == null || Files.exists(db) != append) {
            throw new IllegalArgumentException("--db must name a new file (an existing one with --append)");
        }
        if (!append && (rows < 2L * claims || claims < 1)) {
            throw new IllegalArgumentException("--rows must be at least twice --claims");
        }
        long start = System.nanoTime();
        double now = System.currentTimeMillis() / 1000.0;
        long history = append ? rows : rows - 2L * claims;
        double t = now - 3600; // the history spans the last hour
        double step = 3000.0 / Math.max(1, history);
        long epoch = 0;
        long msgId = 0;
        long written = 0;
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            List<CoordinationEvent> batch = new ArrayList<>(BATCH + 8);
            long cycle = 0;
            while (written + batch.size() < history) {
                int task = (int) (cycle % claims) + (append ? 10_000_000 : 0);
                String agent = agent(task);
                Claim claim = claim(task, agent, t, t + 600, ++epoch, 0, "");
                batch.add(new ClaimSnapshotEvent(t, ClaimSnapshotEvent.Kind.CLAIM, claim));
                batch.add(new ClaimSnapshotEvent(t, ClaimSnapshotEvent.Kind.TASK_UPDATE,
                        claim(task, agent, t, t + 600, epoch, 1, "")));
                batch.add(new ClaimSnapshotEvent(t, ClaimSnapshotEvent.Kind.CHECKPOINT,
                        claim(task, agent, t, t + 600, epoch, 2, "ck-" + cycle)));
                batch.add(new ClaimReleasedEvent(t, "task-" + task));
                if (cycle % 6 == 0) {
                    msgId++;
                    batch.add(new ChatEvent(t, msgId, agent, "all", null, false, List.of(), String.format(Locale.ROOT,
                            "{\"type\":\"chat\",\"sender\":\"%s\",\"target\":\"all\",\"payload\":\"progress on task-%d\","
                                    + "\"timestamp\":%.6f,\"hub_id\":\"syn-bench\",\"msg_id\":%d}", agent, task, t, msgId)));
                }
                cycle++;
                t += step * 4;
                if (batch.size() >= BATCH) {
                    written += flush(journal, batch, history - written);
                    progress(written, rows, start);
                }
            }
            written += flush(journal, batch, history - written);
            for (int task = 0; task < (append ? 0 : claims); task++) {
                String agent = agent(task);
                Claim claim = claim(task, agent, now - 60, now + 30 * 86_400, ++epoch, 0, "");
                batch.add(new ClaimSnapshotEvent(now - 60, ClaimSnapshotEvent.Kind.CLAIM, claim));
                batch.add(new IdempotencyRecordedEvent(now - 60, agent + "\0claim\0boot-" + task,
                        String.format("%064x", task), String.format(Locale.ROOT,
                        "{\"type\":\"claim_ok\",\"task_id\":\"task-%d\",\"owner\":\"%s\",\"epoch\":%d,\"version\":0,"
                                + "\"lease_expires_at\":%.3f}", task, agent, epoch, now + 30 * 86_400)));
                if (batch.size() >= BATCH) {
                    written += flush(journal, batch, Long.MAX_VALUE);
                    progress(written, rows, start);
                }
            }
            written += flush(journal, batch, Long.MAX_VALUE);
            System.out.printf(Locale.ROOT, "%s: %,d rows written (last seq %,d)%s; %.1f s%n", db, written,
                    journal.lastSeq(), append ? "" : String.format(Locale.ROOT, ", %,d live claims at the end, epoch %,d",
                            claims, epoch), (System.nanoTime() - start) / 1e9);
        }
    }

    /** Appends at most {@code room} events of the batch in one transaction; returns how many. */
    private static long flush(SqliteJournal journal, List<CoordinationEvent> batch, long room) throws Exception {
        List<CoordinationEvent> take = batch.size() > room ? batch.subList(0, (int) room) : batch;
        int n = take.size();
        if (n > 0) {
            journal.append(new ArrayList<>(take));
        }
        batch.clear();
        return n;
    }

    private static void progress(long written, long rows, long start) {
        if (written % 1_000_000 < BATCH) {
            System.out.printf(Locale.ROOT, "  %,d of %,d rows, %.0f s%n", written, rows, (System.nanoTime() - start) / 1e9);
        }
    }

    private static String agent(int task) {
        return "fleet/agent-" + (task % 1_000);
    }

    private static Claim claim(int task, String agent, double at, double expires, long epoch, long version,
                               String checkpoint) {
        return new Claim("task-" + task, agent, agent, "working on task-" + task, at, expires,
                version == 0 ? ClaimStatus.CLAIMED : ClaimStatus.WORKING, "", "wt-" + (task % 100),
                List.of("src/module-" + task, "tests/module-" + task), epoch, version, checkpoint, null);
    }
}
