package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.channel.Channel;
import dev.synapsehub.core.command.ChannelCommand;
import dev.synapsehub.core.reply.ChannelReply;
import dev.synapsehub.net.wire.AgentNames;
import dev.synapsehub.net.wire.FieldCoercion;
import dev.synapsehub.net.wire.HubFrames;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Private channel verbs (contract A1.2, A1.3): create, invite, join and leave are decided by the
 * writer and journaled; list and history are reads of committed state. Every reply is private
 * to the requester; nobody else is told.
 */
final class ChannelVerbs {
    /** {@code channel_history_request} without a usable {@code limit} (A1.3). */
    static final int DEFAULT_HISTORY_LIMIT = 20;

    private final VerbSupport support;
    private final CoordinationActor actor;
    private final HubFrames frames;
    private final Outbox outbox;
    /** The largest frame the hub sends: a history reply keeps the newest chats that fit in one. */
    private final int maxFrameBytes;

    ChannelVerbs(VerbSupport support, CoordinationActor actor, HubFrames frames, Outbox outbox, int maxFrameBytes) {
        this.maxFrameBytes = maxFrameBytes;
        this.support = support;
        this.actor = actor;
        this.frames = frames;
        this.outbox = outbox;
    }

    /** True for the verbs handled here. */
    static boolean handles(String type) {
        return switch (type) {
            case "channel_create", "channel_invite", "channel_join", "channel_leave", "channel_list_request",
                    "channel_history_request" -> true;
            default -> false;
        };
    }

    /** Handles one request (on the connection's event loop). */
    void handle(Request r) {
        switch (r.type()) {
            case "channel_create" -> change(r, ChannelCommand.Op.CREATE);
            case "channel_invite" -> change(r, ChannelCommand.Op.INVITE);
            case "channel_join" -> change(r, ChannelCommand.Op.JOIN);
            case "channel_leave" -> change(r, ChannelCommand.Op.LEAVE);
            case "channel_list_request" -> list(r);
            case "channel_history_request" -> history(r);
            default -> throw new IllegalArgumentException(r.type());
        }
    }

    /** The trimmed {@code channel} member; {@code ""} when absent or blank (non-strings never get here). */
    private static String channelId(Request r) {
        String c = FieldCoercion.text(r.get("channel"));
        return c == null ? "" : PythonWhitespace.strip(c);
    }

    private void change(Request r, ChannelCommand.Op op) {
        JsonNode inv = r.get("invitee");
        String invitee = inv != null && inv.isTextual() ? inv.textValue() : null;
        if (invitee != null && AgentNames.refusal(PythonWhitespace.strip(invitee)) != null) {
            invitee = ""; // no agent could bind that name, so none could join: the contract's "invalid invitee"
        }
        JsonNode lab = r.get("label");
        String label = op == ChannelCommand.Op.CREATE && lab != null && lab.isTextual() ? lab.textValue() : null;
        ChannelCommand command = new ChannelCommand(r.sender(), op, channelId(r), invitee, label);
        // never keyed: the contract's channel verbs ignore idem_key (A1.1)
        support.submit(r, command, false, null, DecisionPublisher.typed(ChannelReply.class,
                (d, c) -> outbox.send(d.request().session(), result(d.request().sender(), c, d.at())),
                support::refusePrivately));
    }

    private ObjectNode result(String requester, ChannelReply c, double at) {
        ObjectNode f = frames.envelope(requester, "channel_result", c.message(), at);
        f.put("channel", c.channel());
        f.put("ok", c.ok());
        HubFrames.putStrings(f, "members", c.members());
        return f;
    }

    private void list(Request r) {
        support.afterRead(r, "answering channel_list_request",
                actor.read(s -> s.channels().channelsOf(r.sender())), ids -> {
            ObjectNode f = frames.envelope(r.sender(), "channel_list", "channel list", support.now());
            HubFrames.putStrings(f, "channels", ids);
            outbox.send(r.session(), f);
        });
    }

    private void history(Request r) {
        String id = channelId(r);
        int limit = historyLimit(r.get("limit"));
        support.afterRead(r, "answering channel_history_request", actor.read(s -> {
            Optional<Channel> ch = s.channels().channel(id);
            return new HistoryRead(ch.isPresent() && ch.get().members().contains(r.sender()),
                    ch.map(Channel::history).orElse(List.of()), s.channels().maxHistory());
        }), found -> {
            double at = support.now();
            if (!found.member()) {
                outbox.send(r.session(), result(r.sender(),
                        new ChannelReply(id, false, "not a member of channel '" + id + "'", List.of()), at));
                return;
            }
            List<String> all = found.history();
            ObjectNode f = frames.envelope(r.sender(), "channel_history", "channel history", at);
            f.put("channel", id);
            ArrayNode messages = f.putArray("messages");
            List<String> asked = all.subList(Math.max(0, all.size() - limit), all.size());
            // as a public history reply, the newest that fit in one frame (a channel of large chats would otherwise be
            // one frame of gigabytes), beside the envelope: the hub's members, the channel id, the requester, retention
            List<String> fit = OneFrame.newest(asked, m -> m, maxFrameBytes - ChatVerb.HUB_MEMBERS_BYTES
                    - io.netty.buffer.ByteBufUtil.utf8Bytes(id) - io.netty.buffer.ByteBufUtil.utf8Bytes(r.sender()) - 96);
            fit.forEach(m -> messages.addRawValue(new RawValue(m)));
            if (fit.size() < asked.size()) {
                f.put("truncated", true); // as a public history reply cut to one frame
            }
            f.putObject("retention").put("max_messages", found.maxHistory());
            outbox.send(r.session(), f);
        });
    }

    /** What a history request read from committed state. */
    private record HistoryRead(boolean member, List<String> history, int maxHistory) {
    }

    /** Tolerant limit (A1.3): numeric string, float truncated, true → 1; negative → 0; otherwise 20. */
    static int historyLimit(JsonNode raw) {
        if (raw == null || raw.isNull()) {
            return DEFAULT_HISTORY_LIMIT;
        }
        if (raw.isBoolean()) {
            return raw.booleanValue() ? 1 : 0;
        }
        OptionalLong v = FieldCoercion.tolerantLong(raw);
        if (v.isEmpty()) {
            return DEFAULT_HISTORY_LIMIT;
        }
        return (int) Math.max(0, Math.min(Integer.MAX_VALUE, v.getAsLong()));
    }
}
