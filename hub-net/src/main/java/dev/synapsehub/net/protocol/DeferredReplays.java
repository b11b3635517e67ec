package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The mailbox replays of registrations that came while the hub was busy (§8.3): such a
 * registration binds its name as any other (answering it {@code busy} would say nothing was done
 * while the name is bound, and its client sends no second {@code mailbox: true}), and its replay
 * follows once the hub is no longer busy. Checked on the connection's own event loop, at growing
 * intervals, for as long as that connection holds the name: a connection that goes away takes its
 * replay to its next registration.
 */
final class DeferredReplays {
    /** The first check, soon: most busy spells are short. */
    static final long FIRST_CHECK_MILLIS = 50;
    /** Checks back off to this interval while the hub stays busy. */
    static final long LONGEST_CHECK_MILLIS = 1000;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DeferredReplays.class);

    private final Supplier<BusyReason> busy;
    private final SessionRegistry registry;
    private final MessagingVerbs messaging;
    private final HubMetrics metrics;

    /**
     * Replays through {@code messaging} once {@code busy} says null (not busy); counts each
     * deferral, and the replays waiting, in {@code metrics}.
     */
    DeferredReplays(Supplier<BusyReason> busy, SessionRegistry registry, MessagingVerbs messaging, HubMetrics metrics) {
        this.busy = busy;
        this.registry = registry;
        this.messaging = messaging;
        this.metrics = metrics;
    }

    /** Replays the mailbox {@code registration} asks for once the hub can serve it. */
    void defer(Session session, String name, ObjectNode registration) {
        LOG.debug("the hub is busy: the mailbox replay of {} waits", name);
        metrics.mailboxReplaysDeferred.incrementAndGet();
        metrics.mailboxReplaysWaiting.incrementAndGet(); // until replayed or given up, below
        check(session, name, registration, FIRST_CHECK_MILLIS);
    }

    private void check(Session session, String name, ObjectNode registration, long afterMillis) {
        try {
            session.channel().eventLoop().schedule(() -> {
                if (session.closing() || !session.channel().isActive() || registry.session(name) != session) {
                    metrics.mailboxReplaysWaiting.decrementAndGet();
                    return; // gone, or superseded: the name's next registration replays
                }
                if (busy.get() != null) {
                    check(session, name, registration, Math.min(afterMillis * 2, LONGEST_CHECK_MILLIS));
                    return;
                }
                metrics.mailboxReplaysWaiting.decrementAndGet();
                messaging.onHeartbeat(session, name, registration);
            }, afterMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            // the connection's loop is shutting down, and the connection with it
            metrics.mailboxReplaysWaiting.decrementAndGet();
        }
    }
}
