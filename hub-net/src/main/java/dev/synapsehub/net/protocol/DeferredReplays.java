package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The mailbox replays the hub could not serve at once (§8.3): a registration that came while the
 * hub was busy (it binds its name as any other: answering it {@code busy} would say nothing was
 * done while the name is bound), and a replay whose journal reads were refused or failed. Their
 * clients send no second {@code mailbox: true}, and acking a later chat would move the watermark
 * past what was never replayed, so the hub retries by itself: checked on the connection's own
 * event loop, at growing intervals, for as long as that connection holds the name (a connection
 * that goes away takes its replay to its next registration). Never given up: a client told so
 * would keep its cursor where it is, but one that acked a live chat meanwhile (acks are
 * cumulative) has moved the watermark past the backlog, which its next registration would then
 * never replay. A connection has at most one replay waiting ({@link Session#deferMailboxReplay()}):
 * a later {@code mailbox: true} adds none. A failed journal read is logged and counted as a fault
 * once per wait, however many attempts it takes; each attempt is counted as a deferral.
 */
final class DeferredReplays {
    /** The first check, soon: most busy spells are short. */
    static final long FIRST_CHECK_MILLIS = 50;
    /** Checks back off to this interval while the hub stays busy. */
    static final long LONGEST_CHECK_MILLIS = 1000;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DeferredReplays.class);

    /** What a deferred replay does: its attempts. */
    interface Replay {
        /**
         * Attempts the replay {@code registration} asked for; one the hub cannot serve now hands its
         * cause (a busy refusal, a failed journal read) to {@code unserved}.
         *
         * @return completes once the attempt settled (served, answered, or handed to {@code unserved})
         */
        CompletableFuture<Void> replay(Session session, String name, ObjectNode registration,
                Consumer<Throwable> unserved);
    }

    private final Supplier<BusyReason> busy;
    private final SessionRegistry registry;
    private final Replay replay;
    private final HubMetrics metrics;

    /**
     * Replays through {@code replay} once {@code busy} says null (not busy); counts each
     * deferral, and the replays waiting, in {@code metrics}.
     */
    DeferredReplays(Supplier<BusyReason> busy, SessionRegistry registry, Replay replay, HubMetrics metrics) {
        this.busy = busy;
        this.registry = registry;
        this.replay = replay;
        this.metrics = metrics;
    }

    /**
     * Replays the mailbox {@code registration} asks for once the hub can serve it, unless a replay
     * of {@code session} waits already (that one replays the backlog).
     *
     * @param cause why it could not be served now: a busy refusal or a failed journal read; null
     *        when the hub was too busy to try
     */
    void defer(Session session, String name, ObjectNode registration, Throwable cause) {
        if (!session.deferMailboxReplay()) {
            LOG.debug("a mailbox replay of {} waits already; this one adds none", name);
            return;
        }
        new Wait(session, name, registration).unserved(cause, FIRST_CHECK_MILLIS);
    }

    /**
     * One connection's deferred replay, from its first deferral until served, or the connection no
     * longer holds the name. Its
     * steps run one after another (on the connection's loop and the outbox thread, each handing
     * the next over through a scheduler), never at once.
     */
    private final class Wait {
        private final Session session;
        private final String name;
        private final ObjectNode registration;
        private int attempts;
        private boolean journalReported;

        Wait(Session session, String name, ObjectNode registration) {
            this.session = session;
            this.name = name;
            this.registration = registration;
        }

        /** An attempt (or the registration) could not be served: reported, then checked again. */
        void unserved(Throwable cause, long afterMillis) {
            attempts++;
            metrics.mailboxReplaysDeferred.incrementAndGet();
            if (cause instanceof JournalReadException journal && !journalReported) {
                journalReported = true;
                metrics.faults.incrementAndGet();
                LOG.error("the mailbox replay of {} for {}: the journal could not be read; retried while the connection"
                        + " holds the name", name, session, journal.getCause());
            } else {
                LOG.debug("the mailbox replay of {} waits {} ms (attempt {})", name, afterMillis, attempts);
            }
            metrics.mailboxReplaysWaiting.incrementAndGet(); // until checked, below
            check(afterMillis);
        }

        private void check(long afterMillis) {
            try {
                session.channel().eventLoop().schedule(() -> {
                    metrics.mailboxReplaysWaiting.decrementAndGet();
                    if (session.closing() || !session.channel().isActive() || registry.session(name) != session) {
                        session.mailboxReplaySettled();
                        return; // gone, or superseded: the name's next registration replays
                    }
                    long next = Math.min(afterMillis * 2, LONGEST_CHECK_MILLIS);
                    if (busy.get() != null) {
                        metrics.mailboxReplaysWaiting.incrementAndGet();
                        check(next);
                        return;
                    }
                    attempt(next);
                }, afterMillis, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException stopping) {
                // the connection's loop is shutting down, and the connection with it
                metrics.mailboxReplaysWaiting.decrementAndGet();
                session.mailboxReplaySettled();
            }
        }

        private void attempt(long next) {
            AtomicBoolean again = new AtomicBoolean();
            replay.replay(session, name, registration, cause -> {
                again.set(true);
                unserved(cause, next);
            }).whenComplete((ignored, notRun) -> {
                if (!again.get()) {
                    session.mailboxReplaySettled(); // served, or answered (a fault, a refusal)
                }
            });
        }
    }
}
