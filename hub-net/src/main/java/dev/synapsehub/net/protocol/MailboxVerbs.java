package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.command.AckCommand;
import dev.synapsehub.core.command.MailboxCursorCommand;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.AddressMatcher;
import dev.synapsehub.core.messaging.DirectedChat;
import dev.synapsehub.core.reply.MailboxReply;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import dev.synapsehub.net.wire.FieldCoercion;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The mailbox (contract §5.3, §8.3): the directed backlog replayed on a mailbox heartbeat, the
 * cursor watermark it advances, and {@code ack}, which may turn a sender's receipt deferred.
 */
final class MailboxVerbs {
    /** Contract §8.3: the replay scan reads the first 1000 chat events after since_seq. */
    static final int REPLAY_SCAN = 1000;
    /** Attempts of an ack the hub cannot serve (busy) before it is given up: about a minute of back-off. */
    static final int ACK_ATTEMPTS = 64;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(MailboxVerbs.class);
    private static final Set<String> CHAT = Set.of("chat");

    private final VerbSupport support;
    private final ReceiptFrames receipts;
    private final OwedReceipts owed;
    private final CoordinationActor actor;
    private final HistoricalReads history;
    private final SessionRegistry registry;
    private final Outbox outbox;
    private final HubFrames frames;
    private final WireJson json;
    private final boolean journaled;
    private final HubMetrics metrics;

    /**
     * The mailbox of a hub with a journal when {@code journaled} (otherwise there is none to
     * replay): directed chats no longer in memory are read from {@code history}, off the writer;
     * acks retried after a refusal are counted in {@code metrics}.
     */
    MailboxVerbs(VerbSupport support, ReceiptFrames receipts, OwedReceipts owed, CoordinationActor actor,
            HistoricalReads history, SessionRegistry registry, Outbox outbox, HubFrames frames, WireJson json,
            HubMetrics metrics, boolean journaled) {
        this.support = support;
        this.receipts = receipts;
        this.owed = owed;
        this.actor = actor;
        this.history = history;
        this.registry = registry;
        this.outbox = outbox;
        this.frames = frames;
        this.json = json;
        this.journaled = journaled;
        this.metrics = metrics;
    }

    /** The logical identity of {@code mailbox_for} (§3.6): own name, or the owner of an -rx sidecar. */
    static String mailboxIdentity(String name, JsonNode mailboxFor) {
        String v = FieldCoercion.text(mailboxFor);
        if (v == null) {
            return name;
        }
        v = PythonWhitespace.strip(v);
        if (v.isEmpty() || v.equals(name) || name.equals(v + "-rx") || name.equals(v + "-pane-rx")) {
            return v.isEmpty() ? name : v;
        }
        return name;
    }

    /**
     * Heartbeat side effect (§8.3): with {@code mailbox: true}, advance the cursor watermark and
     * replay the directed backlog privately. Queued after the registration's presence update. A
     * replay whose reads the hub cannot serve now (busy, a failed journal read) sends nothing and
     * hands its cause to {@code unserved}, which retries it: its client never asks again. While
     * an earlier replay of this connection waits to be retried, this one only advances the
     * watermark: the waiting one replays the backlog, once.
     */
    void onHeartbeat(Session session, String name, ObjectNode frame, Consumer<Throwable> unserved) {
        mailbox(session, name, frame, unserved, !session.mailboxReplayDeferred());
    }

    /**
     * Another attempt of the deferred replay {@code registration} asked for ({@link DeferredReplays}).
     *
     * @return completes once the attempt settled (served, answered, or handed to {@code unserved})
     */
    CompletableFuture<Void> replayDeferred(Session session, String name, ObjectNode registration,
            Consumer<Throwable> unserved) {
        return mailbox(session, name, registration, unserved, true);
    }

    private CompletableFuture<Void> mailbox(Session session, String name, ObjectNode frame,
            Consumer<Throwable> unserved, boolean replay) {
        JsonNode mailbox = frame.get("mailbox");
        if (mailbox == null || !mailbox.isBoolean() || !mailbox.booleanValue() || !journaled) {
            return CompletableFuture.completedFuture(null);
        }
        String identity = mailboxIdentity(name, frame.get("mailbox_for"));
        OptionalLong raw = FieldCoercion.tolerantLong(frame.get("since_seq"));
        long since = raw.isPresent() ? Math.max(0, raw.getAsLong()) : 0;
        if (since > 0) {
            // the next mailbox heartbeat carries its since_seq again, so a refusal only delays it
            support.submitUnanswered(new MailboxCursorCommand(name, identity, since),
                    "advancing the mailbox watermark of " + identity, () -> { });
        }
        if (!replay) {
            LOG.debug("the mailbox replay of {} waits to be retried already: this heartbeat adds none", identity);
            return CompletableFuture.completedFuture(null);
        }
        List<String> roles = registry.rolesOf(name);
        Request r = new Request(session, name, "heartbeat", "all", frame);
        return support.afterReadOrRetry(r, "replaying the mailbox of " + identity, backlog(identity, since), events -> {
            for (JournaledEvent je : events) {
                if (!(je.event() instanceof ChatEvent chat)) {
                    continue;
                }
                if (chat.channel() != null || !AddressMatcher.isDirected(chat.target())
                        || identity.equals(chat.sender()) || !AddressMatcher.addresses(chat.target(), identity, roles)) {
                    continue;
                }
                String text = replayed(chat.frameJson(), je.seq());
                if (text != null) {
                    outbox.send(session, text);
                }
            }
        }, unserved);
    }

