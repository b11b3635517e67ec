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
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import dev.synapsehub.net.wire.FieldCoercion;

import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The mailbox (contract §5.3, §8.3): the directed backlog replayed on a mailbox heartbeat, the
 * cursor watermark it advances, and {@code ack}, which may turn a sender's receipt deferred.
 */
final class MailboxVerbs {
    /** Contract §8.3: the replay scan reads the first 1000 chat events after since_seq. */
    static final int REPLAY_SCAN = 1000;
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

    /**
     * The mailbox of a hub with a journal when {@code journaled} (otherwise there is none to
     * replay): directed chats no longer in memory are read from {@code history}, off the writer.
     */
    MailboxVerbs(VerbSupport support, ReceiptFrames receipts, OwedReceipts owed, CoordinationActor actor,
            HistoricalReads history, SessionRegistry registry, Outbox outbox, HubFrames frames, WireJson json,
            boolean journaled) {
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
     * replay the directed backlog privately. Queued after the registration's presence update.
     */
    void onHeartbeat(Session session, String name, ObjectNode frame) {
        JsonNode mailbox = frame.get("mailbox");
        if (mailbox == null || !mailbox.isBoolean() || !mailbox.booleanValue() || !journaled) {
            return;
        }
        String identity = mailboxIdentity(name, frame.get("mailbox_for"));
        OptionalLong raw = FieldCoercion.tolerantLong(frame.get("since_seq"));
        long since = raw.isPresent() ? Math.max(0, raw.getAsLong()) : 0;
        if (since > 0) {
            // the next mailbox heartbeat carries its since_seq again, so a refusal only delays it
            support.submitUnanswered(new MailboxCursorCommand(name, identity, since),
                    "advancing the mailbox watermark of " + identity, () -> { });
        }
        List<String> roles = registry.rolesOf(name);
        Request r = new Request(session, name, "heartbeat", "all", frame);
        support.afterRead(r, "replaying the mailbox of " + identity, history.readAfter(since, REPLAY_SCAN, CHAT),
                events -> {
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

    /** {@code ack} (§5.3): advances the watermark; a pending chat's sender gets its deferred receipt. */
    void ack(Request r) {
        JsonNode seqNode = r.get("seq");
        if (!journaled || seqNode == null || !seqNode.isIntegralNumber() || !seqNode.canConvertToLong()
                || seqNode.longValue() <= 0) {
            return; // silently ignored (§5.3)
        }
        long seq = seqNode.longValue();
        String identity = mailboxIdentity(r.sender(), r.get("mailbox_for"));
        List<String> roles = registry.rolesOf(r.sender());
        // pending in memory (committed state, through the writer), else from the journal's history
        CompletableFuture<DirectedChat> resolved = actor.read(s -> s.messaging().directedChat(seq).isPresent())
                .thenCompose(pending -> pending ? CompletableFuture.completedFuture(null)
                        : history.readAfter(seq - 1, 1, CHAT).thenApply(events -> storedChat(events, seq)));
        support.afterRead(r, "resolving the ack of seq " + seq, resolved, stored -> {
                    AckCommand command = new AckCommand(r.sender(), identity, roles, seq, stored);
                    support.submit(r, command, false, null, DecisionPublisher.typed(MailboxReply.class, (d, m) -> {
                        if (m.deferredReceipt() != null) {
                            owed.deliverDeferred(m.deferredReceipt(), d.at(), true);
                        }
                    }, (d, refusal) -> { })); // an ack is never answered (§5.3), a refused one neither
                });
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
