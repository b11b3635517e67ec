package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.messaging.ChatFrameRenderer;
import dev.synapsehub.core.reply.ChatReply;
import dev.synapsehub.core.reply.MailboxReply;
import dev.synapsehub.net.session.Session;


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

    MessagingVerbs(HubContext hub, VerbSupport support) {
        ReceiptFrames receipts = new ReceiptFrames(hub.frames(), hub.json());
        this.owedReceipts = new OwedReceipts(hub, support, receipts);
        this.deadLetters = new DeadLetterHints(support);
        this.chat = new ChatVerb(hub, support, receipts, owedReceipts, deadLetters);
        this.mailbox = new MailboxVerbs(hub, support, receipts, owedReceipts);
        this.history = new ChatHistoryVerbs(hub, support);
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
     * replay the directed backlog privately. Queued after the registration's presence update.
     */
    public void onHeartbeat(Session session, String name, ObjectNode frame) {
        mailbox.onHeartbeat(session, name, frame);
    }
}
