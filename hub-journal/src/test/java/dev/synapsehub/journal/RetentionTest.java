package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.board.BoardLimits;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.command.ChatCommand;
import dev.synapsehub.core.command.MailboxCursorCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.MessagingLimits;
import dev.synapsehub.core.resource.ResourceLimits;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * Retention deletes the rows the kept snapshots cover and nothing the hub still has to serve:
 * the rows after the oldest kept snapshot (its fallback), the operator's audit window, directed
 * chats still pending in a mailbox, and whatever a hold (a peer's cursor) names.
 */
class RetentionTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_000);
    private static final SnapshotPolicy MANUAL = new SnapshotPolicy(0, 0, 2, true);

    private Path db() {
        return dir.resolve("hub.db");
    }

    private DurableCoordination open(Retention retention) throws Exception {
        return DurableCoordination.open(db(), clock, CoordinationState::new, ActorSettings.DEFAULTS, MANUAL, retention);
    }

    /** {@code n} claim + release pairs: 2n rows of history nothing needs. */
    private static void churn(DurableCoordination hub, String prefix, int n) {
        for (int i = 0; i < n; i++) {
            granted(await(hub.actor().submit(Fixtures.claimOf("alice", prefix + i))));
            granted(await(hub.actor().submit(Mutation.of(new ReleaseCommand("alice", prefix + i, null)))));
        }
    }

    /** A directed chat to an identity that is not online: pending in its mailbox. Returns its seq. */
    private static long directedToOffline(DurableCoordination hub) {
        return directedTo(hub, "x/offline");
    }

    /** A directed chat to {@code target}, nobody online. Returns its seq. */
    private static long directedTo(DurableCoordination hub, String target) {
        var outcome = (dev.synapsehub.core.actor.Outcome.Decided) await(hub.actor().submit(Mutation.of(
                new ChatCommand("alice", target, null, null, null, false, List.of(),
                        stamp -> "{\"type\":\"chat\",\"sender\":\"alice\",\"target\":\"" + target
                                + "\",\"payload\":\"hi\",\"msg_id\":" + stamp.msgId() + "}"))));
        return outcome.committed().get(0).seq();
    }

    /** A watermark advance for {@code identity} through the last row. */
    private static void cursor(DurableCoordination hub, String identity) {
        await(hub.actor().submit(Mutation.of(new MailboxCursorCommand(identity, null, hub.journal().lastSeq()))));
    }

    private long firstRow() throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db()); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT MIN(seq) FROM events")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static StateImage image(DurableCoordination hub) {
        return await(hub.actor().read(CoordinationState::image));
    }

    @Test
    void rowsBeforeTheOldestKeptSnapshotGoUnlessAMailboxStillNeedsThem() throws Exception {
        long pendingChat;
        long firstSnapshot;
        StateImage before;
        try (DurableCoordination hub = open(new Retention(0))) {
            churn(hub, "early", 50);
            pendingChat = directedToOffline(hub);
            churn(hub, "mid", 50);
            firstSnapshot = hub.snapshotter().takeNow().info().seq();
            churn(hub, "late", 50);
            Snapshotter.Result second = hub.snapshotter().takeNow();
            assertThat(second.compactedRows()).as("rows before the pending chat").isEqualTo(pendingChat - 1);
            assertThat(hub.journal().compactedThrough()).isEqualTo(pendingChat - 1);
            List<JournaledEvent> chat = await(hub.actor().read(s -> {
                try {
                    return hub.journal().readAfter(pendingChat - 1, 1, Set.of("chat"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
            assertThat(chat).extracting(JournaledEvent::seq).as("the mailbox can still replay it").containsExactly(pendingChat);
            before = image(hub);
        }
        assertThat(firstRow()).isEqualTo(pendingChat);
        assertThat(firstSnapshot).isGreaterThan(pendingChat);

        try (DurableCoordination hub = open(new Retention(0))) {
            assertThat(image(hub)).isEqualTo(before);
            // the chat is acknowledged through a cursor: nothing pending, the next snapshot compacts to the older one
            await(hub.actor().submit(Mutation.of(new MailboxCursorCommand("x/offline", null,
                    hub.journal().lastSeq()))));
            churn(hub, "after", 5);
            long olderKept = hub.journal().snapshots().list().get(0).seq();
            hub.snapshotter().takeNow();
            assertThat(hub.journal().compactedThrough()).isEqualTo(olderKept);
        }
        try (SqliteJournal j = SqliteJournal.open(db())) {
            List<SnapshotStore.Info> kept = j.snapshots().list();
            assertThat(kept).hasSize(2);
            assertThat(j.compactedThrough()).as("the older kept snapshot stays a complete fallback")
                    .isEqualTo(kept.get(1).seq());
        }
        // damage the newest: the older one plus its rows rebuild the same state
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db()); Statement s = c.createStatement()) {
            s.executeUpdate("UPDATE snapshot_chunks SET data = zeroblob(length(data)) WHERE snapshot_id ="
                    + " (SELECT MAX(id) FROM snapshots)");
        }
        try (DurableCoordination hub = DurableCoordination.open(db(), clock, CoordinationState::new,
                ActorSettings.DEFAULTS, SnapshotPolicy.NEVER)) {
            assertThat(hub.recovery().fallbacks()).hasSize(1);
            assertThat(hub.recovery().snapshot()).isNotNull();
            int live = await(hub.actor().read(s -> s.claims().liveCount()));
            assertThat(live).isZero();
        }
    }

    @Test
    void aChatStaysHeldWhenOtherIdentitiesPushItsOwnerOutOfTheProjectionUntilTheBoundDropsIt() throws Exception {
        // a projection of two identities (512 by default) and as many parked
        MessagingLimits two = new MessagingLimits(100, 10, MessagingLimits.SEVEN_DAYS, 0, 2, 100, 100, 10);
        Supplier<CoordinationState> fresh = () -> new CoordinationState(RegistryLimits.DEFAULTS, 1000,
                BoardLimits.DEFAULTS, ResourceLimits.DEFAULTS, two);
        List<LogRecord> logged = capture(Retention.class);
        try (DurableCoordination hub = DurableCoordination.open(db(), clock, fresh, ActorSettings.DEFAULTS, MANUAL,
                new Retention(0))) {
            churn(hub, "early", 20);
            long toOffline = directedToOffline(hub);
            for (String other : List.of("w/1", "w/2", "w/3")) {
                cursor(hub, other); // each advance is a touch: x/offline leaves what who shows
            }
            Map<String, Integer> shown = await(hub.actor().read(s -> s.messaging().mailboxPending()));
            assertThat(shown).doesNotContainKey("x/offline");
            churn(hub, "mid", 20);
            hub.snapshotter().takeNow();
            churn(hub, "late", 20);
            hub.snapshotter().takeNow();
            assertThat(hub.journal().compactedThrough()).as("its chat still holds the rows").isEqualTo(toOffline - 1);

            // four more offline identities with chats: parked ones beyond two are dropped, x/offline first
            for (String to : List.of("c/1", "c/2", "c/3", "c/4")) {
                directedTo(hub, to);
            }
            hub.snapshotter().takeNow();
            assertThat(hub.journal().compactedThrough()).as("dropped: no longer held").isGreaterThan(toOffline);
        } finally {
            release(Retention.class);
        }
        assertThat(logged).filteredOn(r -> r.getLevel() == Level.WARNING).singleElement()
                .satisfies(r -> assertThat(r.getMessage()).contains("1 more mailbox identities dropped"));
    }

    @Test
    void aChatNobodyAcknowledgesHoldsRowsForSevenDaysOnly() throws Exception {
        try (DurableCoordination hub = open(new Retention(0))) {
            churn(hub, "a", 20);
            long toRole = directedTo(hub, "x/reviewer");
            churn(hub, "b", 20);
            hub.snapshotter().takeNow();
            churn(hub, "c", 20);
            hub.snapshotter().takeNow();
            assertThat(hub.journal().compactedThrough()).isEqualTo(toRole - 1);
            clock.advance(MessagingLimits.SEVEN_DAYS - 60);
            churn(hub, "d", 5);
            hub.snapshotter().takeNow();
            assertThat(hub.journal().compactedThrough()).as("a week not yet over").isEqualTo(toRole - 1);
            clock.advance(120);
            churn(hub, "e", 5);
            hub.snapshotter().takeNow();
            assertThat(hub.journal().compactedThrough()).as("past a week it holds nothing")
                    .isEqualTo(hub.journal().snapshots().list().get(1).seq());
        }
    }

    private static final Map<Class<?>, Handler> CAPTURES = new java.util.concurrent.ConcurrentHashMap<>();

    /** Records what {@code type}'s logger logs until {@link #release}. */
    private static List<LogRecord> capture(Class<?> type) {
        List<LogRecord> logged = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord r) {
                logged.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        CAPTURES.put(type, handler);
        Logger.getLogger(type.getName()).addHandler(handler);
        return logged;
    }

    private static void release(Class<?> type) {
        Logger.getLogger(type.getName()).removeHandler(CAPTURES.remove(type));
    }

    @Test
    void theAuditWindowAndHoldsKeepRowsAndKeepAllKeepsEverything() throws Exception {
        try (DurableCoordination hub = open(new Retention(30))) {
            churn(hub, "a", 40);
            hub.snapshotter().takeNow();
            churn(hub, "b", 40);
            hub.snapshotter().takeNow();
            assertThat(hub.journal().compactedThrough()).as("the older snapshot bounds it")
                    .isEqualTo(hub.journal().snapshots().list().get(1).seq());
            churn(hub, "c", 5);
            hub.snapshotter().takeNow();
            assertThat(hub.journal().compactedThrough()).as("the last 30 rows stay")
                    .isEqualTo(Math.min(hub.journal().lastSeq() - 30, hub.journal().snapshots().list().get(1).seq()));
        }
        Path held = dir.resolve("held.db");
        Retention withHold = new Retention(0);
        withHold.hold("peer-a", () -> 25);
        try (DurableCoordination hub = DurableCoordination.open(held, clock, CoordinationState::new,
                ActorSettings.DEFAULTS, MANUAL, withHold)) {
            churn(hub, "h", 40);
            hub.snapshotter().takeNow();
            churn(hub, "i", 10);
            hub.snapshotter().takeNow();
            assertThat(hub.journal().compactedThrough()).as("a peer still needs rows after 25").isEqualTo(25);
            withHold.release("peer-a");
            churn(hub, "j", 1);
            hub.snapshotter().takeNow();
            assertThat(hub.journal().compactedThrough()).isGreaterThan(25);
        }
        Path all = dir.resolve("all.db");
        try (DurableCoordination hub = DurableCoordination.open(all, clock, CoordinationState::new,
                ActorSettings.DEFAULTS, MANUAL, Retention.keepAll())) {
            churn(hub, "k", 20);
            hub.snapshotter().takeNow();
            churn(hub, "l", 20);
            assertThat(hub.snapshotter().takeNow().compactedRows()).isZero();
            assertThat(hub.journal().compactedThrough()).isZero();
        }
    }

    @Test
    void aBackupThatFixesItsCopyPointBetweenTwoDeletionTurnsStopsThePassThere() throws Exception {
        Retention retention = new Retention(0, 10);
        retention.hold("setup", () -> 0); // nothing goes until the pass under test
        Path copy = dir.resolve("copy.db");
        try (DurableCoordination hub = open(retention)) {
            churn(hub, "a", 60);
            hub.snapshotter().takeNow();
            churn(hub, "b", 10);
            hub.snapshotter().takeNow();
            retention.release("setup");
            WriterAccess actor = WriterAccess.actor(hub.actor(), 60);
            long planned = actor.run(s -> retention.floor(hub.journal(), s, 2, clock.nowSeconds()).through());
            assertThat(planned).as("the pass plans to delete through the older snapshot").isGreaterThan(20);

            CountDownLatch pointFixed = new CountDownLatch(1);
            CountDownLatch passOver = new CountDownLatch(1);
            // the backup's first turn fixes its copy point and registers its hold; it reads nothing until the pass is over
            WriterAccess backupWriter = new WriterTurnGate(actor, 2, () -> {
                pointFixed.countDown();
                awaitLatch(passOver);
            });
            CompletableFuture<JournalBackup.Result> backup = new CompletableFuture<>();
            // the pass's turns: the floor, compacted_through, then deletions; the backup starts before the second deletion
            WriterAccess passWriter = new WriterTurnGate(actor, 4, () -> {
                Thread t = new Thread(() -> {
                    try {
                        backup.complete(JournalBackup.copy(hub.journal(), backupWriter, retention, copy));
                    } catch (Throwable e) {
                        backup.completeExceptionally(e);
                    }
                });
                t.start();
                awaitLatch(pointFixed);
            });
            long deleted = retention.compact(hub.journal(), passWriter, 2, clock.nowSeconds());
            passOver.countDown();
            JournalBackup.Result result = backup.get(60, TimeUnit.SECONDS);

            assertThat(deleted).as("only the first turn's rows: the backup holds the rest").isEqualTo(10);
            assertThat(hub.journal().compactedThrough()).isEqualTo(10);
            assertThat(firstRow()).as("no row after the backup's hold is deleted").isEqualTo(11);
            assertThat(result.rows()).as("every row after its compaction point").isEqualTo(result.seq() - 10);
        }
        try (SqliteJournal backup = SqliteJournal.open(copy)) {
            assertThat(backup.compactedThrough()).as("the compaction point it records matches its rows").isEqualTo(10);
            JournalCheck.Result check = JournalCheck.verify(backup, CoordinationState::new, clock.nowSeconds());
            assertThat(check.problems()).isEmpty();
        }
    }

    @Test
    void aSnapshotWrittenBeforeCompactionFailsCountsAsTakenAndTheFailureIsLoggedOnce() throws Exception {
        Retention retention = new Retention(0);
        AtomicBoolean broken = new AtomicBoolean();
        retention.hold("flaky", () -> {
            if (broken.get()) {
                throw new IllegalStateException("hold unreadable");
            }
            return Long.MAX_VALUE;
        });
        List<LogRecord> logged = capture(Snapshotter.class);
        try (DurableCoordination hub = DurableCoordination.open(db(), clock, CoordinationState::new,
                ActorSettings.DEFAULTS, SnapshotPolicy.NEVER, retention);
             Snapshotter snapshots = Snapshotter.unscheduled(hub.journal(), WriterAccess.actor(hub.actor(), 60), clock,
                     new SnapshotPolicy(0, 20, 2, false), retention)) {
            churn(hub, "a", 10);
            snapshots.tick();
            broken.set(true);
            churn(hub, "b", 10);
            snapshots.tick(); // written; then compaction (two snapshots now) fails
            assertThat(snapshots.taken()).isEqualTo(2);
            assertThat(snapshots.failures()).isZero();
            assertThat(snapshots.upkeepFailures()).isEqualTo(1);
            assertThat(snapshots.last().upkeepFailed()).isTrue();
            assertThat(snapshots.last().info().seq()).isEqualTo(hub.journal().lastSeq());
            snapshots.tick();
            snapshots.tick();
            assertThat(snapshots.taken()).as("no row since the written snapshot: nothing due").isEqualTo(2);
            churn(hub, "c", 10);
            snapshots.tick();
            assertThat(snapshots.taken()).isEqualTo(3);
            assertThat(snapshots.upkeepFailures()).as("counted each time").isEqualTo(2);
            assertThat(hub.journal().snapshots().list()).as("rotation ran before compaction failed").hasSize(2);
            assertThat(hub.journal().compactedThrough()).isZero();

            broken.set(false);
            churn(hub, "d", 10);
            snapshots.tick();
            assertThat(snapshots.taken()).isEqualTo(4);
            assertThat(snapshots.last().upkeepFailed()).isFalse();
            assertThat(hub.journal().compactedThrough()).isPositive();
        } finally {
            release(Snapshotter.class);
        }
        assertThat(logged).filteredOn(r -> r.getLevel() == Level.WARNING).as("logged once until it works again")
                .singleElement().satisfies(r -> assertThat(r.getThrown()).hasRootCauseMessage("hold unreadable"));
        assertThat(logged).extracting(LogRecord::getMessage).anyMatch(m -> m.contains("work again after 2"));
    }

    @Test
    void aSnapshotThatCouldNotBeWrittenIsCountedAndReportedUntilOneIs() throws Exception {
        try (DurableCoordination hub = open(Retention.keepAll());
             // turn 1 lists the stored snapshots at construction; turn 2 is the first snapshot's image
             Snapshotter snapshots = Snapshotter.unscheduled(hub.journal(), new WriterTurnGate(
                     WriterAccess.actor(hub.actor(), 60), 2, () -> {
                         throw new IllegalStateException("disk full (injected)");
                     }), clock, new SnapshotPolicy(0, 20, 2, false), Retention.keepAll())) {
            assertThat(snapshots.lastAttemptFailed()).isFalse();
            assertThat(snapshots.lastSeq()).isZero();
            churn(hub, "a", 10);
            snapshots.tick();
            assertThat(snapshots.failures()).isEqualTo(1);
            assertThat(snapshots.taken()).isZero();
            assertThat(snapshots.lastAttemptFailed()).as("reported while no snapshot is written").isTrue();
            assertThat(snapshots.lastSeq()).isZero();

            snapshots.tick(); // still due: the failed one did not count
            assertThat(snapshots.taken()).isEqualTo(1);
            assertThat(snapshots.lastAttemptFailed()).as("a written snapshot ends it").isFalse();
            assertThat(snapshots.lastSeq()).isEqualTo(hub.journal().lastSeq());
        }
    }

    @Test
    void anErrorWhileTakingASnapshotIsCountedAndReportedAndNeverReachesTheTimer() throws Exception {
        List<LogRecord> logged = capture(Snapshotter.class);
        try (DurableCoordination hub = open(Retention.keepAll());
             // turn 1 lists the stored snapshots at construction; turn 2 is the first snapshot's image
             Snapshotter snapshots = Snapshotter.unscheduled(hub.journal(), new WriterTurnGate(
                     WriterAccess.actor(hub.actor(), 60), 2, () -> {
                         throw new OutOfMemoryError("Java heap space (injected)");
                     }), clock, new SnapshotPolicy(0, 20, 2, false), Retention.keepAll())) {
            churn(hub, "a", 10);
            // the timer runs tick: a throw out of it would cancel every later tick, silently
            assertThatCode(snapshots::tick).as("nothing thrown into the timer").doesNotThrowAnyException();
            assertThat(snapshots.failures()).isEqualTo(1);
            assertThat(snapshots.taken()).isZero();
            assertThat(snapshots.lastAttemptFailed()).as("reported: snapshot_failing").isTrue();

            snapshots.tick(); // due, but a VM error holds the next attempt for a while
            assertThat(snapshots.failures()).isEqualTo(1);
            assertThat(snapshots.taken()).isZero();

            clock.advance(Snapshotter.VM_ERROR_BACKOFF_SECONDS);
            snapshots.tick(); // and then it keeps trying
            assertThat(snapshots.taken()).isEqualTo(1);
            assertThat(snapshots.lastAttemptFailed()).isFalse();
        } finally {
            release(Snapshotter.class);
        }
        assertThat(logged).filteredOn(r -> r.getLevel() == Level.SEVERE).as("logged once")
                .singleElement().satisfies(r -> assertThat(r.getThrown()).isInstanceOf(OutOfMemoryError.class));
    }

    @Test
    void theRowOfAPartitionNotYetHealedIsKeptUntilItsHeal() throws Exception {
        try (DurableCoordination hub = open(new Retention(0))) {
            churn(hub, "a", 5);
            long partition = audit(hub, "multihub_partition", "{\"namespace\":\"proj\",\"contesting_hubs\":[\"hub-c\"]}");
            audit(hub, "multihub_partition", "{\"namespace\":\"other\",\"contesting_hubs\":[\"hub-c\"]}");
            long otherHealed = audit(hub, "multihub_heal", "{\"namespace\":\"other\"}");
            for (int i = 0; i < 3; i++) {
                hub.snapshotter().takeNow();
                churn(hub, "b" + i, 5);
            }
            hub.snapshotter().takeNow();
            assertThat(hub.journal().compactedThrough()).as("held by proj's partition row (a start restores it)")
                    .isEqualTo(partition - 1);

            audit(hub, "multihub_heal", "{\"namespace\":\"proj\"}");
            for (int i = 0; i < 2; i++) {
                churn(hub, "c" + i, 5);
                hub.snapshotter().takeNow();
            }
            assertThat(hub.journal().compactedThrough()).as("healed: nothing held").isGreaterThan(otherHealed);
        }
    }

    /** A partition never healed (its namespace dropped from the owner map) holds rows for a week, not for good. */
    @Test
    void theRowOfAPartitionNeverHealedHoldsRowsForAWeekOnly() throws Exception {
        try (DurableCoordination hub = open(new Retention(0))) {
            churn(hub, "a", 5);
            long partition = audit(hub, "multihub_partition", "{\"namespace\":\"gone\",\"contesting_hubs\":[\"hub-c\"]}");
            for (int i = 0; i < 3; i++) {
                hub.snapshotter().takeNow();
                churn(hub, "b" + i, 5);
            }
            hub.snapshotter().takeNow();
            assertThat(hub.journal().compactedThrough()).isEqualTo(partition - 1);
            clock.advance(Retention.PARTITION_HOLD_SECONDS + 60);
            for (int i = 0; i < 2; i++) {
                churn(hub, "c" + i, 5);
                hub.snapshotter().takeNow();
            }
            assertThat(hub.journal().compactedThrough()).as("a week later the row holds nothing")
                    .isGreaterThan(partition);
        }
    }

    /** Journals an audit record; returns its seq. */
    private static long audit(DurableCoordination hub, String kind, String payload) {
        var outcome = (dev.synapsehub.core.actor.Outcome.Decided) await(hub.actor().submit(Mutation.of(
                new dev.synapsehub.core.command.AuditRecordCommand("hub-a", kind, payload))));
        return outcome.committed().get(0).seq();
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            assertThat(latch.await(60, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void compactingEveryRowKeepsTheSequenceGoing() throws Exception {
        long last;
        try (DurableCoordination hub = open(new Retention(0))) {
            churn(hub, "x", 10);
            hub.snapshotter().takeNow();
            last = hub.journal().lastSeq();
            hub.snapshotter().takeNow(); // two snapshots at the same seq: the older covers every row
            assertThat(hub.journal().compactedThrough()).isEqualTo(last);
        }
        try (DurableCoordination hub = open(new Retention(0))) {
            assertThat(hub.journal().lastSeq()).as("from sqlite_sequence: no seq is ever reused").isEqualTo(last);
            var outcome = (dev.synapsehub.core.actor.Outcome.Decided) await(hub.actor().submit(Fixtures.claimOf("bob", "y")));
            assertThat(outcome.committed().get(0).seq()).isEqualTo(last + 1);
        }
    }
}
