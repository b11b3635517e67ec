package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.AckCommand;
import dev.synapsehub.core.command.AgentActivityCommand;
import dev.synapsehub.core.command.ChatCommand;
import dev.synapsehub.core.command.MailboxCursorCommand;
import dev.synapsehub.core.command.ReceiptsDeliveredCommand;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.DeadLetterEscalationEvent;
import dev.synapsehub.core.event.DeliveryReceiptDeferredEvent;
import dev.synapsehub.core.event.DeliveryReceiptExpiredEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.AddressMatcher;
import dev.synapsehub.core.messaging.ChatFrameRenderer;
import dev.synapsehub.core.messaging.ChatRecord;
import dev.synapsehub.core.messaging.DirectedChat;
import dev.synapsehub.core.messaging.OnlineAgent;
import dev.synapsehub.core.messaging.OwedReceipt;
import dev.synapsehub.core.messaging.ReceiptVerdict;
import dev.synapsehub.core.reply.ChatReply;
import dev.synapsehub.core.reply.MailboxReply;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.FieldCoercion;
import dev.synapsehub.net.wire.HubFrames;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Chat and the mailbox (contract §5.1–5.3, §5.19–5.20, §8): stamping, fan-out (broadcast or
 * directed-private), dead letters, receipts, liveness warnings, mailbox replay and acks,
 * history and resume. Never blocks a Netty thread: state is reached through the actor, and the
 * journal's history through {@link HistoricalReads} (off the writer).
 */
public final class MessagingVerbs {
    /** Contract §8.3: the replay scan reads the first 1000 chat events after since_seq. */
    public static final int REPLAY_SCAN = 1000;
    /** Waiter liveness window (§8.6, {@code --waiter-liveness-window}). */
    public static final double WAITER_WINDOW = LiveWaiters.WINDOW;
    /** Recipient reaction window (§8.6, {@code --recipient-liveness-window}). */
    public static final double REACTION_WINDOW = 90.0;
    /**
     * Receipt frames owed to offline senders, kept at most (§8.5): the core's outbox holds as
     * many ({@code MessagingLimits.pendingReceipts}, 1024 by default), evicting the oldest alike.
     */
    public static final int MAX_OWED_RECEIPTS = 1024;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(MessagingVerbs.class);
    private static final Set<String> CHAT = Set.of("chat");
    /** Room for the members the hub adds to a chat frame (times, ids, seq). */
    private static final int HUB_MEMBERS_BYTES = 256;

    private final HubContext hub;
    private final VerbSupport support;
    /**
     * The edge's copy of the core's receipt outbox, by sender: notification id to frame. The core
     * holds what survives a restart; this copy lets a registration queue what is owed before its
     * presence update without waiting for the writer. Guarded by itself.
     */
    private final Map<String, LinkedHashMap<String, String>> owedReceipts = new LinkedHashMap<>();
    private int owedCount;
    private final Set<String> deadLetterHints = new HashSet<>();

    public MessagingVerbs(HubContext hub) {
        this.hub = hub;
        this.support = new VerbSupport(hub);
        loadOwedReceipts();
    }

