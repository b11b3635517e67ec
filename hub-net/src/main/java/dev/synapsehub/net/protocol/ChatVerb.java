package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.command.ChatCommand;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.DeadLetterEscalationEvent;
import dev.synapsehub.core.event.DeliveryReceiptExpiredEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.AddressMatcher;
import dev.synapsehub.core.messaging.ChatFrameRenderer;
import dev.synapsehub.core.messaging.OnlineAgent;
import dev.synapsehub.core.messaging.RecipientSet;
import dev.synapsehub.core.messaging.ReceiptVerdict;
import dev.synapsehub.core.reply.ChatReply;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.FieldCoercion;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The {@code chat} verb (contract §5.1, §8): stamped by the hub, fanned out (broadcast or
 * directed-private) or to a channel's members, with its receipt, liveness warning, dead-letter
 * escalation and the receipts its decision expired.
 */
final class ChatVerb {
    /** Room for the members the hub adds to a chat frame (times, ids, seq). */
    static final int HUB_MEMBERS_BYTES = 256;

    private final VerbSupport support;
    private final ReceiptFrames receipts;
    private final OwedReceipts owed;
    private final DeadLetterHints deadLetters;
    private final SessionRegistry registry;
    private final Outbox outbox;
    private final HubFrames frames;
    private final WireJson json;
    private final Consumer<DeadLetterEscalationEvent> escalations;
    private final MessagingVerbs.Settings settings;
    private final RecipientLiveness liveness;
    private final ChannelChat channels;

    /**
     * The chat verb; {@code registry} is the audience and the recipients' liveness, and
     * {@code escalations} hears every escalation decided here (a peer may own the target).
     */
    ChatVerb(VerbSupport support, ReceiptFrames receipts, OwedReceipts owed, DeadLetterHints deadLetters,
            SessionRegistry registry, Outbox outbox, HubFrames frames, WireJson json,
            Consumer<DeadLetterEscalationEvent> escalations, MessagingVerbs.Settings settings) {
        this.support = support;
        this.receipts = receipts;
        this.owed = owed;
        this.deadLetters = deadLetters;
        this.registry = registry;
        this.outbox = outbox;
        this.frames = frames;
        this.json = json;
        this.escalations = escalations;
        this.settings = settings;
        this.liveness = new RecipientLiveness(registry, frames, settings.liveness());
        this.channels = new ChannelChat(outbox, registry, receipts);
    }

    void handle(Request r) {
        ObjectNode frame = r.frame();
        String target = FieldCoercion.text(frame.get("target"));
        String channel = FieldCoercion.text(frame.get("channel"));
        if (channel != null && PythonWhitespace.isBlank(channel)) {
            channel = null; // channel "" is an ordinary public chat (A1.4), echoed as sent
        }
        JsonNode ts = frame.get("timestamp");
        Number clientTs = ts != null && ts.isNumber() ? ts.numberValue() : null;
        JsonNode rawId = frame.get("client_msg_id");
        String clientMsgId = rawId != null && rawId.isTextual() ? rawId.textValue() : null;
        boolean receipt = FieldCoercion.truthy(frame.get("receipt_requested"));
        ObjectNode base = chatBase(frame);
        if (json.write(base).getBytes(StandardCharsets.UTF_8).length + HUB_MEMBERS_BYTES
                > settings.maxFrameBytes()) {
            ObjectNode e = frames.error(r.sender(), "The chat frame would exceed the frame size limit once"
                    + " stamped; send less.", support.now());
            e.put("error_code", "frame_too_large");
            outbox.send(r.session(), e);
            return;
        }
        ChatFrameRenderer renderer = renderer(base);
        double now = support.now();
        long boundBefore = registry.binds(); // read before the recipients are: a later bind is checked at fan-out
        ChatCommand command = new ChatCommand(r.sender(), target, channel, clientTs, clientMsgId, receipt,
                liveness.onlineAgents(now), renderer);
        support.submit(r, command, false, null, DecisionPublisher.typed(ChatReply.class,
                (d, c) -> publish(d.request(), c, d.committed(), d.at(), boundBefore), this::refused));
    }

    /** A refused chat: answered privately, nothing delivered. */
    private void refused(CommittedDecision d, Reply.Denied refusal) {
        Request req = d.request();
        ObjectNode e = frames.error(req.sender(), refusal.message(), d.at());
        if (refusal.refusal() == Refusal.NOT_A_MEMBER) {
            // A1.4: a non-member (or unknown channel) gets this error, naming the channel
            e.put("channel", PythonWhitespace.strip(FieldCoercion.text(req.frame().get("channel"))));
        } else {
            e.put("error_code", refusal.refusal().name().toLowerCase(java.util.Locale.ROOT));
        }
        outbox.send(req.session(), e);
    }

    /** Rendered here, on the event loop: the writer only joins strings (ChatTemplate). */
    private ChatFrameRenderer renderer(ObjectNode base) {
        return ChatTemplate.of(base, json, frames.hubId());
    }

