package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.event.DeadLetterEscalationEvent;
import dev.synapsehub.core.messaging.ChatFrameRenderer;
import dev.synapsehub.core.reply.ChatReply;
import dev.synapsehub.core.reply.MailboxReply;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;

import java.util.function.Consumer;

/**
 * Chat and the mailbox (contract §5.1–5.3, §5.19–5.20, §8), as the pipeline reaches them: the
 * verbs ({@link ChatVerb}, {@link MailboxVerbs}, {@link ChatHistoryVerbs}) and the hooks of
 * binding, activity and heartbeats ({@link OwedReceipts}, {@link DeadLetterHints}). Never
 * blocks a Netty thread: state is reached through the actor, and the journal's history through
 * {@link HistoricalReads} (off the writer).
 */
public final class MessagingVerbs {
    private final ChatVerb chat;
    private final MailboxVerbs mailbox;
    private final ChatHistoryVerbs history;
    private final OwedReceipts owedReceipts;
    private final DeadLetterHints deadLetters;

    /**
     * The hub's settings the messaging parts follow, fixed when it starts.
     *
     * @param journaled true when the hub has a durable journal: seqs on chats, the mailbox, deferred receipts
     * @param privateDirectedMessages {@code --private-directed-messages}: a directed chat reaches only its addressees
     * @param maxFrameBytes the largest frame the hub sends or takes
     * @param liveness consume-liveness of directed chats' recipients (§8.6)
     */
    record Settings(boolean journaled, boolean privateDirectedMessages, int maxFrameBytes, LivenessSettings liveness) {
    }

    /**
     * The messaging parts, wired from what they use; {@code escalations} hears every dead-letter
     * escalation decided here (the extensions: a peer may own the target).
     */
    MessagingVerbs(VerbSupport support, CoordinationActor actor, HistoricalReads journalHistory,
            SessionRegistry registry, Outbox outbox, HubFrames frames, WireJson json, HubMetrics metrics,
            Consumer<DeadLetterEscalationEvent> escalations, Settings settings) {
        ReceiptFrames receipts = new ReceiptFrames(frames, json);
        this.owedReceipts = new OwedReceipts(support, receipts, actor, registry, outbox, frames, metrics,
                settings.journaled());
        this.deadLetters = new DeadLetterHints(support);
        this.chat = new ChatVerb(support, receipts, owedReceipts, deadLetters, registry, outbox, frames, json,
                escalations, settings);
        this.mailbox = new MailboxVerbs(support, receipts, owedReceipts, actor, journalHistory, registry, outbox,
                frames, json, metrics, settings.journaled());
        this.history = new ChatHistoryVerbs(support, actor, registry, outbox, frames, settings);
    }

    /** True for the verbs handled here. */
    public static boolean handles(String type) {
        return "chat".equals(type) || "ack".equals(type) || "history_request".equals(type)
                || "resume_request".equals(type);
    }

    /** Handles one request (on the connection's event loop). */
    public void handle(Request r) {
        switch (r.type()) {
            case "chat":
                chat.handle(r);
                break;
            case "ack":
                mailbox.ack(r);
                break;
            case "history_request":
                history.history(r);
                break;
            case "resume_request":
                history.resume(r);
                break;
            default:
                throw new IllegalArgumentException(r.type());
        }
    }

    /** The renderer of a chat request decided on another node (a mesh leader deciding for a follower). */
    ChatFrameRenderer chatRenderer(Request r) {
        return chat.renderer(r);
    }

    /**
     * A committed chat or ack of another mesh node's agent, published here: the chat to this
     * node's audience, and receipts to their senders if connected here (only the origin node,
     * which answers its own agent, keeps receipts owed to absent senders).
     */
    void publishCommitted(CommittedDecision d) {
        if (d.reply() instanceof ChatReply c) {
            chat.publishCommitted(d.request(), c, d.committed(), d.at());
        } else if (d.reply() instanceof MailboxReply m && m.deferredReceipt() != null) {
            owedReceipts.deliverDeferred(m.deferredReceipt(), d.at(), false);
        }
    }

    /**
     * A socket bound {@code name}: queue the receipts still owed to it (before its presence
     * update, which the caller queues afterwards on the same outbox thread), settle them, and
     * clear its dead-letter entry (§8.2).
     */
    public void onBound(Session session, String name) {
        owedReceipts.onBound(session, name);
        deadLetters.onBound(name);
    }

    /** A non-heartbeat, non-chat frame from {@code name}: clears its dead-letter entry if it may have one. */
    public void onActivity(String name) {
        deadLetters.onActivity(name);
    }

    /**
     * Heartbeat side effect (§8.3): with {@code mailbox: true}, advance the cursor watermark and
     * replay the directed backlog privately. Queued after the registration's presence update; a
     * replay the hub cannot serve now hands its cause to {@code unserved}, to be retried.
     */
    public void onHeartbeat(Session session, String name, ObjectNode frame,
            java.util.function.Consumer<Throwable> unserved) {
        mailbox.onHeartbeat(session, name, frame, unserved);
    }

    /** Another attempt of a deferred mailbox replay; completes once it settled. */
    java.util.concurrent.CompletableFuture<Void> replayDeferred(Session session, String name,
            ObjectNode registration, java.util.function.Consumer<Throwable> unserved) {
        return mailbox.replayDeferred(session, name, registration, unserved);
    }
}
