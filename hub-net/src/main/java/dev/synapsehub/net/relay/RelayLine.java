package dev.synapsehub.net.relay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.net.wire.CanonicalJson;

import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * One relay-log line (contract A5.2): a compact, ASCII-escaped JSON object {@code v} 2,
 * {@code i} msg_id (0 when the frame has none), {@code ty} type, {@code s} sender, {@code to}
 * target ({@code "all"} when absent), {@code p} payload (its JSON type kept), {@code t} the hub
 * timestamp in whole milliseconds, {@code h} hub id, {@code c} the trimmed channel or {@code ""},
 * and {@code x} every other member in frame order (left out when there is none).
 */
public final class RelayLine {
    private static final Set<String> MAPPED = Set.of("msg_id", "type", "sender", "target", "payload", "timestamp",
            "hub_id", "channel");

    private RelayLine() {
    }

    /** The line for {@code frame}, a frame as the hub sent it. */
    public static String of(ObjectNode frame) {
        JsonNodeFactory nf = JsonNodeFactory.instance;
        ObjectNode line = nf.objectNode();
        line.put("v", 2);
        JsonNode msgId = frame.get("msg_id");
        line.set("i", msgId != null && msgId.isIntegralNumber() ? msgId : nf.numberNode(0));
        line.set("ty", orNull(frame.get("type")));
        line.set("s", orNull(frame.get("sender")));
        JsonNode to = frame.get("target");
        line.set("to", to == null || to.isNull() ? nf.textNode("all") : to);
        line.set("p", orNull(frame.get("payload")));
        JsonNode ts = frame.get("timestamp");
        // whole milliseconds, truncated as Python's int(ts * 1000) does
        line.put("t", ts != null && ts.isNumber() ? (long) (ts.doubleValue() * 1000.0) : 0L);
        line.set("h", orNull(frame.get("hub_id")));
        JsonNode channel = frame.get("channel");
        line.put("c", channel != null && channel.isTextual() ? PythonWhitespace.strip(channel.textValue()) : "");
        ObjectNode extra = nf.objectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = frame.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!MAPPED.contains(e.getKey())) {
                extra.set(e.getKey(), e.getValue());
            }
        }
        if (!extra.isEmpty()) {
            line.set("x", extra);
        }
        return CanonicalJson.writeInOrder(line, true);
    }

    private static JsonNode orNull(JsonNode n) {
        return n == null ? JsonNodeFactory.instance.nullNode() : n;
    }
}