    /**
     * The chat rows a replay after {@code since} considers, ascending: the contract's window (the
     * first {@link #REPLAY_SCAN} chat rows after {@code since}) and, when the window is full, the
     * rows of the chats still pending for {@code identity} beyond it (the core's projection, what
     * {@code mailbox_pending} counts), so a long absence does not leave part of the backlog behind
     * for the next ack to pass.
     */
    private CompletableFuture<List<JournaledEvent>> backlog(String identity, long since) {
        return history.readAfter(since, REPLAY_SCAN, CHAT).thenCompose(window -> {
            if (window.size() < REPLAY_SCAN) {
                return CompletableFuture.completedFuture(window); // the journal's end: nothing beyond
            }
            long end = window.get(window.size() - 1).seq();
            return actor.read(s -> s.messaging().mailboxPendingAfter(identity, end))
                    .thenCompose(pending -> history.readAt(pending, CHAT))
                    .thenApply(beyond -> {
                        List<JournaledEvent> all = new ArrayList<>(window.size() + beyond.size());
                        all.addAll(window);
                        all.addAll(beyond);
                        return all;
                    });
        });
    }

    /**
     * The stored frame minus {@code receipt_requested}, plus {@code replayed: true} and {@code seq}.
     * A chat that asked for a receipt was stored by the reference on its atomic receipt path with
     * sorted members; we reproduce that member order.
     */
    private String replayed(String frameJson, long seq) {
        JsonNode node = json.parse(frameJson);
        if (node == null || !node.isObject()) {
            return null;
        }
        ObjectNode f = (ObjectNode) node;
        boolean receipt = f.has("receipt_requested");
        f.remove("receipt_requested");
        ObjectNode out = receipt ? receipts.sorted(f) : f;
        out.put("replayed", true);
        out.put("seq", seq);
        return frames.write(out);
    }

    /**
     * {@code ack} (§5.3): advances the watermark; a pending chat's sender gets its deferred receipt.
     * An ack is never answered, a refused one neither: an ack the hub cannot serve now (its lookup
     * or its decision refused busy, a failed journal read or append) is tried again after a pause,
     * up to {@link #ACK_ATTEMPTS} times, each refusal counted; a failed journal read is logged
     * and counted as a fault once per ack, not once per attempt.
     */
    void ack(Request r) {
        JsonNode seqNode = r.get("seq");
        if (!journaled || seqNode == null || !seqNode.isIntegralNumber() || !seqNode.canConvertToLong()
                || seqNode.longValue() <= 0) {
            return; // silently ignored (§5.3)
        }
        long seq = seqNode.longValue();
        String identity = mailboxIdentity(r.sender(), r.get("mailbox_for"));
        List<String> roles = registry.rolesOf(r.sender());
        ack(r, identity, roles, seq, 1, false);
    }

    /** @param journalReported an earlier attempt of this ack reported its failed journal read */
    private void ack(Request r, String identity, List<String> roles, long seq, int attempt, boolean journalReported) {
        Runnable again = () -> ackLater(r, identity, roles, seq, attempt, journalReported);
        String what = "resolving the ack of seq " + seq;
        // pending in memory (committed state, through the writer), else from the journal's history
        CompletableFuture<DirectedChat> resolved = actor.read(s -> s.messaging().directedChat(seq).isPresent())
                .thenCompose(pending -> pending ? CompletableFuture.completedFuture(null)
                        : history.readAfter(seq - 1, 1, CHAT).thenApply(events -> storedChat(events, seq)));
        support.afterReadOrRetry(r, what, resolved, stored -> {
            AckCommand command = new AckCommand(r.sender(), identity, roles, seq, stored);
            support.submit(r, command, false, null, DecisionPublisher.typed(MailboxReply.class, (d, m) -> {
                if (m.deferredReceipt() != null) {
                    owed.deliverDeferred(m.deferredReceipt(), d.at(), true);
                }
            }, (d, refusal) -> { }), (request, settled) -> {
                if (settled instanceof Outcome.Refused refused && (refused.reason() == Outcome.Reason.BUSY
                        || refused.reason() == Outcome.Reason.JOURNAL_FAILED)) {
                    again.run();
                } else if (settled instanceof Outcome.Refused refused
                        && refused.reason() == Outcome.Reason.INTERNAL_FAULT) {
                    metrics.faults.incrementAndGet(); // the actor logged it with its batch
                }
                // shutting down or a failed writer: the hub stops, and the chat stays pending for a replay
            });
        }, cause -> ackLater(r, identity, roles, seq, attempt,
                support.reportUnserved(r, what, cause, journalReported)));
    }

    /** Schedules another attempt of an ack the hub could not serve, after a back-off. */
    private void ackLater(Request r, String identity, List<String> roles, long seq, int attempt,
            boolean journalReported) {
        metrics.unansweredRefusals.incrementAndGet();
        if (attempt >= ACK_ATTEMPTS) {
            LOG.warn("the ack of seq {} by {} was refused {} times; given up (the chat stays pending, replayed "
                    + "at the next mailbox registration)", seq, identity, attempt);
            return;
        }
        long delay = Math.min(DeferredReplays.FIRST_CHECK_MILLIS << Math.min(attempt - 1, 5),
                DeferredReplays.LONGEST_CHECK_MILLIS);
        try {
            outbox.executor().schedule(() -> ack(r, identity, roles, seq, attempt + 1, journalReported), delay,
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            LOG.debug("the hub stops: the ack of seq {} by {} is not retried", seq, identity);
        }
    }

    /** The chat stored at {@code seq} among {@code events} read from the journal, else null. */
    private static DirectedChat storedChat(List<JournaledEvent> events, long seq) {
        for (JournaledEvent e : events) {
            if (e.seq() == seq && e.event() instanceof ChatEvent c) {
                return new DirectedChat(seq, c.msgId(), c.sender(), c.target(), c.channel(), null);
            }
        }
        return null;
    }
}
