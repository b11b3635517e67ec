package dev.synapsehub.net.protocol;

import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.reply.ChatReply;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.FieldCoercion;

import java.util.List;

/**
 * A member's chat in a private channel (A1.4, A1.5): to the channel's other members bound
 * here, on that socket only, without a hub {@code seq}; no echo, no broadcast.
 */
final class ChannelChat {
    private final Outbox outbox;
    private final SessionRegistry registry;
    private final ReceiptFrames receipts;

    ChannelChat(Outbox outbox, SessionRegistry registry, ReceiptFrames receipts) {
        this.outbox = outbox;
        this.registry = registry;
        this.receipts = receipts;
    }

    /** The trimmed channel of a chat request, or null for a public or directed chat. */
    static String channelOf(Request req) {
        String channel = FieldCoercion.text(req.frame().get("channel"));
        return PythonWhitespace.isBlank(channel) ? null : PythonWhitespace.strip(channel);
    }

    /** A member's channel chat decided here: to every other member bound now, then the receipt if asked. */
    void publish(Request req, ChatReply c, String channel, double at) {
        sendTo(c, c.verdict().recipients()); // one relay-log line per channel chat (A5.2)
        if (c.receiptRequested()) {
            outbox.send(req.session(), receipts.channel(c, channel, at));
        }
    }

    /**
     * A channel chat another mesh node took, here: to each of the channel's other members (as
     * the leader decided it) bound to this node, on that socket only; never to anyone else.
     */
    void publishCommitted(ChatReply c) {
        sendTo(c, c.channelMembers()); // this node's relay-log line for it (A5.2)
    }

    private void sendTo(ChatReply c, List<String> members) {
        outbox.mirror(c.frameJson());
        for (String member : members) {
            Session s = registry.session(member);
            if (s != null) {
                outbox.sendNamed(s, c.frameJson());
            }
        }
    }
}
