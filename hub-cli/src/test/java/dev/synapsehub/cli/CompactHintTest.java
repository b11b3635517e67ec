package dev.synapsehub.cli;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.journal.SqliteJournal;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

/** {@code --compact-hint-threshold}: one INFO hint at a start on a journal over it, none under it or at 0. */
class CompactHintTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void aStartOverTheThresholdHintsOnceUnderItOrAtZeroNot(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        try (LoopbackHub hub = new LoopbackHub()) {
            hub.start("--port", "0", "--db", db.toString());
            try (HubClient c = HubClient.connect(URI.create(hub.url()), WAIT)) {
                c.register("proj/a", null, WAIT);
                for (int i = 0; i < 5; i++) {
                    c.send(c.frame("chat").put("payload", "row " + i).put("client_msg_id", "m" + i));
                    c.await(f -> "chat".equals(f.path("type").asText()), WAIT);
                    c.clearPending();
                }
            }
        }
        long rows;
        try (SqliteJournal journal = SqliteJournal.open(db)) {
            rows = journal.lastSeq();
        }
        assertThat(rows).as("the chats were journaled").isGreaterThanOrEqualTo(5);

        List<String> over = hintsAtStart(db, rows - 1);
        assertThat(over).hasSize(1);
        assertThat(over.get(0)).contains("holds " + rows + " rows").contains("--compact-hint-threshold " + (rows - 1))
                .contains("--journal-keep-rows");
        assertThat(hintsAtStart(db, rows)).as("at the threshold: not over it").isEmpty();
        assertThat(hintsAtStart(db, 0)).as("0 disables").isEmpty();
    }

    @Test
    void theThresholdIsValidatedAndInTheEffectiveConfigurationLine() {
        CliTest.Run negative = run("--port", "0", "--compact-hint-threshold", "-1");
        assertThat(negative.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(negative.err()).contains("--compact-hint-threshold must be a number of rows >= 0");
        CliTest.Run word = run("--port", "0", "--compact-hint-threshold", "lots");
        assertThat(word.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(word.err()).contains("--compact-hint-threshold");
        ServeOptions defaults = serve("--db", "hub.db");
        assertThat(defaults.compactHint().threshold()).isEqualTo(CompactHint.DEFAULT_THRESHOLD);
        var config = defaults.hubConfig();
        assertThat(defaults.effectiveSummary(config, defaults.registryLimits(), defaults.actorSettings()))
                .containsEntry("compact_hint_threshold", 100_000L);
        ServeOptions off = serve("--db", "hub.db", "--compact-hint-threshold", "0");
        assertThat(off.effectiveSummary(config, off.registryLimits(), off.actorSettings()))
                .containsEntry("compact_hint_threshold", "off");
    }

    @Test
    void theHintPointsAtRetentionAsItIsSet() {
        CompactHint hint = new CompactHint(10);
        assertThat(hint.message(Path.of("hub.db"), 10, "all")).isEmpty();
        assertThat(hint.message(Path.of("hub.db"), 11, "all")).get().asString()
                .contains("set --journal-keep-rows N");
        assertThat(hint.message(Path.of("hub.db"), 11, "500")).get().asString()
                .contains("--journal-keep-rows is 500").contains("each retention pass that deletes rows logs what set its floor");
    }

    /** The hint lines HubDaemon logs at one start over {@code db} with {@code threshold}. */
    private static List<String> hintsAtStart(Path db, long threshold) throws Exception {
        Logger daemonLog = (Logger) LoggerFactory.getLogger(HubDaemon.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        daemonLog.addAppender(lines);
        try (LoopbackHub hub = new LoopbackHub()) {
            hub.start("--port", "0", "--db", db.toString(), "--compact-hint-threshold", Long.toString(threshold));
        } finally {
            daemonLog.detachAppender(lines);
        }
        return lines.list.stream().map(ILoggingEvent::getFormattedMessage)
                .filter(m -> m.contains("--compact-hint-threshold")).toList();
    }

    private static ServeOptions serve(String... args) {
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs(args);
        return command.serve;
    }
}
