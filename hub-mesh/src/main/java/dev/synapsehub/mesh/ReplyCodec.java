package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.reply.ActivityReply;
import dev.synapsehub.core.reply.BoardTaskReply;
import dev.synapsehub.core.reply.CardReply;
import dev.synapsehub.core.reply.ChannelReply;
import dev.synapsehub.core.reply.ChatReply;
import dev.synapsehub.core.reply.MailboxReply;
import dev.synapsehub.core.reply.ProgressNoteReply;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.reply.ResourceOfferReply;

/** The core's replies as JSON (forwarded outcomes, replicated decisions). */
final class ReplyCodec {
    private final TypedRecords<Reply> records = new TypedRecords<>(Reply.class, Reply.Granted.class,
            Reply.AlreadyHeld.class, Reply.Denied.class, BoardTaskReply.class, ProgressNoteReply.class,
            ResourceOfferReply.class, ChatReply.class, MailboxReply.class, ActivityReply.class, ChannelReply.class,
            CardReply.class, dev.synapsehub.core.reply.CardRemovedReply.class,
            dev.synapsehub.core.reply.MemoryReply.class, dev.synapsehub.core.reply.IdentityPinReply.class,
            dev.synapsehub.core.reply.AuditRecordedReply.class);

    ObjectNode write(Reply reply) {
        return records.write(reply);
    }

    Reply read(JsonNode node) {
        return records.read(node);
    }
}
