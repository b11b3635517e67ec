package dev.synapsehub.cli;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code --log-format}: chosen before logging starts, validated with the options, JSON lines end to end. */
class LogFormatCliTest {

    @AfterEach
    void clearProperty() {
        System.clearProperty(LogSetup.FORMAT_VARIABLE);
    }

    @Test
    void anUnknownFormatIsRefusedNamingTheOption() {
        CliTest.Run xml = run("--port", "0", "--log-format", "xml");
        assertThat(xml.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(xml.err()).contains("--log-format must be text or json, not 'xml'");
    }

    @Test
    void theFormatIsChosenFromTheArgumentsAndIsInTheEffectiveConfigurationLine() {
        Main.chooseLogFormat(new String[] {"--port", "0", "--log-format", "JSON"});
        assertThat(System.getProperty(LogSetup.FORMAT_VARIABLE)).isEqualTo("json");
        Main.chooseLogFormat(new String[] {"--log-format=text"});
        assertThat(System.getProperty(LogSetup.FORMAT_VARIABLE)).isEqualTo("text");
        ServeOptions json = serve("--log-format", "json");
        assertThat(json.logFormat()).isEqualTo("json");
        // the line says what logging was started with: text here (a --config file's value comes too late)
        assertThat(json.effectiveSummary(json.hubConfig(), json.registryLimits(), json.actorSettings()))
                .containsEntry("log_format", LogSetup.activeFormat());
        Main.chooseLogFormat(new String[] {"--log-format", "json"});
        assertThat(json.effectiveSummary(json.hubConfig(), json.registryLimits(), json.actorSettings()))
                .containsEntry("log_format", "json");
        Main.chooseLogFormat(new String[] {"--log-format", "text"});
        if (System.getenv(LogSetup.FORMAT_VARIABLE) == null) {
            assertThat(serve().logFormat()).isEqualTo("text");
        }
    }

    @Test
    void aHubStartedWithJsonWritesOnlyJsonObjectLines(@TempDir Path dir) throws Exception {
        Path err = dir.resolve("stderr.log");
        ProcessBuilder pb = new ProcessBuilder(ChildJvm.hub(ChildJvm.sqliteDirIn(dir),
                List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m"),
                List.of("--host", "127.0.0.1", "--port", "0", "--log-format", "json")));
        pb.environment().remove(LogSetup.FORMAT_VARIABLE);
        pb.environment().remove(LogSetup.LEVEL_VARIABLE);
        pb.redirectError(err.toFile());
        pb.redirectOutput(dir.resolve("stdout.log").toFile());
        Process hub = pb.start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (!Files.readString(err).contains("listening on")) {
                assertThat(hub.isAlive()).as("the hub exited early: %s", Files.readString(err)).isTrue();
                assertThat(System.nanoTime()).as("no listening line: %s", Files.readString(err)).isLessThan(deadline);
                Thread.sleep(50);
            }
            hub.destroy(); // SIGTERM: the shutdown lines are JSON too
            assertThat(hub.waitFor(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            hub.destroyForcibly();
        }
        ObjectMapper mapper = new ObjectMapper();
        List<JsonNode> events = new ArrayList<>();
        for (String line : Files.readAllLines(err)) {
            if (!line.isBlank()) {
                JsonNode event = mapper.readTree(line); // throws on a line that is not JSON
                assertThat(event.isObject()).as(line).isTrue();
                assertThat(event.path("timestamp").asLong()).as(line).isPositive();
                assertThat(event.path("level").asText()).as(line).isIn("ERROR", "WARN", "INFO", "DEBUG", "TRACE");
                assertThat(event.path("loggerName").asText()).as(line).isNotEmpty();
                assertThat(event.path("threadName").asText()).as(line).isNotEmpty();
                events.add(event);
            }
        }
        assertThat(events).anySatisfy(e -> assertThat(e.path("formattedMessage").asText())
                .contains("starting:").contains("log_format=json;"));
        assertThat(events).anySatisfy(e -> assertThat(e.path("formattedMessage").asText()).startsWith("listening on ws://"));
        assertThat(events).anySatisfy(e -> assertThat(e.path("formattedMessage").asText()).startsWith("stopped"));
    }

    private static ServeOptions serve(String... args) {
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs(args);
        return command.serve;
    }
}
