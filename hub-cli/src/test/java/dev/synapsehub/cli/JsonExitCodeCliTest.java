package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --json} changes what an operator command prints, never its exit code: a receipt that says
 * not delivered, or a recovery that did not recover, exited 1 in text and 0 with --json.
 */
class JsonExitCodeCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    @Test
    void theExitCodeIsTheSameWithAndWithoutJson() throws Exception {
        hub.start("--port", "0");
        List<List<String>> commands = List.of(
                List.of("send", "team/absent", "please review", "--receipt"),
                List.of("federation", "recover", "hub-x", "--reason", "drill"),
                List.of("claim", "T1", "--name", "ops/first"),
                List.of("claim", "T1", "--name", "ops/second"),
                List.of("who"));
        List<Integer> expected = List.of(ExitCodes.REFUSED, ExitCodes.REFUSED, ExitCodes.OK, ExitCodes.REFUSED,
                ExitCodes.OK);
        for (int i = 0; i < commands.size(); i++) {
            List<String> command = commands.get(i);
            CliTest.Run text = run(command, false);
            CliTest.Run json = run(command, true);
            assertThat(text.code()).as("text: " + command + ": " + text.out() + text.err()).isEqualTo(expected.get(i));
            assertThat(json.code()).as("--json: " + command + ": " + json.out() + json.err()).isEqualTo(text.code());
            JsonNode reply = JSON.readTree(json.out());
            assertThat(reply.path("type").asText()).as("the reply frame is printed as it came").isNotEmpty();
        }
    }

    @Test
    void floatsArePrintedAsTheHubWritesThemNotAsJavaDoes() throws Exception {
        hub.start("--port", "0");
        CliTest.Run claim = run(List.of("claim", "T2", "--name", "ops/first"), true);
        JsonNode reply = JSON.readTree(claim.out());
        double timestamp = reply.path("timestamp").doubleValue();
        assertThat(timestamp).as(claim.out()).isGreaterThan(1e9);
        // Java writes 1.7964500961302543E9; the hub (Python's repr) 1796450096.1302543
        assertThat(claim.out()).containsPattern(java.util.regex.Pattern.quote("\"timestamp\":"
                + dev.synapsehub.net.wire.PythonFloatFormat.format(timestamp)) + "[,}]");
    }

    private CliTest.Run run(List<String> command, boolean json) {
        List<String> args = new java.util.ArrayList<>(command);
        args.addAll(List.of("--url", hub.url()));
        if (json) {
            args.add("--json");
        }
        return CliTest.run(args.toArray(String[]::new));
    }
}
