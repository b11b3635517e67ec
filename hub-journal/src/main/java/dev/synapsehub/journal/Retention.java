package dev.synapsehub.journal;

import dev.synapsehub.core.event.Durability;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.RetentionHold;
import dev.synapsehub.core.messaging.MessagingLimits;
import dev.synapsehub.core.messaging.PendingReceipt;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;

import java.sql.PreparedStatement;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Compacts journal rows that state snapshots cover, keeping what the hub still has to serve.
 *
 * <p>After each snapshot, rows up to a floor are deleted, where the floor is the lowest of:
 * <ul>
 *   <li>the oldest snapshot kept (so the previous snapshot stays a complete fallback: it and
 *       every row after it are still here); nothing is compacted while fewer than two
 *       snapshots exist (one, when the operator keeps only one);</li>
 *   <li>the operator's audit window: the last {@link #keepRows} rows are kept ({@code -1}: all,
 *       the default, so nothing is ever deleted unless the operator asks);</li>
 *   <li>the mailbox: every directed chat still pending for some identity, and every chat whose
 *       deferred receipt is still pending, stays replayable and resolvable by an {@code ack},
 *       for at most {@link #PENDING_HOLD_SECONDS}: a chat nobody acknowledges (sent to a role or
 *       a mistyped name) must not keep every later row forever;</li>
 *   <li>the newest {@code multihub_partition} row of each namespace whose partition has not
 *       healed: a start restores unresolved partitions from those rows (the snapshot does not
 *       carry them), and a partition a restart forgot would never be journaled as healed;</li>
 *   <li>every {@link RetentionHold} registered: a federation peer's log cursor, a backup in
 *       progress.</li>
 * </ul>
 * Chat history, idempotency windows and every other state are in the snapshot, not the rows.
 * Deletion runs on the writer in transactions of at most {@link #BATCH_ROWS} rows, each also
 * recording {@code meta.compacted_through}, so a crash mid-way leaves a consistent file. Each
 * transaction reads the holds again in its own writer turn: a hold registered on the writer
 * while a pass is under way (a backup fixing its copy point) stops the pass at it.
 */
public final class Retention {
    private static final System.Logger LOG = System.getLogger(Retention.class.getName());
    private static final com.fasterxml.jackson.databind.ObjectMapper PAYLOADS =
            new com.fasterxml.jackson.databind.ObjectMapper();
    /** Rows deleted per writer transaction. */
    static final int BATCH_ROWS = 20_000;
    /** How long a pending directed chat or receipt holds its row: as long as a dead letter is remembered. */
    static final double PENDING_HOLD_SECONDS = MessagingLimits.SEVEN_DAYS;

    private final long keepRows;
    private final int batchRows;
    private final Map<String, RetentionHold> holds = new ConcurrentHashMap<>();
    private long droppedLogged; // mailbox identities dropped with pending chats, as last logged (writer thread)

    /** @param keepRows rows of audit history always kept, {@code -1} for all (never compact) */
    public Retention(long keepRows) {
        this(keepRows, BATCH_ROWS);
    }

    /** With {@code batchRows} rows deleted per writer transaction (tests use small batches). */
    Retention(long keepRows, int batchRows) {
        if (keepRows < -1) {
            throw new IllegalArgumentException("rows to keep must be >= 0, or -1 for all");
        }
        if (batchRows < 1) {
            throw new IllegalArgumentException("rows per batch must be >= 1");
        }
        this.keepRows = keepRows;
        this.batchRows = batchRows;
    }

    /** Keeps every row: no compaction. */
    public static Retention keepAll() {
        return new Retention(-1);
    }

    /** Rows of audit history always kept, -1 for all. */
    public long keepRows() {
        return keepRows;
    }

    /**
     * Registers (or replaces) a hold under {@code name}; while registered, rows after its
     * {@link RetentionHold#keepAfter()} are kept. Safe from any thread.
     */
    public void hold(String name, RetentionHold hold) {
        holds.put(name, hold);
    }

    /** Removes the hold under {@code name}. */
    public void release(String name) {
        holds.remove(name);
    }

    /** The floor and why: rows with seq up to {@code through} may go. */
    record Floor(long through, String limitedBy) {
    }

    /**
     * The compaction floor for {@code state} (on the writer thread) at hub time {@code now}, with
     * {@code keepSnapshots} the number of snapshots rotation keeps.
     */
    Floor floor(SqliteJournal journal, CoordinationState state, int keepSnapshots, double now)
            throws JournalException {
        if (keepRows < 0) {
            return new Floor(0, "the audit window (all rows kept)");
        }
        List<SnapshotStore.Info> snapshots = journal.snapshots().list();
        if (snapshots.size() < Math.min(2, keepSnapshots)) {
            // the only snapshot must not lose its fallback: a full replay needs every row
            return new Floor(0, snapshots.isEmpty() ? "no snapshot" : "no second snapshot to fall back to");
        }
        long floor = snapshots.get(snapshots.size() - 1).seq();
        String why = "the oldest snapshot kept";
        long audit = journal.lastSeq() - keepRows;
        if (audit < floor) {
            floor = audit;
            why = "the audit window of " + keepRows + " rows";
        }
        noteDropped(state.messaging().mailboxDroppedWithPending());
        StateImage.Messaging messaging = state.messaging().image();
        if (mailboxFloor(messaging, 0) < floor) {
            long recent = RowsSince.firstSeq(journal, now - PENDING_HOLD_SECONDS);
            long mailbox = mailboxFloor(messaging, recent);
            if (mailbox < floor) {
                floor = mailbox;
                why = "a directed chat still pending in a mailbox";
            }
        }
        long partitions = partitionFloor(journal, now - PARTITION_HOLD_SECONDS);
        if (partitions < floor) {
            floor = partitions;
            why = "an unresolved multi-hub partition's row";
        }
        Floor held = lowestHold();
        if (held.through() < floor) {
            floor = held.through();
            why = held.limitedBy();
        }
        return new Floor(Math.max(0, floor), why);
    }

    /**
     * How long the row of a partition never healed holds retention: a heal is journaled only for a
     * namespace still configured, so one dropped from the owner map (or a hub whose federation was
     * turned off) would otherwise hold every later row for good. Past it, a restart that finds the
     * row gone learns the partition again from its next refresh (the watch's fold is kept apart).
     */
    static final double PARTITION_HOLD_SECONDS = MessagingLimits.SEVEN_DAYS;

    /**
     * One below the oldest of the rows that leave a namespace partitioned (its newest
     * {@code multihub_partition}, no {@code multihub_heal} after it) journaled at or after hub time
     * {@code since}; MAX_VALUE when none. Read on the writer through the partial index of those rare rows.
     */
    static long partitionFloor(SqliteJournal journal, double since) throws JournalException {
        Map<String, Long> unresolved = new java.util.HashMap<>();
        for (dev.synapsehub.core.journal.JournaledEvent row : journal.readAfter(0, Integer.MAX_VALUE,
                java.util.Set.copyOf(JournalSchema.PARTITION_KINDS))) {
            if (!(row.event() instanceof dev.synapsehub.core.event.AuditRecordEvent audit)) {
                continue;
            }
            String ns;
            try {
                ns = PAYLOADS.readTree(audit.payloadJson()).path("namespace").asText(null);
            } catch (com.fasterxml.jackson.core.JsonProcessingException unreadable) {
                continue; // the start-up restore skips it as well
            }
            if (ns == null) {
                continue;
            }
            if ("multihub_partition".equals(audit.kind())) {
                if (audit.ts() >= since) {
                    unresolved.put(ns, row.seq());
                } else {
                    unresolved.remove(ns); // older than the hold: no longer kept for it
                }
            } else {
                unresolved.remove(ns);
            }
        }
        return unresolved.values().stream().mapToLong(seq -> seq - 1).min().orElse(Long.MAX_VALUE);
    }

    /** The lowest {@link RetentionHold#keepAfter()} registered and its name; MAX_VALUE when none. */
    private Floor lowestHold() {
        Floor lowest = new Floor(Long.MAX_VALUE, "no hold");
        for (Map.Entry<String, RetentionHold> h : holds.entrySet()) {
            long keepAfter = h.getValue().keepAfter();
            if (keepAfter < lowest.through()) {
                lowest = new Floor(keepAfter, "the hold '" + h.getKey() + "'");
            }
        }
        return lowest;
    }

    /**
     * One below the lowest chat seq, at or above {@code from}, that a mailbox or a pending
     * receipt still needs; MAX_VALUE when none.
     */
    static long mailboxFloor(StateImage.Messaging messaging, long from) {
        long lowest = Long.MAX_VALUE;
        for (StateImage.Pending p : messaging.pending()) {
            int i = Collections.binarySearch(p.seqs(), from); // seqs ascend
            int first = i >= 0 ? i : -i - 1;
            if (first < p.seqs().size()) {
                lowest = Math.min(lowest, p.seqs().get(first));
            }
        }
        for (PendingReceipt r : messaging.pendingReceipts()) {
            if (r.msgSeq() >= from) {
                lowest = Math.min(lowest, r.msgSeq());
            }
        }
        return lowest == Long.MAX_VALUE ? Long.MAX_VALUE : lowest - 1;
    }

    /** Logs, once per change, that the mailbox's bound dropped identities whose chats were still pending. */
    private void noteDropped(long dropped) {
        if (dropped > droppedLogged) {
            LOG.log(System.Logger.Level.WARNING, String.format(Locale.ROOT, "journal retention: %,d more mailbox"
                    + " identities dropped with directed chats still pending (%,d in all): more identities had"
                    + " chats pending than the mailbox keeps, and their chats no longer hold journal rows",
                    dropped - droppedLogged, dropped));
        }
        droppedLogged = dropped;
    }

    /**
     * Deletes the rows below the floor at hub time {@code now} in bounded writer transactions.
     *
     * @return rows deleted
     */
    long compact(SqliteJournal journal, WriterAccess writer, int keepSnapshots, double now) throws JournalException {
        Floor floor = writer.run(state -> floor(journal, state, keepSnapshots, now));
        long from = writer.run(state -> journal.compactedThrough());
        if (floor.through() <= from) {
            return 0;
        }
        long deleted = 0;
        long through = from;
        String limitedBy = floor.limitedBy();
        long start = System.nanoTime();
        while (through < floor.through()) {
            long low = through;
            long planned = Math.min(floor.through(), low + batchRows);
            Turn turn = writer.run(state -> deleteTurn(journal, low, planned));
            deleted += turn.deleted();
            through = turn.through();
            if (through < planned) {
                limitedBy = turn.heldBy() + ", registered during the pass";
                break;
            }
        }
        LOG.log(System.Logger.Level.INFO, String.format(Locale.ROOT,
                "journal retention: %,d rows through seq %,d deleted in %.0f ms (floor set by %s)", deleted,
                through, (System.nanoTime() - start) / 1e6, limitedBy));
        return deleted;
    }

    /** One deletion turn: rows deleted, the seq compacted through after it, and the hold that cut it short. */
    private record Turn(long deleted, long through, String heldBy) {
    }

    /**
     * Deletes rows after {@code low} up to {@code planned}, or only up to the lowest hold when one
     * is lower now: read in this same writer turn, so a hold registered since the pass began (on
     * the writer, as a backup does with the compaction point it copies from) is never overrun.
     */
    private Turn deleteTurn(SqliteJournal journal, long low, long planned) throws JournalException {
        Floor held = lowestHold();
        long high = Math.min(planned, held.through());
        if (high <= low) {
            return new Turn(0, low, held.limitedBy());
        }
        return new Turn(deleteRange(journal, low, high), high, held.limitedBy());
    }

    private static long deleteRange(SqliteJournal journal, long low, long high) throws JournalException {
        return journal.transaction(Durability.NORMAL, "compacting rows " + (low + 1) + ".." + high, c -> {
            long n;
            try (PreparedStatement delete = c.prepareStatement("DELETE FROM events WHERE seq > ? AND seq <= ?")) {
                delete.setLong(1, low);
                delete.setLong(2, high);
                n = delete.executeUpdate();
            }
            try (PreparedStatement mark = c.prepareStatement(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('compacted_through', ?)")) {
                mark.setString(1, Long.toString(high));
                mark.executeUpdate();
            }
            return n;
        });
    }
}