    /** The renderer of a chat request decided on another node (a mesh leader deciding for a follower). */
    ChatFrameRenderer renderer(Request r) {
        return renderer(chatBase(r.frame()));
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

    /**
     * This node's agent's chat, decided: to its audience, then the sender's warning and receipt.
     * Its recipients were resolved against the connections of the first {@code boundBefore} binds.
     */
    private void publish(Request req, ChatReply c, List<JournaledEvent> committed, double at, long boundBefore) {
        String channel = ChannelChat.channelOf(req);
        if (channel != null) {
            channels.publish(req, c, channel, at);
            return;
        }
        long seq = chatSeq(committed);
        boolean journaled = settings.journaled() && seq > 0;
        String text = journaled ? withSeq(req, c.frameJson(), seq) : c.frameJson();
        ReceiptVerdict v = c.verdict();
        boolean receiptFirst = c.receiptRequested() && !v.matchedRecipients().isEmpty() && v.recipients().isEmpty()
                && c.directed();
        ObjectNode receipt = c.receiptRequested() ? receipts.immediate(c, journaled ? seq : 0, at) : null;
        if (receiptFirst) {
            outbox.send(req.session(), receipt);
        }
        fanOut(req, c, text, at, boundBefore);
        escalations.accept(c.escalation()); // decided here: a peer may own the target (§11.5)
        ObjectNode warning = liveness.warning(req.sender(), c, at);
        if (warning != null) {
            outbox.send(req.session(), warning);
        }
        if (receipt != null && !receiptFirst) {
            outbox.send(req.session(), receipt);
        }
        if (journaled) {
            deliverExpired(c, at, true);
        }
    }

    /**
     * A committed chat of another mesh node's agent, published here: to this node's audience,
     * and expired receipts to their senders if connected here (only the origin node, which
     * answers its own agent, keeps receipts owed to absent senders).
     */
    void publishCommitted(Request req, ChatReply c, List<JournaledEvent> committed, double at) {
        if (ChannelChat.channelOf(req) != null) {
            channels.publishCommitted(c);
            return;
        }
        long seq = chatSeq(committed);
        boolean journaled = settings.journaled() && seq > 0;
        // resolved on the sender's node, whose connections are not these: no bind here is checked anew
        fanOut(req, c, journaled ? withSeq(req, c.frameJson(), seq) : c.frameJson(), at, Long.MAX_VALUE);
        if (journaled) {
            deliverExpired(c, at, false);
        }
    }

    /**
     * What others see of a chat: the frame to its audience, then any escalation. {@code
     * req.session()} is null for a chat of another mesh node's agent. In private directed mode a
     * connection that bound after the chat's recipients were resolved (its bind order above
     * {@code boundBefore}) gets it when the chat addresses it: registering meanwhile, its mailbox
     * replay may have read the journal before this chat committed, so only this can deliver it.
     */
    private void fanOut(Request req, ChatReply c, String text, double at, long boundBefore) {
        ReceiptVerdict v = c.verdict();
        if (v.deadLettered() && c.target() != null) {
            deadLetters.deadLettered(c.target());
        }
        if (settings.privateDirectedMessages() && c.directed()) {
            outbox.mirror(text); // the relay log has a line for it, as for a broadcast (A5.2)
            Set<String> matched = new HashSet<>(v.matchedRecipients());
            for (Session s : registry.audience()) {
                String name = s.name();
                if (s == req.session() || (name != null && (matched.contains(AddressMatcher.logicalName(name))
                        || matched.contains(name) || (s.bindOrder() > boundBefore && addressedNow(c, s, name))))) {
                    outbox.sendNamed(s, text); // a recipient still being admitted gets it after its welcome
                }
            }
        } else {
            outbox.broadcast(text, req.session());
        }
        DeadLetterEscalationEvent esc = c.escalation();
        if (esc != null) {
            ObjectNode f = frames.envelope("all", "dead_letter_escalation",
                    esc.count() + " undelivered messages for " + esc.target(), at);
            f.put("escalation_target", esc.target());
            f.put("escalation_count", esc.count());
            f.put("last_sender", esc.lastSender());
            outbox.broadcast(f);
        }
    }

    /**
     * Whether {@code session}, bound to {@code name} after {@code c}'s recipients were resolved, is
     * one of them by the core's rule ({@link RecipientSet}): its logical owner's bound connections
     * (owner and sidecars, roles merged) as they are now, the sender and its sidecars excluded.
     */
    private boolean addressedNow(ChatReply c, Session session, String name) {
        if (registry.session(name) != session) {
            return false; // no longer holds its name
        }
        String logical = AddressMatcher.logicalName(name);
        List<OnlineAgent> owner = new ArrayList<>(3);
        for (String bound : List.of(logical, logical + "-rx", logical + "-pane-rx")) {
            Session s = registry.session(bound);
            if (s != null) {
                owner.add(new OnlineAgent(bound, s.roles(), true, s.wake()));
            }
        }
        return RecipientSet.resolve(c.target(), c.sender(), owner).matched().contains(logical);
    }

    private void deliverExpired(ChatReply c, double at, boolean owe) {
        for (DeliveryReceiptExpiredEvent e : c.expiredReceipts()) {
            owed.deliverExpired(e, at, owe);
        }
    }

    /** The stored frame with the journal {@code seq}: in place of the client's own, else appended. */
    private String withSeq(Request req, String frameJson, long seq) {
        if (req.frame().has("seq")) {
            JsonNode node = json.parse(frameJson);
            if (node != null && node.isObject()) {
                ObjectNode f = (ObjectNode) node;
                f.put("seq", seq);
                return frames.write(f);
            }
        }
        String f = frameJson.strip();
        return f.substring(0, f.length() - 1) + (f.length() > 2 ? "," : "") + "\"seq\":" + seq + "}";
    }
}
