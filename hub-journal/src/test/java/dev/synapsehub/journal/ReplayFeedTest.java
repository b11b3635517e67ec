package dev.synapsehub.journal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static dev.synapsehub.journal.Fixtures.await;
import static dev.synapsehub.journal.Fixtures.granted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A replay feed's failures: a read that fails mid-batch still hands over the rows read before it,
 * a stage whose thread dies ends the replay instead of leaving the caller waiting, threads that
 * cannot be started are logged, and closing releases the statement even when the rows fail to close.
 */
class ReplayFeedTest {
    /** For a feed whose threads start: it never falls back to the caller's thread. */
    private static final Runnable NO_FALLBACK = () -> {
        throw new AssertionError("the feed fell back to the caller's thread");
    };

    @TempDir
    Path dir;

    private final EventCodec codec = new EventCodec();

    /** Ten claims: seq 1..10. */
    private Path tenClaims() throws Exception {
        Path db = dir.resolve("hub.db");
        DurableCoordination hub = DurableCoordination.open(db, new Fixtures.ManualClock(1_000));
        for (int i = 0; i < 10; i++) {
            granted(await(hub.actor().submit(Fixtures.claimOf("a", "t" + i))));
        }
        hub.actor().close();
        return db;
    }

    /** What the caller of a feed saw: the seqs of the rows, then the failure (if any). */
    private record Fed(List<Long> seqs, Exception failure) {
    }

    private static Fed drain(ReplayFeed feed) throws InterruptedException {
        List<Long> seqs = new ArrayList<>();
        while (true) {
            ReplayRows rows = feed.next();
            for (int i = 0; i < rows.size; i++) {
                assertThat(rows.event[i]).as("decoded").isNotNull();
                seqs.add(rows.seq[i]);
            }
            if (rows.last) {
                return new Fed(seqs, rows.failure);
            }
            feed.recycle(rows);
        }
    }

    /** Delegates to {@code target}, except the calls {@code hook} answers (non-null). */
    @SuppressWarnings("unchecked")
    private static <T> T intercept(Class<T> type, T target, Hook hook) {
        InvocationHandler h = (proxy, method, args) -> {
            Object answer = hook.answer(method.getName(), args);
            if (answer != null) {
                return answer;
            }
            try {
                return method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h);
    }

    private interface Hook {
        Object answer(String method, Object[] args) throws Throwable;
    }

    /** A connection whose replay query fails at its {@code failAt}-th row, and whose result set fails to close. */
    private static Connection failingAt(Connection real, int failAt, AtomicBoolean statementClosed) {
        return intercept(Connection.class, real, (m, args) -> {
            if (!m.equals("prepareStatement")) {
                return null;
            }
            PreparedStatement q = real.prepareStatement((String) args[0]);
            return intercept(PreparedStatement.class, q, (qm, qargs) -> {
                if (qm.equals("close")) {
                    statementClosed.set(true);
                    return null;
                }
                if (!qm.equals("executeQuery")) {
                    return null;
                }
                ResultSet rs = q.executeQuery();
                AtomicInteger rows = new AtomicInteger();
                return intercept(ResultSet.class, rs, (rm, rargs) -> {
                    if (rm.equals("next") && rows.incrementAndGet() == failAt) {
                        throw new SQLException("disk I/O error (injected)");
                    }
                    if (rm.equals("close")) {
                        rs.close();
                        throw new SQLException("close failed (injected)");
                    }
                    return null;
                });
            });
        });
    }

    @Test
    void aReadFailingMidBatchHandsOverTheRowsBeforeItThenTheFailure() throws Exception {
        Path db = tenClaims();
        try (Connection real = DriverManager.getConnection("jdbc:sqlite:" + db)) {
            // batches of 3: the 5th row fails, in the second batch, after row 4
            Connection c = failingAt(real, 5, new AtomicBoolean());
            Fed inline;
            try (ReplayFeed feed = ReplayFeed.inline(c, 0, codec, 3)) {
                inline = drain(feed);
            }
            Fed pipelined;
            try (ReplayFeed feed = ReplayFeed.pipelined(c, 0, codec, 3, 2, Thread::new, NO_FALLBACK)) {
                pipelined = drain(feed);
            }
            for (Fed fed : List.of(inline, pipelined)) {
                assertThat(fed.seqs()).containsExactly(1L, 2L, 3L, 4L);
                assertThat(fed.failure()).isInstanceOf(SQLException.class).hasMessageContaining("injected");
            }
        }
    }

    @Test
    void closingAnInlineFeedClosesTheStatementEvenWhenTheRowsFailToClose() throws Exception {
        Path db = tenClaims();
        AtomicBoolean statementClosed = new AtomicBoolean();
        try (Connection real = DriverManager.getConnection("jdbc:sqlite:" + db)) {
            Connection c = failingAt(real, Integer.MAX_VALUE, statementClosed);
            try (ReplayFeed feed = ReplayFeed.inline(c, 0, codec, 3)) {
                assertThat(drain(feed).seqs()).hasSize(10);
            }
        }
        assertThat(statementClosed).isTrue();
    }

    /** Makes the reader's ({@code which} 1) or the decoder's (2) thread die before it runs its stage. */
    private static ThreadFactory killing(int which) {
        AtomicInteger made = new AtomicInteger();
        return task -> made.incrementAndGet() == which
                ? new Thread(() -> {
                    throw new OutOfMemoryError("injected: the stage's thread dies outside its catch");
                })
                : new Thread(task);
    }

    @Test
    @Timeout(60) // without the liveness check the caller waits for ever
    void aReaderThreadThatDiesEndsTheReplayWithAFailure() throws Exception {
        Path db = tenClaims();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             ReplayFeed feed = ReplayFeed.pipelined(c, 0, codec, 3, 2, killing(1), NO_FALLBACK)) {
            Fed fed = drain(feed);
            assertThat(fed.seqs()).isEmpty();
            assertThat(fed.failure()).hasMessageContaining("journal-replay-read ended");
        }
    }

