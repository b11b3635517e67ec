package dev.synapsehub.mcp;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * Stands between the MCP client's lines on standard input and the SDK's stdio transport, which
 * stops reading for good at the first line it cannot deserialize (and so never sees the end of
 * input either). The gate answers a line that is not JSON with {@code -32700} and one that is
 * not a JSON-RPC message with {@code -32600} itself, and passes only well-formed messages on.
 * It also answers a {@code tools/call} whose params do not name a known tool with object
 * arguments ({@code -32602}): the SDK would answer with a Java exception or a message that does
 * not name the tool. A line longer than {@link #MAX_LINE_BYTES} is answered with {@code -32600}
 * once its newline is read: only its first {@link #MAX_LINE_BYTES} bytes are kept, the rest is
 * read and discarded, so memory stays bounded and the next line is found. Its id is recovered
 * from the head kept when the head shows it (see {@link #requestIdOf}), else the answer's id is
 * null (JSON-RPC 2.0 §5).
 * When its input ends or fails it ends the transport's input and counts {@link #ended()} down.
 */
final class StdioGate implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(StdioGate.class);
    /** The SDK transport's own default limit for one message. */
    static final int MAX_LINE_BYTES = 16 * 1024 * 1024;
    static final int PARSE_ERROR = -32700;
    static final int INVALID_REQUEST = -32600;
    static final int INVALID_PARAMS = -32602;
    private static final ObjectMapper STRICT = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private final InputStream in;
    private final LineQueueInput passed = new LineQueueInput();
    private final ProtocolOutput out;
    private final CountDownLatch ended = new CountDownLatch(1);
    private final Set<String> toolNames;
    private final InFlight inFlight;
    private final long endGraceMillis;

    /**
     * @param toolNames the tools a {@code tools/call} may name
     * @param inFlight told of each request passed on
     * @param endGraceMillis how long the end of input waits for the requests passed on to be answered
     */
    StdioGate(InputStream in, ProtocolOutput out, Set<String> toolNames, InFlight inFlight, long endGraceMillis) {
        this.in = new BufferedInputStream(in);
        this.out = out;
        this.toolNames = Set.copyOf(toolNames);
        this.inFlight = inFlight;
        this.endGraceMillis = endGraceMillis;
    }

    /** What the SDK transport reads: the well-formed lines only. */
    LineQueueInput passed() {
        return passed;
    }

    /** Counts down when the client's input has ended (or failed): the client is gone. */
    CountDownLatch ended() {
        return ended;
    }

    @Override
    public void run() {
        try {
            LineBuffer line = new LineBuffer();
            boolean tooLong = false;
            int b;
            while ((b = in.read()) >= 0) {
                if (b != '\n') {
                    if (line.size() < MAX_LINE_BYTES) {
                        line.write(b);
                    } else {
                        tooLong = true;
                    }
                    continue;
                }
                if (tooLong) {
                    answer(line.requestId(), INVALID_REQUEST, "message longer than " + MAX_LINE_BYTES + " bytes");
                } else {
                    admit(line.toString(StandardCharsets.UTF_8));
                }
                line.reset();
                tooLong = false;
            }
            if (line.size() > 0 && !tooLong) {
                admit(line.toString(StandardCharsets.UTF_8)); // a last line without its newline
            }
        } catch (IOException e) {
            LOG.warn("reading MCP input failed: {}", e.getMessage());
        } finally {
            // the SDK closes its session when it reads the end, dropping the answers to requests still
            // running: it sees the end only once they are answered (bounded)
            try {
                if (!inFlight.awaitNone(endGraceMillis)) {
                    LOG.warn("MCP input ended with requests unanswered after {} ms; closing", endGraceMillis);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            passed.end();
            ended.countDown();
        }
    }

    /** The bytes of one line, kept up to {@link #MAX_LINE_BYTES}; parsed in place, as a copy would double them. */
    private static final class LineBuffer extends ByteArrayOutputStream {
        JsonNode requestId() {
            return requestIdOf(buf, count);
        }
    }

    /**
     * The id of the request whose first {@code length} bytes (an over-long line cut short) are
     * {@code head}, or null when the head does not show it: a top-level object with a string
     * {@code method} (so a request, never a response, which is not to be answered with its id)
     * and an {@code id} that is a string or an integer, both complete before the cut. A member
     * counts as complete only once the token after it was read: a number cut short parses as a
     * smaller one. Streamed over the head already held, so no more memory than the bound; with
     * a repeated {@code id} the first one in the head is taken.
     */
    static JsonNode requestIdOf(byte[] head, int length) {
        JsonNode id = null;
        boolean method = false;
        try (JsonParser p = STRICT.createParser(head, 0, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return NullNode.instance;
            }
            JsonNode pendingId = null;
            boolean pendingMethod = false;
            while (true) {
                JsonToken t = p.nextToken();
                // the token after a member: that member is complete
                if (pendingId != null && id == null) {
                    id = pendingId;
                }
                method |= pendingMethod;
                if (id != null && method) {
                    return id;
                }
                if (t != JsonToken.FIELD_NAME) {
                    return NullNode.instance; // the object ended within the head without both
                }
                String name = p.currentName();
                JsonToken value = p.nextToken();
                pendingId = null;
                pendingMethod = false;
                if ("id".equals(name) && value == JsonToken.VALUE_STRING) {
                    pendingId = TextNode.valueOf(p.getText());
                } else if ("id".equals(name) && value == JsonToken.VALUE_NUMBER_INT) {
                    pendingId = p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
                            ? JsonNodeFactory.instance.numberNode(p.getBigIntegerValue())
                            : JsonNodeFactory.instance.numberNode(p.getLongValue());
                } else if ("method".equals(name) && value == JsonToken.VALUE_STRING) {
                    pendingMethod = true;
                } else {
                    p.skipChildren();
                }
            }
        } catch (IOException | RuntimeException e) {
            return NullNode.instance; // the head ends (or stops being JSON) before both were complete
        }
    }

    /** Passes a well-formed message on, or answers it with the JSON-RPC error it earns. */
    private void admit(String line) throws IOException {
        String text = line.strip();
        if (text.isEmpty()) {
            return; // nothing to answer
        }
        JsonNode message;
        try {
            message = STRICT.readTree(text);
        } catch (JsonProcessingException e) {
            answer(NullNode.instance, PARSE_ERROR, "Parse error: the line is not JSON");
            return;
        }
        JsonNode id = message.path("id");
        JsonNode replyId = id.isTextual() || id.isIntegralNumber() ? id : NullNode.instance;
        String problem = problem(message);
        if (problem == null) {
            try {
                McpSchema.deserializeJsonRpcMessage(McpJsonDefaults.getMapper(), text);
            } catch (Exception e) {
                problem = "not a JSON-RPC message the server can read";
            }
        }
        if (problem != null) {
            if (isResponse(message)) {
                LOG.warn("dropped a malformed response from the MCP client: {}", problem);
                return; // a response is never answered
            }
            if (!message.has("id") && message.path("method").isTextual()) {
                LOG.warn("dropped a malformed notification from the MCP client: {}", problem);
                return; // nor is a notification (JSON-RPC 2.0)
            }
            answer(replyId, INVALID_REQUEST, "Invalid Request: " + problem);
            return;
        }
        String badCall = "tools/call".equals(message.path("method").textValue()) && message.has("id")
                ? toolCallProblem(message.path("params")) : null;
        if (badCall != null) {
            answer(replyId, INVALID_PARAMS, badCall);
            return;
        }
        if (message.has("id") && message.has("method")) {
            inFlight.sent(message.get("id"));
        }
        passed.offer((text + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /** Why a {@code tools/call}'s params cannot be served, or null when they can. */
    private String toolCallProblem(JsonNode params) {
        if (!params.isObject()) {
            return "Invalid params: tools/call needs params {\"name\": <tool>, \"arguments\": {…}}";
        }
        JsonNode name = params.path("name");
        if (!name.isTextual()) {
            return "Invalid params: \"name\" must be the tool's name, a string";
        }
        JsonNode arguments = params.path("arguments");
        if (!arguments.isMissingNode() && !arguments.isNull() && !arguments.isObject()) {
            return "Invalid params: \"arguments\" must be an object of the tool's arguments, not "
                    + arguments.getNodeType().toString().toLowerCase(java.util.Locale.ROOT);
        }
        if (!toolNames.contains(name.textValue())) {
            return "Unknown tool: " + name.textValue();
        }
        return null;
    }

    /** Why {@code m} is not a JSON-RPC 2.0 request, notification or response, or null when it is one. */
    private static String problem(JsonNode m) {
        if (!m.isObject()) {
            return m.isArray() ? "batches are not supported; send one message per line" : "not a JSON object";
        }
        if (!"2.0".equals(m.path("jsonrpc").textValue())) {
            return "\"jsonrpc\" must be \"2.0\"";
        }
        JsonNode id = m.get("id");
        if (id != null && !(id.isTextual() || id.isIntegralNumber())) {
            return "\"id\" must be a string or an integer";
        }
        if (m.has("method")) {
            if (!m.get("method").isTextual()) {
                return "\"method\" must be a string";
            }
            JsonNode params = m.get("params");
            if (params != null && !params.isObject() && !params.isNull()) {
                return "\"params\" must be an object";
            }
            return null;
        }
        if (id == null || m.has("result") == m.has("error")) {
            return "neither a request (method) nor a response (id with result or error)";
        }
        return null;
    }

    private static boolean isResponse(JsonNode m) {
        return m.isObject() && !m.has("method") && m.has("id") && (m.has("result") || m.has("error"));
    }

    private void answer(JsonNode id, int code, String message) throws IOException {
        ObjectNode reply = STRICT.createObjectNode();
        reply.put("jsonrpc", "2.0");
        reply.set("id", id);
        reply.putObject("error").put("code", code).put("message", message);
        out.writeLine(reply.toString());
    }
}