    /**
     * Takes up the receipts the core still owes (recovered from the journal) so that their
     * senders get them on their next registration (§8.5). A hub that cannot read them now logs
     * it once, counts it, and serves on: they stay owed in the core for the next start.
     */
    private void loadOwedReceipts() {
        if (!hub.journaled()) {
            return;
        }
        List<OwedReceipt> owed;
        try {
            owed = hub.actor().read(s -> s.messaging().owedReceipts()).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            hub.metrics().faults.incrementAndGet();
            LOG.error("the owed delivery receipts could not be read; they are sent after the next start", e);
            return;
        }
        for (OwedReceipt r : owed) {
            ObjectNode frame = r.event() instanceof DeliveryReceiptExpiredEvent x ? expiredReceipt(x, r.ts())
                    : deferredReceipt((DeliveryReceiptDeferredEvent) r.event(), r.ts());
            synchronized (owedReceipts) {
                owe(r.sender(), r.notificationId(), hub.frames().write(frame));
            }
        }
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
                chat(r);
                break;
            case "ack":
                ack(r);
                break;
            case "history_request":
                history(r);
                break;
            case "resume_request":
                resume(r);
                break;
            default:
                throw new IllegalArgumentException(r.type());
        }
    }

    // -------------------------------------------------------------------------------- chat

    private void chat(Request r) {
        ObjectNode frame = r.frame();
        String target = FieldCoercion.text(frame.get("target"));
        String channel = FieldCoercion.text(frame.get("channel"));
        if (channel != null && channel.strip().isEmpty()) {
            channel = null; // channel "" is an ordinary public chat (A1.4), echoed as sent
        }
        JsonNode ts = frame.get("timestamp");
        Number clientTs = ts != null && ts.isNumber() ? ts.numberValue() : null;
        JsonNode rawId = frame.get("client_msg_id");
        String clientMsgId = rawId != null && rawId.isTextual() ? rawId.textValue() : null;
        boolean receipt = FieldCoercion.truthy(frame.get("receipt_requested"));
        ObjectNode base = chatBase(frame);
        if (hub.json().write(base).getBytes(StandardCharsets.UTF_8).length + HUB_MEMBERS_BYTES
                > hub.config().maxFrameBytes()) {
            ObjectNode e = hub.frames().error(r.sender(), "The chat frame would exceed the frame size limit once"
                    + " stamped; send less.", support.now());
            e.put("error_code", "frame_too_large");
            hub.outbox().send(r.session(), e);
            return;
        }
        ChatFrameRenderer renderer = chatRenderer(base);
        double now = support.now();
        ChatCommand command = new ChatCommand(r.sender(), target, channel, clientTs, clientMsgId, receipt,
                onlineAgents(now), renderer);
        support.submit(r, command, false, null, (req, reply, stored, committed, at) -> {
            if (reply instanceof ChatReply c) {
                publishChat(req, c, committed, at);
            } else if (((Reply.Denied) reply).refusal() == Refusal.NOT_A_MEMBER) {
                // A1.4: a non-member (or unknown channel) gets this error, nothing is delivered
                String id = FieldCoercion.text(req.frame().get("channel")).strip();
                ObjectNode e = hub.frames().error(req.sender(), ((Reply.Denied) reply).message(), at);
                e.put("channel", id);
                hub.outbox().send(req.session(), e);
            } else {
                Reply.Denied d = (Reply.Denied) reply;
                ObjectNode e = hub.frames().error(req.sender(), d.message(), at);
                e.put("error_code", d.refusal().name().toLowerCase(java.util.Locale.ROOT));
                hub.outbox().send(req.session(), e);
            }
        });
    }

    /** The chat frame as fanned out: the client's frame minus hub-owned members, stamped. */
    /** Rendered here, on the event loop: the writer only joins strings (ChatTemplate). */
    private ChatFrameRenderer chatRenderer(ObjectNode base) {
        return ChatTemplate.of(base, hub.json(), hub.frames().hubId());
    }

    /** The renderer of a chat request decided on another node (a mesh leader deciding for a follower). */
    ChatFrameRenderer chatRenderer(Request r) {
        return chatRenderer(chatBase(r.frame()));
    }

    /**
     * A copy of a chat frame without the hub-owned members, which a client cannot pre-set. A
     * client's own {@code seq} stays (contract A6, A10.2): a streamed reply numbers its frames
     * with it; a journaled hub replaces it with the journal seq on live delivery only.
     */
    private static ObjectNode chatBase(ObjectNode frame) {
        ObjectNode base = frame.deepCopy();
        base.remove(List.of("client_timestamp", "client_msg_id", "hub_id", "msg_id", "replayed", "auth"));
        return base;
    }

    private static long chatSeq(List<JournaledEvent> committed) {
        for (JournaledEvent e : committed) {
            if (e.event() instanceof ChatEvent) {
                return e.seq();
            }
        }
        return 0;
    }

    private void publishChat(Request req, ChatReply c, List<JournaledEvent> committed, double at) {
        String channel = channelOf(req);
        if (channel != null) {
            publishChannelChat(req, c, channel, at);
            return;
        }
        long seq = chatSeq(committed);
        boolean journaled = hub.journaled() && seq > 0;
        String text = journaled ? withSeq(req, c.frameJson(), seq) : c.frameJson();
        ReceiptVerdict v = c.verdict();
        boolean receiptFirst = c.receiptRequested() && !v.matchedRecipients().isEmpty() && v.recipients().isEmpty()
                && c.directed();
        ObjectNode receipt = c.receiptRequested() ? immediateReceipt(c, journaled ? seq : 0, at) : null;
        if (receiptFirst) {
            hub.outbox().send(req.session(), receipt);
        }
        fanOut(req, c, text, at);
        hub.extensions().deadLetterEscalated(c.escalation()); // decided here: a peer may own the target (§11.5)
        if (c.directed() && !v.matchedRecipients().isEmpty()) {
            List<String> passive = new ArrayList<>();
            v.wakeCapabilities().forEach((name, cap) -> {
                if ("passive".equals(cap)) {
                    passive.add(name);
                }
            });
            if (!v.staleRecipients().isEmpty() || !passive.isEmpty()) {
                String says = passive.isEmpty()
                        ? "Some recipients may not read this soon: " + String.join(", ", v.matchedRecipients())
                        : String.join(", ", passive) + " reached only a passive receiver — socket delivery does not"
                        + " prove an agent pane was woken; a directed message may sit unread";
                ObjectNode w = hub.frames().envelope(req.sender(), "recipient_liveness_warning", says, at);
                w.put("message_target", messageTarget(c.target()));
                w.put("message_id", c.stamp().msgId());
                w.put("delivered", v.delivered());
                w.put("dead_lettered", v.deadLettered());
                w.put("reason", v.reason());
                HubFrames.putStrings(w, "matched_recipients", v.matchedRecipients());
                HubFrames.putStrings(w, "stale_recipients", v.staleRecipients());
                HubFrames.putStrings(w, "passive_recipients", passive);
                ObjectNode wake = w.putObject("recipient_wake_capabilities");
                v.wakeCapabilities().forEach(wake::put);
                hub.outbox().send(req.session(), w);
            }
        }
        if (receipt != null && !receiptFirst) {
            hub.outbox().send(req.session(), receipt);
        }
        if (journaled) {
            deliverExpired(c, at, true);
        }
    }

    /**
     * What others see of a chat: the frame to its audience, then any escalation. {@code
     * req.session()} is null for a chat of another mesh node's agent.
     */
    private void fanOut(Request req, ChatReply c, String text, double at) {
        ReceiptVerdict v = c.verdict();
        if (v.deadLettered() && c.target() != null) {
            synchronized (deadLetterHints) {
                if (deadLetterHints.size() < 4096) {
                    deadLetterHints.addAll(AddressMatcher.parts(c.target()));
                }
            }
        }
        if (hub.config().privateDirectedMessages() && c.directed()) {
            hub.outbox().mirror(text); // the relay log has a line for it, as for a broadcast (A5.2)
            Set<String> matched = new HashSet<>(v.matchedRecipients());
            for (Session s : hub.registry().audience()) {
                String name = s.name();
                if (s == req.session() || (name != null && (matched.contains(AddressMatcher.logicalName(name))
                        || matched.contains(name)))) {
                    hub.outbox().send(s, text);
                }
            }
        } else {
            hub.outbox().broadcast(text, req.session());
        }
        DeadLetterEscalationEvent esc = c.escalation();
        if (esc != null) {
            ObjectNode f = hub.frames().envelope("all", "dead_letter_escalation",
                    esc.count() + " undelivered messages for " + esc.target(), at);
            f.put("escalation_target", esc.target());
            f.put("escalation_count", esc.count());
            f.put("last_sender", esc.lastSender());
            hub.outbox().broadcast(f);
        }
    }

    private void deliverExpired(ChatReply c, double at, boolean owe) {
        for (DeliveryReceiptExpiredEvent e : c.expiredReceipts()) {
            deliverNamed(e.sender(), OwedReceipt.notificationId(e.messageSeq(), true), expiredReceipt(e, at), owe);
        }
    }

    /**
     * A committed chat or ack of another mesh node's agent, published here: the chat to this
     * node's audience, and receipts to their senders if connected here (only the origin node,
     * which answers its own agent, keeps receipts owed to absent senders).
     */
    void publishCommitted(Request req, Reply reply, List<JournaledEvent> committed, double at) {
        if (reply instanceof ChatReply c && channelOf(req) != null) {
            sendToBoundMembers(c);
        } else if (reply instanceof ChatReply c) {
            long seq = chatSeq(committed);
            boolean journaled = hub.journaled() && seq > 0;
            fanOut(req, c, journaled ? withSeq(req, c.frameJson(), seq) : c.frameJson(), at);
            if (journaled) {
                deliverExpired(c, at, false);
            }
        } else if (reply instanceof MailboxReply m && m.deferredReceipt() != null) {
            deliverNamed(m.deferredReceipt().sender(), OwedReceipt.notificationId(m.deferredReceipt().messageSeq(), false),
                    deferredReceipt(m.deferredReceipt(), at), false);
        }
    }

    /** The trimmed channel of a chat request, or null for a public or directed chat. */
    private static String channelOf(Request req) {
        String channel = FieldCoercion.text(req.frame().get("channel"));
        return channel == null || channel.isBlank() ? null : channel.strip();
    }

    /**
     * A member's channel chat (A1.4, A1.5): to every other member bound now, on that socket
     * only, without a hub {@code seq}; then the receipt if asked. No echo, no broadcast.
     */
    private void publishChannelChat(Request req, ChatReply c, String channel, double at) {
        sendToMembers(c);
        if (c.receiptRequested()) {
            ReceiptVerdict v = c.verdict();
            String payload = v.delivered() ? "delivered to " + labelled(v.recipients(), v.wakeCapabilities())
                    : "delivery failed: no online recipient matched " + channel;
            ObjectNode f = hub.frames().envelope(c.sender(), "delivery_receipt", payload, at);
            f.put("message_target", channel);
            f.put("message_id", c.stamp().msgId());
            f.put("delivered", v.delivered());
            f.put("deferred", false);
            HubFrames.putStrings(f, "recipients", v.recipients());
            HubFrames.putStrings(f, "matched_recipients", v.matchedRecipients());
            HubFrames.putStrings(f, "stale_recipients", List.of());
            f.put("reason", v.reason());
            f.put("dead_lettered", false);
            ObjectNode wake = f.putObject("recipient_wake_capabilities");
            v.wakeCapabilities().forEach(wake::put);
            if (c.stamp().clientMsgId() != null) {
                f.put("client_msg_id", c.stamp().clientMsgId());
            }
            hub.outbox().send(req.session(), sorted(f));
        }
    }

    private void sendToMembers(ChatReply c) {
        hub.outbox().mirror(c.frameJson()); // one relay-log line per channel chat (A5.2)
        for (String member : c.verdict().recipients()) {
            Session s = hub.registry().session(member);
            if (s != null) {
                hub.outbox().send(s, c.frameJson());
            }
        }
    }

    /**
     * A channel chat another mesh node took, here: to each of the channel's other members (as
     * the leader decided it) bound to this node, on that socket only; never to anyone else.
     */
    private void sendToBoundMembers(ChatReply c) {
        hub.outbox().mirror(c.frameJson()); // this node's relay-log line for it (A5.2)
        for (String member : c.channelMembers()) {
            Session s = hub.registry().session(member);
            if (s != null) {
                hub.outbox().send(s, c.frameJson());
            }
        }
    }

    /** The stored frame with the journal {@code seq}: in place of the client's own, else appended. */
    private String withSeq(Request req, String frameJson, long seq) {
        if (req.frame().has("seq")) {
            JsonNode node = hub.json().parse(frameJson);
            if (node != null && node.isObject()) {
                ObjectNode f = (ObjectNode) node;
                f.put("seq", seq);
                return hub.frames().write(f);
            }
        }
        String f = frameJson.strip();
        return f.substring(0, f.length() - 1) + (f.length() > 2 ? "," : "") + "\"seq\":" + seq + "}";
    }

    private static String messageTarget(String target) {
        return target == null || target.isEmpty() ? "all" : target;
    }

    /** Delivery receipt members are emitted in sorted order, as the reference hub does. */
    private ObjectNode sorted(ObjectNode f) {
        ObjectNode out = hub.json().object();
        TreeMap<String, JsonNode> members = new TreeMap<>();
        f.fields().forEachRemaining(e -> members.put(e.getKey(), e.getValue()));
        members.forEach(out::set);
        return out;
    }

    /** Recipients with their wake label, as contract A7 writes them ({@code unknown} adds none). */
    static String labelled(List<String> recipients, Map<String, String> wake) {
        List<String> out = new ArrayList<>(recipients.size());
        for (String name : recipients) {
            String label = switch (wake.getOrDefault(name, "unknown")) {
                case "direct" -> " (direct agent)";
                case "passive" -> " (passive receiver)";
                case "pane_bridge" -> " (pane bridge)";
                default -> "";
            };
            out.add(name + label);
        }
        return String.join(", ", out);
    }

    private ObjectNode immediateReceipt(ChatReply c, long seq, double at) {
        ReceiptVerdict v = c.verdict();
        String payload = v.delivered() ? "delivered to " + labelled(v.recipients(), v.wakeCapabilities())
                : "no_online_recipient".equals(v.reason())
                ? "delivery failed: no online recipient matched " + messageTarget(c.target())
                : "delivery failed: " + v.reason().replace('_', ' ') + " for " + messageTarget(c.target());
        ObjectNode f = hub.frames().envelope(c.sender(), "delivery_receipt", payload, at);
        f.put("message_target", messageTarget(c.target()));
        f.put("message_id", c.stamp().msgId());
        if (seq > 0) {
            f.put("message_seq", seq);
        }
        f.put("delivered", v.delivered());
        f.put("deferred", false);
        HubFrames.putStrings(f, "recipients", v.recipients());
        HubFrames.putStrings(f, "matched_recipients", v.matchedRecipients());
        HubFrames.putStrings(f, "stale_recipients", v.staleRecipients());
        f.put("reason", v.reason());
        f.put("dead_lettered", v.deadLettered());
        ObjectNode wake = f.putObject("recipient_wake_capabilities");
        v.wakeCapabilities().forEach(wake::put);
        if (c.stamp().clientMsgId() != null) {
            f.put("client_msg_id", c.stamp().clientMsgId());
        }
        if (seq > 0 && c.directed()) {
            f.put("receipt_notification_id", "delivery-receipt:" + seq + ":"
                    + (v.delivered() ? "immediate_delivered" : "pending"));
        }
        return sorted(f);
    }

    private ObjectNode deferredReceipt(DeliveryReceiptDeferredEvent e, double at) {
        ObjectNode f = hub.frames().envelope(e.sender(), "delivery_receipt",
                "delivered to " + String.join(", ", e.recipients()) + " on reconnect", at);
        f.put("message_target", messageTarget(e.target()));
        f.put("message_id", e.messageId());
        f.put("message_seq", e.messageSeq());
        f.put("delivered", true);
        f.put("deferred", true);
        HubFrames.putStrings(f, "recipients", e.recipients());
        if (e.clientMsgId() != null) {
            f.put("client_msg_id", e.clientMsgId());
        }
        f.put("receipt_notification_id", "delivery-receipt:" + e.messageSeq() + ":deferred");
        return sorted(f);
    }

    private ObjectNode expiredReceipt(DeliveryReceiptExpiredEvent e, double at) {
        ObjectNode f = hub.frames().envelope(e.sender(), "delivery_receipt",
                "no acknowledgement before the pending-receipt window evicted it", at);
        f.put("message_target", messageTarget(e.target()));
        f.put("message_id", e.messageId());
        f.put("message_seq", e.messageSeq());
        f.put("delivered", false);
        f.put("deferred", true);
        f.put("expired", true);
        f.put("reason", e.reason());
        f.putArray("recipients");
        if (e.clientMsgId() != null) {
            f.put("client_msg_id", e.clientMsgId());
        }
        f.put("receipt_notification_id", "delivery-receipt:" + e.messageSeq() + ":expired");
        return sorted(f);
    }

    /**
     * Sends to the socket bound to {@code name} and settles the receipt in the core's outbox,
     * or, when {@code owe}, keeps it for its next registration (§8.5). The bound socket is looked
     * up under the same lock {@link #onBound} drains under, so a receipt is either sent here or
     * drained there, never left behind by a registration racing this.
     */
    private void deliverNamed(String name, String id, ObjectNode frame, boolean owe) {
        String text = hub.frames().write(frame);
        Session s;
        synchronized (owedReceipts) {
            s = hub.registry().session(name);
            if (s == null) {
                if (owe) {
                    owe(name, id, text);
                }
                return;
            }
        }
        hub.outbox().send(s, text);
        settle(name, List.of(id));
    }

    /** Keeps {@code text} owed to {@code name}, dropping the oldest beyond the bound. Holds the lock. */
    private void owe(String name, String id, String text) {
        if (owedReceipts.computeIfAbsent(name, k -> new LinkedHashMap<>()).put(id, text) == null) {
            owedCount++;
        }
        while (owedCount > MAX_OWED_RECEIPTS) {
            Iterator<Map.Entry<String, LinkedHashMap<String, String>>> it = owedReceipts.entrySet().iterator();
            Map.Entry<String, LinkedHashMap<String, String>> eldest = it.next();
            Iterator<String> ids = eldest.getValue().keySet().iterator();
            ids.next();
            ids.remove();
            owedCount--;
            if (eldest.getValue().isEmpty()) {
                it.remove();
            }
        }
    }

    /**
     * The receipts {@code ids} were written to {@code name}'s socket: they leave the core's
     * outbox, so neither a later registration nor a restart sends them again. Refused (busy),
     * they stay owed in the core and are sent once more after a restart, with the same id the
     * sender dedupes on.
     */
    private void settle(String name, List<String> ids) {
        if (!hub.journaled() || ids.isEmpty()) {
            return;
        }
        support.submitUnanswered(new ReceiptsDeliveredCommand(name, ids), "settling the receipts sent to " + name,
                () -> { });
    }

    /**
     * A socket bound {@code name}: queue the receipts still owed to it (before its presence
     * update, which the caller queues afterwards on the same outbox thread), settle them, and
     * clear its dead-letter entry (§8.2).
     */
    public void onBound(Session session, String name) {
        LinkedHashMap<String, String> owed;
        synchronized (owedReceipts) {
            owed = owedReceipts.remove(name);
            if (owed != null) {
                owedCount -= owed.size();
            }
        }
        if (owed != null) {
            owed.values().forEach(text -> hub.outbox().sendInOrder(session, text));
            settle(name, List.copyOf(owed.keySet()));
        }
        synchronized (deadLetterHints) {
            deadLetterHints.remove(name);
        }
        clearDeadLetter(name);
    }

    /** A non-heartbeat, non-chat frame from {@code name}: clears its dead-letter entry if it may have one. */
    public void onActivity(String name) {
        boolean hinted;
        synchronized (deadLetterHints) {
            hinted = deadLetterHints.remove(name);
        }
        if (hinted) {
            clearDeadLetter(name);
        }
    }

    /** Clears {@code name}'s dead-letter entry; refused (busy), the hint comes back so its next frame retries. */
    private void clearDeadLetter(String name) {
        support.submitUnanswered(new AgentActivityCommand(name), "clearing the dead letter of " + name, () -> {
            synchronized (deadLetterHints) {
                if (deadLetterHints.size() < 4096) {
                    deadLetterHints.add(name);
                }
            }
        });
    }

    /** Every bound connection with its roles, wake capability and consume-liveness (§8.6). */
    List<OnlineAgent> onlineAgents(double now) {
        // one pass over the bound names, lookups for liveness: no table is copied per chat
        SessionRegistry registry = hub.registry();
        List<SessionRegistry.Presence> bound = registry.presence();
        List<OnlineAgent> out = new ArrayList<>(bound.size());
        for (SessionRegistry.Presence p : bound) {
            String logical = AddressMatcher.logicalName(p.name());
            out.add(new OnlineAgent(p.name(), p.roles(), consumeLive(logical, now, registry), p.wake()));
        }
        return out;
    }

    private static boolean consumeLive(String logical, double now, SessionRegistry registry) {
        if (LiveWaiters.has(logical, now, registry::lastSeenIfBound)) {
            return true;
        }
        Double reaction = registry.lastReactionIfBound(logical);
        return reaction != null && now - reaction <= REACTION_WINDOW;
    }

    // ----------------------------------------------------------------------------- mailbox

    /** The logical identity of {@code mailbox_for} (§3.6): own name, or the owner of an -rx sidecar. */
    static String mailboxIdentity(String name, JsonNode mailboxFor) {
        String v = FieldCoercion.text(mailboxFor);
        if (v == null) {
            return name;
        }
        v = v.strip();
        if (v.isEmpty() || v.equals(name) || name.equals(v + "-rx") || name.equals(v + "-pane-rx")) {
            return v.isEmpty() ? name : v;
        }
        return name;
    }

    /**
     * Heartbeat side effect (§8.3): with {@code mailbox: true}, advance the cursor watermark and
     * replay the directed backlog privately. Queued after the registration's presence update.
     */
    public void onHeartbeat(Session session, String name, ObjectNode frame) {
        JsonNode mailbox = frame.get("mailbox");
        if (mailbox == null || !mailbox.isBoolean() || !mailbox.booleanValue() || !hub.journaled()) {
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
        List<String> roles = hub.registry().rolesOf(name);
        Request r = new Request(session, name, "heartbeat", "all", frame);
        support.afterRead(r, "replaying the mailbox of " + identity, hub.history().readAfter(since, REPLAY_SCAN, CHAT),
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
                    hub.outbox().send(session, text);
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
        JsonNode node = hub.json().parse(frameJson);
        if (node == null || !node.isObject()) {
            return null;
        }
        ObjectNode f = (ObjectNode) node;
        boolean receipt = f.has("receipt_requested");
        f.remove("receipt_requested");
        ObjectNode out = receipt ? sorted(f) : f;
        out.put("replayed", true);
        out.put("seq", seq);
        return hub.frames().write(out);
    }

    private void ack(Request r) {
        JsonNode seqNode = r.get("seq");
        if (!hub.journaled() || seqNode == null || !seqNode.isIntegralNumber() || !seqNode.canConvertToLong()
                || seqNode.longValue() <= 0) {
            return; // silently ignored (§5.3)
        }
        long seq = seqNode.longValue();
        String identity = mailboxIdentity(r.sender(), r.get("mailbox_for"));
        List<String> roles = hub.registry().rolesOf(r.sender());
        // pending in memory (committed state, through the writer), else from the journal's history
        CompletableFuture<DirectedChat> resolved = hub.actor().read(s -> s.messaging().directedChat(seq).isPresent())
                .thenCompose(pending -> pending ? CompletableFuture.completedFuture(null)
                        : hub.history().readAfter(seq - 1, 1, CHAT).thenApply(events -> storedChat(events, seq)));
        support.afterRead(r, "resolving the ack of seq " + seq, resolved, stored -> {
                    AckCommand command = new AckCommand(r.sender(), identity, roles, seq, stored);
                    support.submit(r, command, false, null, (req, reply, st, committed, at) -> {
                        if (reply instanceof MailboxReply m && m.deferredReceipt() != null) {
                            deliverNamed(m.deferredReceipt().sender(),
                                    OwedReceipt.notificationId(m.deferredReceipt().messageSeq(), false),
                                    deferredReceipt(m.deferredReceipt(), at), true);
                        }
                    });
                });
    }

    /** The chat stored at {@code seq} among {@code events} read from the journal, else null. */
    private static DirectedChat storedChat(List<JournaledEvent> events, long seq) {
        for (JournaledEvent e : events) {
            if (e.seq() == seq && e.event() instanceof ChatEvent) {
                ChatEvent c = (ChatEvent) e.event();
                return new DirectedChat(seq, c.msgId(), c.sender(), c.target(), c.channel(), null);
            }
        }
        return null;
    }

    // ----------------------------------------------------------------------- history/resume

    /** Private directed mode: a directed chat is visible to its sender and the identities it addresses. */
    private Predicate<ChatRecord> visibleTo(String requester) {
        if (!hub.config().privateDirectedMessages()) {
            return rec -> true;
        }
        List<String> roles = hub.registry().rolesOf(requester);
        String logical = AddressMatcher.logicalName(requester);
        return rec -> !rec.directed() || rec.sender().equals(requester) || rec.sender().equals(logical)
                || AddressMatcher.addresses(rec.target(), requester, roles)
                || AddressMatcher.addresses(rec.target(), logical, roles);
    }

    private void history(Request r) {
        OptionalLong limit = FieldCoercion.tolerantLong(r.get("limit"));
        JsonNode raw = r.get("limit");
        Integer used = raw == null || raw.isNull() || raw.isBoolean() || limit.isEmpty() ? null
                : (int) Math.max(1, Math.min(Integer.MAX_VALUE, limit.getAsLong()));
        Predicate<ChatRecord> visible = visibleTo(r.sender());
        support.afterRead(r, "answering history_request", hub.actor().read(s -> s.messaging().history(used, visible)),
                records -> {
            double at = support.now();
            ObjectNode f = hub.frames().envelope(r.sender(), "history_snapshot", "History snapshot", at);
            ArrayNode history = f.putArray("history");
            List<ChatRecord> fit = newestThatFit(records);
            fit.forEach(rec -> history.addRawValue(new RawValue(rec.frameJson())));
            if (fit.size() < records.size()) {
                f.put("truncated", true);
            }
            if (used == null) {
                f.put("requested_limit", "all");
            } else {
                f.put("requested_limit", used);
            }
            hub.outbox().send(r.session(), f);
        });
    }

    /**
     * The newest records whose frames fit in one frame of {@code --max-msg-kb} (at least the
     * newest one): without that bound a history of ten thousand large chats became a single
     * reply of gigabytes (issue 11's hostile run).
     */
    private List<ChatRecord> newestThatFit(List<ChatRecord> records) {
        long budget = replyBudget();
        int from = records.size();
        while (from > 0 && (from == records.size() || budget >= records.get(from - 1).frameJson().length())) {
            budget -= records.get(from - 1).frameJson().length() + 1;
            from--;
        }
        return records.subList(from, records.size());
    }

    /** The oldest records that fit in one frame (at least one), for a resume that continues. */
    private List<ChatRecord> oldestThatFit(List<ChatRecord> records) {
        long budget = replyBudget();
        int to = 0;
        while (to < records.size() && (to == 0 || budget >= records.get(to).frameJson().length())) {
            budget -= records.get(to).frameJson().length() + 1;
            to++;
        }
        return records.subList(0, to);
    }

    private long replyBudget() {
        return hub.config().maxFrameBytes() - HUB_MEMBERS_BYTES;
    }

    private void resume(Request r) {
        OptionalLong raw = FieldCoercion.tolerantLong(r.get("since"));
        long since = raw.isPresent() ? raw.getAsLong() : 0;
        Predicate<ChatRecord> visible = visibleTo(r.sender());
        support.afterRead(r, "answering resume_request", hub.actor().read(s -> s.messaging().resume(since, visible)),
                records -> {
            double at = support.now();
            ObjectNode f = hub.frames().envelope(r.sender(), "resume_snapshot", "Resume snapshot", at);
            f.put("since", since);
            ArrayNode messages = f.putArray("messages");
            List<ChatRecord> fit = oldestThatFit(records);
            fit.forEach(rec -> messages.addRawValue(new RawValue(rec.frameJson())));
            if (fit.size() < records.size()) {
                f.put("truncated", true); // resume again from the last msg_id
            }
            hub.outbox().send(r.session(), f);
        });
    }
}
