package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The mailbox replays the hub could not serve at once (§8.3): a registration that came while the
 * hub was busy (it binds its name as any other: answering it {@code busy} would say nothing was
 * done while the name is bound), and a replay whose journal reads were refused or failed. Their
 * clients send no second {@code mailbox: true}, and acking a later chat would move the watermark
 * past what was never replayed, so the hub retries by itself: checked on the connection's own
 * event loop, at growing intervals, for as long as that connection holds the name; a connection
 * that goes away takes its replay to its next registration.
 */
final class DeferredReplays {
    /** The first check, soon: most busy spells are short. */
    static final long FIRST_CHECK_MILLIS = 50;
    /** Checks back off to this interval while the hub stays busy. */
    static final long LONGEST_CHECK_MILLIS = 1000;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DeferredReplays.class);

    /** A mailbox replay attempt; one the hub cannot serve now runs {@code unserved} instead. */
    @FunctionalInterface
    interface Replay {
        void replay(Session session, String name, ObjectNode registration, Runnable unserved);
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

    /** Replays the mailbox {@code registration} asks for once the hub can serve it. */
    void defer(Session session, String name, ObjectNode registration) {
        defer(session, name, registration, FIRST_CHECK_MILLIS);
    }

    /** The replay {@code registration} asked for, refused again: checked again after {@code afterMillis}. */
    private void defer(Session session, String name, ObjectNode registration, long afterMillis) {
        LOG.debug("the mailbox replay of {} waits {} ms", name, afterMillis);
        metrics.mailboxReplaysDeferred.incrementAndGet();
        metrics.mailboxReplaysWaiting.incrementAndGet(); // until replayed or given up, below
        check(session, name, registration, afterMillis);
    }

    private void check(Session session, String name, ObjectNode registration, long afterMillis) {
        try {
            session.channel().eventLoop().schedule(() -> {
                if (session.closing() || !session.channel().isActive() || registry.session(name) != session) {
                    metrics.mailboxReplaysWaiting.decrementAndGet();
                    return; // gone, or superseded: the name's next registration replays
                }
                long next = Math.min(afterMillis * 2, LONGEST_CHECK_MILLIS);
                if (busy.get() != null) {
                    check(session, name, registration, next);
                    return;
                }
                metrics.mailboxReplaysWaiting.decrementAndGet();
                replay.replay(session, name, registration, () -> defer(session, name, registration, next));
            }, afterMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            // the connection's loop is shutting down, and the connection with it
            metrics.mailboxReplaysWaiting.decrementAndGet();
        }
    }
}
