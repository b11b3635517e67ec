package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * INV-EF-1 across a damaged journal: a claim row a restart skips as corrupt still stamped its
 * epoch, so the rebuilt epoch counter must not fall below it, whether the state is rebuilt by a
 * full replay or from a snapshot plus the tail that holds the damaged row.
 */
class EpochFloorRestartTest {
    @TempDir
    Path dir;

    private final Fixtures.ManualClock clock = new Fixtures.ManualClock(1_000);
    /** Snapshots only by hand, none at shutdown: the damaged row stays in the tail a start replays. */
    private static final SnapshotPolicy BY_HAND = new SnapshotPolicy(0, 0, 2, false);

    private Path db() {
        return dir.resolve("hub.db");
    }

    private DurableCoordination open() throws Exception {
        return DurableCoordination.open(db(), clock, CoordinationState::new, ActorSettings.DEFAULTS, BY_HAND);
    }

    static Stream<Arguments> damages() {
        return Stream.of(
                Arguments.of("truncated after the epoch", (UnaryOperator<String>) p -> p.substring(0, p.indexOf("\"version\""))),
                Arguments.of("another member mistyped", (UnaryOperator<String>) p -> p.replace("\"owner\":\"bob\"", "\"owner\":7")),
                Arguments.of("cut right after the epoch's digits, spaced",
                        (UnaryOperator<String>) p -> p.replaceFirst("\"epoch\":(\\d+).*", "\"epoch\" :\n $1")));
    }

    /** Claims T1, then T2 (a snapshot between them when asked); returns the highest epoch journaled. */
    private long twoClaims(boolean snapshotBetween) throws Exception {
        try (DurableCoordination hub = open()) {
            long first = granted(await(hub.actor().submit(Fixtures.claimOf("alice", "T1")))).claim().epoch();
            if (snapshotBetween) {
                hub.snapshotter().takeNow();
            }
            long second = granted(await(hub.actor().submit(Fixtures.claimOf("bob", "T2")))).claim().epoch();
            assertThat(second).isGreaterThan(first);
            return second;
        }
    }

    /** Rewrites the payload of T2's claim row in SQLite, as a damaged file would hold it. */
    private void damageT2(UnaryOperator<String> damage) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db())) {
            long seq;
            String payload;
            try (PreparedStatement s = c.prepareStatement(
                    "SELECT seq, payload FROM events WHERE kind = 'claim' AND payload LIKE '%\"T2\"%'");
                 ResultSet rs = s.executeQuery()) {
                assertThat(rs.next()).isTrue();
                seq = rs.getLong(1);
                payload = rs.getString(2);
            }
            try (PreparedStatement u = c.prepareStatement("UPDATE events SET payload = ? WHERE seq = ?")) {
                u.setString(1, damage.apply(payload));
                u.setLong(2, seq);
                assertThat(u.executeUpdate()).isEqualTo(1);
            }
        }
    }

    private void aThirdClaimOutnumbersEveryEpochJournaled(long highest, boolean fromSnapshot) throws Exception {
        try (DurableCoordination hub = open()) {
            assertThat(hub.recovery().snapshot() != null).as("started from a snapshot").isEqualTo(fromSnapshot);
            assertThat(hub.replay().corrupt()).as("the damaged row is skipped and counted").isEqualTo(1);
            assertThat(hub.replay().epochFloor()).isEqualTo(highest);
            long third = granted(await(hub.actor().submit(Fixtures.claimOf("carol", "T3")))).claim().epoch();
            assertThat(third).as("never an epoch issued before (INV-EF-1)").isGreaterThan(highest);
        }
    }

    @ParameterizedTest(name = "full replay, {0}")
    @MethodSource("damages")
    void aFullReplayKeepsTheEpochOfADamagedClaimRow(String name, UnaryOperator<String> damage) throws Exception {
        long highest = twoClaims(false);
        damageT2(damage);
        aThirdClaimOutnumbersEveryEpochJournaled(highest, false);
    }

    @ParameterizedTest(name = "snapshot and tail, {0}")
    @MethodSource("damages")
    void aSnapshotAndTailStartKeepsTheEpochOfADamagedTailRow(String name, UnaryOperator<String> damage) throws Exception {
        long highest = twoClaims(true);
        damageT2(damage);
        aThirdClaimOutnumbersEveryEpochJournaled(highest, true);
    }

    @Test
    void aReplayThroughTheJournalPortRaisesTheSameFloor() throws Exception {
        long highest = twoClaims(false);
        damageT2(p -> p.substring(0, p.indexOf("\"version\"")));
        try (SqliteJournal journal = SqliteJournal.open(db())) {
            CoordinationState state = new CoordinationState();
            state.replay(journal, clock.nowSeconds(), n -> { });
            assertThat(state.claims().epochCounter()).isEqualTo(highest);
        }
    }

    @Test
    void aDamagedClaimRowWithNoReadableEpochRaisesNothingAndIsStillCounted() throws Exception {
        twoClaims(false);
        damageT2(p -> p.replaceFirst("\"epoch\":\\d+", "\"epoch\":\"x\""));
        try (DurableCoordination hub = open()) {
            assertThat(hub.replay().corrupt()).isEqualTo(1);
            assertThat(hub.replay().epochFloor()).isZero();
        }
    }
}
