package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.messaging.ChatFrameRenderer;
import dev.synapsehub.core.messaging.ChatStamp;
import dev.synapsehub.net.wire.PythonFloatFormat;
import dev.synapsehub.net.wire.WireJson;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * A chat frame rendered on the connection's event loop up to what only the writer can decide
 * (the hub timestamp, {@code msg_id}, the kept {@code client_msg_id}): the writer then only joins
 * strings, instead of copying the frame's JSON tree and serialising it (for a 256 KiB chat, the
 * costliest thing the writer did). The result is byte for byte what serialising the stamped tree
 * gives: every member of the base in order, {@code timestamp} in its place (or appended), then
 * {@code client_timestamp}, {@code hub_id}, {@code msg_id}, {@code client_msg_id}.
 */
public final class ChatTemplate implements ChatFrameRenderer {
    private final String head;
    private final String tail;
    private final boolean timestampInPlace;
    private final String hubIdMember;

    private ChatTemplate(String head, String tail, boolean timestampInPlace, String hubIdMember) {
        this.head = head;
        this.tail = tail;
        this.timestampInPlace = timestampInPlace;
        this.hubIdMember = hubIdMember;
    }

    /** Renders every member of {@code base} but the stamped ones (on the event loop). */
    public static ChatTemplate of(ObjectNode base, WireJson json, String hubId) {
        List<String> before = new ArrayList<>();
        List<String> after = new ArrayList<>();
        boolean inPlace = false;
        Iterator<Map.Entry<String, JsonNode>> it = base.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> member = it.next();
            if ("timestamp".equals(member.getKey())) {
                inPlace = true;
                continue;
            }
            (inPlace ? after : before).add(quote(member.getKey()) + ':' + json.write(member.getValue()));
        }
        return new ChatTemplate(String.join(",", before), String.join(",", after), inPlace,
                quote("hub_id") + ':' + quote(hubId));
    }

    @Override
    public String render(ChatStamp stamp) {
        StringBuilder f = new StringBuilder(head.length() + tail.length() + 160).append('{').append(head);
        String ts = "\"timestamp\":" + PythonFloatFormat.format(stamp.hubTimestamp());
        if (timestampInPlace) {
            member(f, ts);
            if (!tail.isEmpty()) {
                f.append(',').append(tail);
            }
        } else {
            if (!tail.isEmpty()) {
                member(f, tail);
            }
            member(f, ts);
        }
        if (stamp.clientTimestamp() != null) {
            member(f, "\"client_timestamp\":" + PythonFloatFormat.format(stamp.clientTimestamp()));
        }
        member(f, hubIdMember);
        member(f, "\"msg_id\":" + stamp.msgId());
        if (stamp.clientMsgId() != null) {
            member(f, "\"client_msg_id\":" + quote(stamp.clientMsgId()));
        }
        return f.append('}').toString();
    }

    private static void member(StringBuilder f, String member) {
        if (f.length() > 1) {
            f.append(',');
        }
        f.append(member);
    }

    /** A JSON string literal, escaped as Jackson writes it. */
    private static String quote(String s) {
        return '"' + new String(JsonStringEncoder.getInstance().quoteAsString(s)) + '"';
    }
}
