package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A tool call that did not do what was asked, with the typed error the MCP client receives:
 * {@code type} (the hub's refusal frame type such as {@code claim_denied}, or one of ours:
 * {@code invalid_arguments}, {@code hub_unavailable}, {@code no_answer}, {@code not_held}),
 * a human {@code message}, and the refusal's own members ({@code reason_code},
 * {@code error_code}, {@code task_id}…).
 */
final class ToolFailure extends Exception {
    /** Members of a hub frame that are envelope, not part of the refusal. */
    private static final java.util.Set<String> ENVELOPE = java.util.Set.of("type", "sender", "target", "payload",
            "timestamp", "hub_id");

    private final Map<String, Object> error;
    private final transient JsonNode reply;
    /** The ids a retry must carry again ({@code idem_key}, {@code client_msg_id}); empty when none was sent. */
    private final Map<String, Object> retryIds = new LinkedHashMap<>();

    private ToolFailure(Map<String, Object> error, JsonNode reply) {
        super(error.get("type") + ": " + error.get("message"));
        this.error = error;
        this.reply = reply;
    }

    /** The typed error object. */
    Map<String, Object> error() {
        return error;
    }

    /** The hub frame that refused the request, or null for a local failure. */
    JsonNode reply() {
        return reply;
    }

    /** The {@code idem_key} the failed request carried, or null when none was sent. */
    String idemKey() {
        return (String) retryIds.get("idem_key");
    }

    /** The ids the failed request carried, for the result: a retry with them is applied at most once. */
    Map<String, Object> retryIds() {
        return retryIds;
    }

    /** Records the {@code idem_key} the request carried, so the agent can retry with it; returns this. */
    ToolFailure keyed(String key) {
        retryIds.put("idem_key", key);
        return this;
    }

    /** Records the {@code client_msg_id} a chat carried, so the agent can resend it (receivers deduplicate); returns this. */
    ToolFailure messageId(String id) {
        retryIds.put("client_msg_id", id);
        return this;
    }

    /** The error type. */
    String type() {
        return (String) error.get("type");
    }

    private static Map<String, Object> base(String type, String message) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("type", type);
        e.put("message", message);
        return e;
    }

    /** An argument does not match the tool's schema; nothing was sent to the hub. */
    static ToolFailure invalidArguments(String field, String message) {
        Map<String, Object> e = base("invalid_arguments", message);
        e.put("field", field);
        return new ToolFailure(e, null);
    }

    /**
     * The hub refused: {@code type} is the frame's type ({@code claim_denied}, {@code error}…),
     * {@code message} its payload, and every non-envelope member is copied (scalars as they are).
     */
    static ToolFailure refused(ObjectNode frame) {
        Map<String, Object> e = base(frame.path("type").asText("error"), frame.path("payload").asText(""));
        for (Iterator<Map.Entry<String, JsonNode>> it = frame.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> m = it.next();
            if (!ENVELOPE.contains(m.getKey())) {
                e.put(m.getKey(), Frames.plain(m.getValue()));
            }
        }
        return new ToolFailure(e, frame);
    }

    /** The hub cannot be reached (or refused this agent's connection); nothing is known to have been applied. */
    static ToolFailure unavailable(String message) {
        return new ToolFailure(base("hub_unavailable", message), null);
    }

    /** The hub took the request but did not answer in time: the outcome is unknown. */
    static ToolFailure noAnswer(String message) {
        return new ToolFailure(base("no_answer", message), null);
    }

    /** A refusal decided here before asking the hub (e.g. renewing a task this agent does not hold). */
    static ToolFailure local(String type, String message, Map<String, Object> details) {
        Map<String, Object> e = base(type, message);
        e.putAll(details);
        return new ToolFailure(e, null);
    }
}
