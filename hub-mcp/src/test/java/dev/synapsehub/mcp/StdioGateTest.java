package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The face's stdio as an MCP client sees it, line by line: malformed lines are answered and
 * the lines after them still served, and the end of input ends the face. No hub is needed
 * (the link keeps reconnecting to a closed port in the background).
 */
class StdioGateTest {
    private final PipedOutputStream client = new PipedOutputStream();
    private final LinkedBlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private Thread face;

    /** Collects what the face writes, one JSON-RPC message a line. */
    private final class Lines extends OutputStream {
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                answers.add(line.toString(StandardCharsets.UTF_8));
                line.reset();
            } else {
                line.write(b);
            }
        }
    }

    private void startFace() throws IOException {
        PipedInputStream in = new PipedInputStream(client, 1 << 16);
        McpSettings settings = new McpSettings(URI.create("ws://127.0.0.1:1/"), "proj/gate", null,
                Duration.ofSeconds(1), McpSettings.DEFAULT_HEARTBEAT, 10, null);
        face = new Thread(() -> {
            try {
                McpFace.run(settings, "test", in, new Lines());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "face");
        face.start();
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        if (face != null) {
            face.join(10_000);
        }
    }

    private void send(String line) throws IOException {
        client.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        client.flush();
    }

    private JsonNode next() throws Exception {
        String line = answers.poll(20, TimeUnit.SECONDS);
        assertThat(line).as("an answer").isNotNull();
        return Frames.MAPPER.readTree(line);
    }

    private void initialize() throws Exception {
        send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                + "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
        assertThat(next().path("result").path("serverInfo").path("name").asText()).isEqualTo("synapse-hub");
        send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    }

    @Test
    void aBadLineIsAnsweredAndTheNextOneServed() throws Exception {
        startFace();
        initialize();
        send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
        assertThat(next().path("id").asInt()).isEqualTo(2);

        send("not json at all");
        JsonNode parse = next();
        assertThat(parse.path("error").path("code").asInt()).isEqualTo(-32700);
        assertThat(parse.has("id")).isTrue();
        assertThat(parse.get("id").isNull()).isTrue();
        send("{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":");
        assertThat(next().path("error").path("code").asInt()).isEqualTo(-32700);
        send("{\"hello\":1}");
        JsonNode invalid = next();
        assertThat(invalid.path("error").path("code").asInt()).isEqualTo(-32600);
        assertThat(invalid.get("id").isNull()).isTrue();
        send("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":5}");
        JsonNode badMethod = next();
        assertThat(badMethod.path("error").path("code").asInt()).isEqualTo(-32600);
        assertThat(badMethod.path("id").asInt()).isEqualTo(7);
        send("[1,2]");
        assertThat(next().path("error").path("code").asInt()).isEqualTo(-32600);

        send("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
        JsonNode tools = next();
        assertThat(tools.path("id").asInt()).isEqualTo(3);
        assertThat(tools.path("result").path("tools").size()).isEqualTo(14);
    }

    private JsonNode nextError(int code) throws Exception {
        JsonNode answer = next();
        assertThat(answer.path("error").path("code").asInt()).as("%s", answer).isEqualTo(code);
        assertThat(answer.has("id")).isTrue();
        return answer.get("id");
    }

    @Test
    void anOverLongRequestIsAnsweredWithItsIdWhenTheKeptHeadShowsItAndWithNullOtherwise() throws Exception {
        startFace();
        initialize();
        String pad = "a".repeat(StdioGate.MAX_LINE_BYTES);
        send("{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":{\"name\":\"send\","
                + "\"arguments\":{\"to\":\"proj/x\",\"text\":\"" + pad + "\"}}}");
        assertThat(nextError(-32600).asInt()).isEqualTo(41);
        send("{\"id\":\"req-7\",\"method\":\"tools/call\",\"params\":{\"text\":\"" + pad + "\"}}");
        assertThat(nextError(-32600).asText()).isEqualTo("req-7");

        // the id after the cut cannot be known
        send("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"text\":\"" + pad + "\"},\"id\":42}");
        assertThat(nextError(-32600).isNull()).isTrue();
        // the cut falls inside the id's digits: the four kept would read as another id, 1234
        String head = "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"pad\":\"";
        String beforeId = "\",\"id\":";
        String cutInId = head + "a".repeat(StdioGate.MAX_LINE_BYTES - head.length() - beforeId.length() - 4) + beforeId
                + "123456789}";
        assertThat(cutInId.substring(StdioGate.MAX_LINE_BYTES - 4, StdioGate.MAX_LINE_BYTES)).isEqualTo("1234");
        send(cutInId);
        assertThat(nextError(-32600).isNull()).isTrue();
        // the method falls after the cut: the kept head shows an id but no method, and without one
        // the line may be a response, whose id is the server's own request's
        send("{\"jsonrpc\":\"2.0\",\"id\":43,\"result\":{\"pad\":\"" + pad + "\"},\"method\":\"x\"}");
        assertThat(nextError(-32600).isNull()).isTrue();
        send("[{\"jsonrpc\":\"2.0\",\"id\":44,\"method\":\"ping\",\"pad\":\"" + pad + "\"}]");
        assertThat(nextError(-32600).isNull()).isTrue();

        send("{\"jsonrpc\":\"2.0\",\"id\":45,\"method\":\"ping\"}");
        JsonNode served = next();
        assertThat(served.path("id").asInt()).isEqualTo(45);
        assertThat(served.has("result")).isTrue();
    }

    @Test
    void malformedToolCallsAreInvalidParamsNamingWhatIsWrong() throws Exception {
        startFace();
        initialize();
        send("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"who\",\"arguments\":\"x\"}}");
        JsonNode string = next();
        assertThat(string.path("id").asInt()).isEqualTo(4);
        assertThat(string.path("error").path("code").asInt()).isEqualTo(-32602);
        assertThat(string.path("error").path("message").asText()).contains("arguments").doesNotContain("jackson");
        send("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"who\",\"arguments\":[1]}}");
        assertThat(next().path("error").path("code").asInt()).isEqualTo(-32602);
        send("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"frobnicate\","
                + "\"arguments\":{}}}");
        JsonNode unknown = next();
        assertThat(unknown.path("error").path("code").asInt()).isEqualTo(-32602);
        assertThat(unknown.path("error").path("message").asText()).contains("frobnicate");
        // a well-formed call still reaches the tool (whose own check answers: no such argument)
        send("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"send\","
                + "\"arguments\":{\"to\":\"\",\"text\":\"x\"}}}");
        JsonNode served = next();
        assertThat(served.path("id").asInt()).isEqualTo(7);
        assertThat(served.path("result").path("isError").asBoolean()).isTrue();
        assertThat(served.path("result").path("structuredContent").path("error").path("field").asText()).isEqualTo("to");
    }

    @Test
    void theEndOfInputEndsTheFaceEvenAfterABadLine() throws Exception {
        startFace();
        initialize();
        send("{\"hello\":1}");
        assertThat(next().path("error").path("code").asInt()).isEqualTo(-32600);
        client.close();
        face.join(10_000);
        assertThat(face.isAlive()).as("the face returned after its input ended").isFalse();
    }

    @Test
    void requestsSentJustBeforeTheEndOfInputAreAllAnsweredBeforeTheFaceCloses() throws Exception {
        startFace();
        // a client that writes its requests and closes its end at once (a pipe, a script)
        client.write(("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
                // answered only after the 1 s request timeout: the hub is not there
                + "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"who\",\"arguments\":{}}}\n"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":[1]}\n")
                .getBytes(StandardCharsets.UTF_8));
        client.close();
        java.util.Set<Integer> ids = new java.util.TreeSet<>();
        for (int i = 0; i < 3; i++) {
            ids.add(next().path("id").asInt());
        }
        assertThat(ids).containsExactly(1, 2, 3);
        face.join(20_000);
        assertThat(face.isAlive()).as("the face returned after answering").isFalse();
        assertThat(answers.poll(200, TimeUnit.MILLISECONDS)).as("a notification is never answered").isNull();
    }
}
