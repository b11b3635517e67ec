package dev.synapsehub.journal;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A replay read and decoded on threads of its own hands the caller exactly the events, in
 * exactly the order, and counts exactly the corrupt and unknown rows of a replay on one thread,
 * across batch boundaries; and it leaves no thread behind, even when the sink fails.
 */
class PipelinedReplayTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_000);

    /** Tiny batches and few of them, so that every stage waits for the others many times. */
    private static final SqliteJournal.ReplayPipeline TINY = new SqliteJournal.ReplayPipeline(0, 3, 2);

    /** Claims, updates and releases, with bad and unknown rows in the middle and at the end. */
    private Path history() throws Exception {
        Path db = dir.resolve("hub.db");
        DurableCoordination hub = DurableCoordination.open(db, clock);
        for (int i = 0; i < 40; i++) {
            granted(await(hub.actor().submit(Fixtures.claimOf("a" + i % 3, "t" + i))));
            granted(await(hub.actor().submit(Mutation.of(
                    new TaskUpdateCommand("a" + i % 3, "t" + i, "working", "n" + i, null, null, null)))));
        }
        hub.actor().close();
        insertBadRows(db);
        hub = DurableCoordination.open(db, clock);
        for (int i = 0; i < 40; i += 2) {
            granted(await(hub.actor().submit(Mutation.of(new ReleaseCommand("a" + i % 3, "t" + i, null)))));
        }
        hub.actor().close();
        insertBadRows(db);
        return db;
    }

    private static void insertBadRows(Path db) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             PreparedStatement insert = c.prepareStatement(
                     "INSERT INTO events(ts, kind, durability, payload) VALUES (?, ?, 'FULL', ?)")) {
            Object[][] rows = {
                    {1000.5, "claim", "not json"},
                    {1000.5, "release", "{\"task_id\":null}"},
                    {1000.5, "a_kind_from_the_future", "{}"},
                    {1000.5, "release", new byte[] {'{', (byte) 0xC0, (byte) 0xAF, '}'}},
                    {1000.5, "checkpoint", "\u0000\u00ff\ufffd"},
                    {Double.POSITIVE_INFINITY, "release", "{\"task_id\":\"t3\"}"},
                    {1000.5, "claim", ""},
            };
            for (Object[] row : rows) {
                insert.setDouble(1, (Double) row[0]);
                insert.setString(2, (String) row[1]);
                if (row[2] instanceof byte[] blob) {
                    insert.setBytes(3, blob);
                } else {
                    insert.setString(3, (String) row[2]);
                }
                insert.executeUpdate();
            }
        }
    }

    private record Replayed(List<JournaledEvent> events, ReplayStats stats, String image) {
    }

    private static Replayed replay(Path db, SqliteJournal.ReplayPipeline pipeline, Set<String> threads)
            throws Exception {
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            journal.replayPipeline(pipeline);
            List<JournaledEvent> events = new ArrayList<>();
            CoordinationState state = new CoordinationState();
            journal.replayAfter(0, e -> {
                events.add(e);
                state.apply(e);
                Thread.getAllStackTraces().keySet().forEach(t -> threads.add(t.getName()));
            });
            ReplayStats s = journal.lastReplay();
            return new Replayed(events, new ReplayStats(s.rows(), s.replayed(), s.skippedUnknown(), s.corrupt(),
                    s.firstCorruptSeq(), 0, s.epochFloor()), state.claims().snapshot(2_000) + "/" + state.claims().epochCounter());
        }
    }

    @Test
    void aPipelinedReplayHandsOverTheSameEventsInTheSameOrderAndCountsTheSameBadRows() throws Exception {
        Path db = history();
        Set<String> inlineThreads = new HashSet<>();
        Set<String> pipelinedThreads = new HashSet<>();
        Replayed inline = replay(db, SqliteJournal.ReplayPipeline.INLINE, inlineThreads);
        Replayed pipelined = replay(db, TINY, pipelinedThreads);

        assertThat(pipelined.events()).extracting(JournaledEvent::seq).isSorted();
        assertThat(pipelined.events()).containsExactlyElementsOf(inline.events());
        assertThat(pipelined.stats()).isEqualTo(inline.stats());
        assertThat(pipelined.image()).isEqualTo(inline.image());
        assertThat(inline.stats().corrupt()).as("two copies of six bad rows").isEqualTo(12);
        assertThat(inline.stats().skippedUnknown()).isEqualTo(2);
        assertThat(inline.stats().replayed()).isEqualTo(100);
        assertThat(inline.stats().rows()).isEqualTo(114);
        assertThat(pipelinedThreads).as("rows read and decoded beside the caller")
                .contains("journal-replay-read", "journal-replay-decode");
        assertThat(inlineThreads).doesNotContain("journal-replay-read", "journal-replay-decode");
        assertThat(liveReplayThreads()).isEmpty();
    }

    @Test
    void aSinkThatFailsStopsTheStagesAndTheJournalStaysUsable() throws Exception {
        Path db = history();
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            journal.replayPipeline(TINY);
            int[] seen = {0};
            assertThatThrownBy(() -> journal.replayAfter(0, e -> {
                if (++seen[0] == 7) {
                    throw new OutOfMemoryError("a failure the replay does not count as a bad row");
                }
            })).isInstanceOf(OutOfMemoryError.class);
            assertThat(liveReplayThreads()).isEmpty();

            List<JournaledEvent> again = new ArrayList<>();
            journal.replayAfter(0, again::add);
            assertThat(again).hasSize(100);
            assertThat(journal.lastReplay().corrupt()).isEqualTo(12);
        }
    }

    @Test
    void aReplayAfterASeqStartsAfterIt() throws Exception {
        Path db = history();
        Set<String> ignored = new HashSet<>();
        List<JournaledEvent> all = replay(db, SqliteJournal.ReplayPipeline.INLINE, ignored).events();
        long after = all.get(50).seq();
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            journal.replayPipeline(TINY);
            List<JournaledEvent> tail = new ArrayList<>();
            journal.replayAfter(after, tail::add);
            assertThat(tail).containsExactlyElementsOf(all.subList(51, all.size()));
        }
    }

    @Test
    void withoutThreadsToBeHadTheReplayRunsOnTheCallersThread() throws Exception {
        Path db = history();
        List<JournaledEvent> expected = replay(db, SqliteJournal.ReplayPipeline.INLINE, new HashSet<>()).events();
        int[] refused = {0};
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            journal.replayPipeline(TINY);
            journal.replayThreads(task -> {
                if (++refused[0] == 2) { // the second of the two: the first is made, then left unstarted
                    throw new IllegalStateException("no thread to be had");
                }
                return new Thread(task);
            });
            List<JournaledEvent> events = new ArrayList<>();
            journal.replayAfter(0, events::add);
            assertThat(events).containsExactlyElementsOf(expected);
            assertThat(journal.lastReplay().corrupt()).isEqualTo(12);
            assertThat(journal.replayThreadFallbacks()).as("the fallback is counted, once").isEqualTo(1);
        }
        assertThat(refused[0]).isEqualTo(2);
        assertThat(liveReplayThreads()).isEmpty();
    }

    private static List<String> liveReplayThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("journal-replay-")).toList();
    }
}