    @Test
    @Timeout(60)
    void aDecoderThreadThatDiesEndsTheReplayWithAFailure() throws Exception {
        Path db = tenClaims();
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            journal.replayPipeline(new SqliteJournal.ReplayPipeline(0, 3, 2));
            journal.replayThreads(killing(2));
            assertThatThrownBy(() -> journal.replayAfter(0, e -> { }))
                    .hasMessageContaining("journal-replay-decode ended");
        }
    }

    @Test
    void threadsThatCannotBeStartedAreLoggedWithTheCauseAndCountedOnce() throws Exception {
        Path db = tenClaims();
        int[] fellBack = {0};
        List<LogRecord> logged = new ArrayList<>();
        Handler capture = new Handler() {
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
        Logger logger = Logger.getLogger(ReplayFeed.class.getName());
        logger.addHandler(capture);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
             ReplayFeed feed = ReplayFeed.pipelined(c, 0, codec, 3, 2, task -> {
                 throw new IllegalStateException("no thread to be had");
             }, () -> fellBack[0]++)) {
            assertThat(drain(feed).seqs()).hasSize(10);
        } finally {
            logger.removeHandler(capture);
        }
        assertThat(fellBack[0]).as("counted once, as it is logged once").isEqualTo(1);
        assertThat(logged).singleElement().satisfies(r -> {
            assertThat(r.getLevel()).isEqualTo(Level.WARNING);
            assertThat(r.getThrown()).hasMessage("no thread to be had");
        });
    }

    @Test
    void aPipelineThatCouldNeverFinishIsRefused() {
        assertThatThrownBy(() -> new SqliteJournal.ReplayPipeline(0, 0, 8)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SqliteJournal.ReplayPipeline(0, 1_024, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SqliteJournal.ReplayPipeline(-1, 1_024, 8)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new SqliteJournal.ReplayPipeline(0, 1, 1).batchRows()).isEqualTo(1);
    }
}
