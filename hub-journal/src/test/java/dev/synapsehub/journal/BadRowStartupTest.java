package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.LedgerProgressCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.ResourceOfferCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.stream.Stream;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * No journal row can stop the hub from starting: every kind of bad row (a null where the event
 * needs a value, a wrong type, a missing member, a non-finite number, garbage) is skipped,
 * counted in the replay stats and the journal's {@code corruptRows()} (what {@code /health}
 * reports), and the rest of the state is exactly that of a twin journal that never had them.
 */
class BadRowStartupTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_000);

    /** One bad row: its kind column and payload. */
    record Row(String kind, String payload) {
    }

    /**
     * A claim payload for live task t1 with one member replaced (or dropped when {@code value} is
     * null). Its epoch, 3, is one the first half issued: the floor a skipped claim row raises
     * (EpochFloorRestartTest) then leaves the state equal to the clean twin's.
     */
    private static String t1Claim(String member, String value) {
        StringBuilder sb = new StringBuilder("{");
        String[][] members = {{"task_id", "\"t1\""}, {"owner", "\"alice\""}, {"note", "\"\""}, {"claimed_at", "1000"},
                {"lease_expires_at", "99999"}, {"status", "\"working\""}, {"data_ref", "\"\""}, {"worktree", "\"wt-t1\""},
                {"paths", "[]"}, {"epoch", "3"}, {"version", "9"}, {"checkpoint", "\"hijack\""}, {"git", "null"},
                {"quota_principal", "\"alice\""}};
        for (String[] m : members) {
            String v = m[0].equals(member) ? value : m[1];
            if (v != null) {
                sb.append(sb.length() > 1 ? "," : "").append('"').append(m[0]).append("\":").append(v);
            }
        }
        return sb.append('}').toString();
    }

    static Stream<Arguments> badRows() {
        return Stream.of(
                Arguments.of("null where a value is needed", List.of(
                        new Row("claim", t1Claim("checkpoint", "null")),
                        new Row("task_update", t1Claim("note", "null")),
                        new Row("release", "{\"task_id\":null}"),
                        new Row("ledger_task", "{\"task_id\":\"b1\",\"title\":null,\"status\":\"open\",\"version\":5}"),
                        new Row("mailbox_watermark", "{\"identity\":null,\"through_seq\":1,\"source\":\"ack\"}"),
                        new Row("chat", "{\"type\":\"chat\",\"sender\":null,\"payload\":\"x\",\"msg_id\":1}"),
                        new Row("idempotency", "{\"key\":\"alice\\u0000claim\\u0000k1\",\"response\":null}"))),
                Arguments.of("wrong type", List.of(
                        new Row("claim", t1Claim("epoch", "\"77\"")),
                        new Row("checkpoint", t1Claim("paths", "\"src\"")),
                        new Row("release", "{\"task_id\":5}"),
                        new Row("resource", "{\"agent\":\"a\",\"kind\":\"gpu\",\"name\":\"g\",\"capacity\":\"lots\"}"),
                        new Row("ledger_progress", "{\"task_id\":\"b1\",\"author\":\"a\",\"kind\":\"note\",\"text\":[1]}"),
                        new Row("claim_denial", "{\"claimant\":\"x\",\"path_count\":\"many\"}"))),
                Arguments.of("missing member", List.of(
                        new Row("claim", t1Claim("task_id", null)),
                        new Row("handoff", t1Claim("owner", null)),
                        new Row("claim", t1Claim("epoch", null)),
                        new Row("release", "{}"),
                        new Row("ledger_task", "{\"title\":\"no id\"}"),
                        new Row("mailbox_watermark", "{\"through_seq\":5}"))),
                Arguments.of("not a finite number", List.of(
                        new Row("claim", t1Claim("lease_expires_at", "NaN")),
                        new Row("claim", t1Claim("lease_expires_at", "1e999")),
                        new Row("task_update", t1Claim("claimed_at", "-1e400")),
                        new Row("ledger_progress", "{\"task_id\":\"b1\",\"author\":\"a\",\"kind\":\"note\",\"text\":\"t\","
                                + "\"posted_at\":Infinity}"),
                        new Row("claim", t1Claim("epoch", "1e30")))),
                Arguments.of("garbage", List.of(
                        new Row("claim", "not json"),
                        new Row("release", "{\"task_id\":"),
                        new Row("checkpoint", ""),
                        new Row("chat", "[1,2,3]"),
                        new Row("ledger_task", "{\"task_id\":\"b1\"} trailing"),
                        new Row("claim", "\u0000\u00ff\ufffd"))));
    }

    private DurableCoordination open(Path db) throws Exception {
        return DurableCoordination.open(db, clock, CoordinationState::new, ActorSettings.DEFAULTS);
    }

    /** The first half of a history: live claims with a checkpoint, board, note, offer, a keyed claim. */
    private static void firstHalf(DurableCoordination hub) {
        granted(await(hub.actor().submit(Fixtures.claimOf("alice", "t1"))));
        granted(await(hub.actor().submit(Mutation.of(new CheckpointCommand("alice", "t1", "ck-1", null)))));
        granted(await(hub.actor().submit(Fixtures.claimOf("bob", "t2"))));
        granted(await(hub.actor().submit(Fixtures.keyedClaim("carol", "t3", "k1"))));
        await(hub.actor().submit(Mutation.of(LedgerTaskCommand.of("alice", "b1", "board task"))));
        await(hub.actor().submit(Mutation.of(new LedgerProgressCommand("alice", "b1", "note", "started"))));
        await(hub.actor().submit(Mutation.of(new ResourceOfferCommand("alice", "gpu", "g1", 2, "{\"mem\":16}"))));
    }

    /** The second half, after the bad rows: it must decide against the intact first half. */
    private static void secondHalf(DurableCoordination hub) {
        granted(await(hub.actor().submit(Mutation.of(new ReleaseCommand("bob", "t2", null)))));
        granted(await(hub.actor().submit(Mutation.of(new TaskUpdateCommand("alice", "t1", "working", "n", null, 1L, 1L)))));
        granted(await(hub.actor().submit(Fixtures.claimOf("dave", "t4"))));
    }

    /** Everything the two hubs must agree on (seq-independent: the dirty journal has more rows). */
    private static String authority(DurableCoordination hub, double now) {
        return await(hub.actor().read(s -> s.claims().snapshot(now) + "\n" + s.claims().epochCounter() + "\n"
                + s.claims().retainedCheckpoint("t1") + "\n" + s.idempotency().view() + "\n" + s.board().snapshot()
                + "\n" + s.resources().snapshot(now) + "\n" + s.messaging().history(null) + "\n"
                + s.messaging().watermarks()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badRows")
    void theHubStartsCountsTheBadRowsAndKeepsTheRestOfTheState(String name, List<Row> rows) throws Exception {
        Path clean = dir.resolve("clean.db");
        Path dirty = dir.resolve("dirty.db");
        for (Path db : List.of(clean, dirty)) {
            DurableCoordination hub = open(db);
            firstHalf(hub);
            hub.actor().close();
        }
        long firstBad;
        try (SqliteJournal j = SqliteJournal.open(dirty)) {
            firstBad = j.lastSeq() + 1;
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dirty);
             PreparedStatement insert = c.prepareStatement(
                     "INSERT INTO events(ts, kind, durability, payload) VALUES (1000.5, ?, 'FULL', ?)")) {
            for (Row row : rows) {
                insert.setString(1, row.kind());
                insert.setString(2, row.payload());
                insert.executeUpdate();
            }
        }

        DurableCoordination cleanHub = open(clean);
        DurableCoordination dirtyHub = open(dirty);
        try {
            assertThat(dirtyHub.replay().corrupt()).as("every bad row is counted").isEqualTo(rows.size());
            assertThat(dirtyHub.replay().firstCorruptSeq()).isEqualTo(firstBad);
            assertThat(dirtyHub.journal().corruptRows()).as("what /health reports").isEqualTo(rows.size());
            assertThat(dirtyHub.journal().firstCorruptSeq()).isEqualTo(firstBad);
            assertThat(cleanHub.journal().corruptRows()).isZero();
            secondHalf(cleanHub);
            secondHalf(dirtyHub);
        } finally {
            cleanHub.actor().close();
            dirtyHub.actor().close();
        }

        clock.advance(5);
        cleanHub = open(clean);
        dirtyHub = open(dirty);
        try {
            assertThat(dirtyHub.replay().corrupt()).isEqualTo(rows.size());
            String expected = authority(cleanHub, clock.nowSeconds());
            assertThat(authority(dirtyHub, clock.nowSeconds())).as("the rest of the state is intact").isEqualTo(expected);
            assertThat(expected).contains("ck-1").contains("b1").contains("g1").contains("t4");
        } finally {
            cleanHub.actor().close();
            dirtyHub.actor().close();
        }
    }
}
