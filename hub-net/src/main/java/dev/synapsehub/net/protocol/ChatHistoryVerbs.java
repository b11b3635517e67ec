package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import dev.synapsehub.core.messaging.AddressMatcher;
import dev.synapsehub.core.messaging.ChatRecord;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.FieldCoercion;
import dev.synapsehub.net.wire.HubFrames;

import java.util.List;
import java.util.OptionalLong;
import java.util.function.Predicate;

/**
 * {@code history_request} and {@code resume_request} (contract §5.19–5.20): the chat history
 * the requester may see, bounded to one frame.
 */
final class ChatHistoryVerbs {
    private final VerbSupport support;
    private final CoordinationActor actor;
    private final SessionRegistry registry;
    private final Outbox outbox;
    private final HubFrames frames;
    private final MessagingVerbs.Settings settings;

    /** The history verbs; {@code registry} holds the roles a directed chat may address. */
    ChatHistoryVerbs(VerbSupport support, CoordinationActor actor, SessionRegistry registry, Outbox outbox,
            HubFrames frames, MessagingVerbs.Settings settings) {
        this.support = support;
        this.actor = actor;
        this.registry = registry;
        this.outbox = outbox;
        this.frames = frames;
        this.settings = settings;
    }

    /** Private directed mode: a directed chat is visible to its sender and the identities it addresses. */
    private Predicate<ChatRecord> visibleTo(String requester) {
        if (!settings.privateDirectedMessages()) {
            return rec -> true;
        }
        List<String> roles = registry.rolesOf(requester);
        String logical = AddressMatcher.logicalName(requester);
        return rec -> !rec.directed() || rec.sender().equals(requester) || rec.sender().equals(logical)
                || AddressMatcher.addresses(rec.target(), requester, roles)
                || AddressMatcher.addresses(rec.target(), logical, roles);
    }

    void history(Request r) {
        OptionalLong limit = FieldCoercion.tolerantLong(r.get("limit"));
        JsonNode raw = r.get("limit");
        Integer used = raw == null || raw.isNull() || raw.isBoolean() || limit.isEmpty() ? null
                : (int) Math.max(1, Math.min(Integer.MAX_VALUE, limit.getAsLong()));
        Predicate<ChatRecord> visible = visibleTo(r.sender());
        support.afterRead(r, "answering history_request", actor.read(s -> s.messaging().history(used, visible)),
                records -> {
            double at = support.now();
            ObjectNode f = frames.envelope(r.sender(), "history_snapshot", "History snapshot", at);
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
            outbox.send(r.session(), f);
        });
    }

    /**
     * The newest records whose frames fit in one frame of {@code --max-msg-kb} (at least the
     * newest one): without that bound a history of ten thousand large chats became a single
     * reply of gigabytes (issue 11's hostile run).
     */
    private List<ChatRecord> newestThatFit(List<ChatRecord> records) {
        return OneFrame.newest(records, ChatRecord::frameJson, replyBudget());
    }

    /** The oldest records that fit in one frame (at least one), for a resume that continues. */
    private List<ChatRecord> oldestThatFit(List<ChatRecord> records) {
        return OneFrame.oldest(records, ChatRecord::frameJson, replyBudget());
    }

    private long replyBudget() {
        return settings.maxFrameBytes() - ChatVerb.HUB_MEMBERS_BYTES;
    }

    void resume(Request r) {
        OptionalLong raw = FieldCoercion.tolerantLong(r.get("since"));
        long since = raw.isPresent() ? raw.getAsLong() : 0;
        Predicate<ChatRecord> visible = visibleTo(r.sender());
        support.afterRead(r, "answering resume_request", actor.read(s -> s.messaging().resume(since, visible)),
                records -> {
            double at = support.now();
            ObjectNode f = frames.envelope(r.sender(), "resume_snapshot", "Resume snapshot", at);
            f.put("since", since);
            ArrayNode messages = f.putArray("messages");
            List<ChatRecord> fit = oldestThatFit(records);
            fit.forEach(rec -> messages.addRawValue(new RawValue(rec.frameJson())));
            if (fit.size() < records.size()) {
                f.put("truncated", true); // resume again from the last msg_id
            }
            outbox.send(r.session(), f);
        });
    }
}
