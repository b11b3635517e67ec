package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

/** send, tail, board and dead-letters against a real hub on a loopback port. */
class MessagingCliTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    @Test
    void aDirectedMessageToAnAbsentAgentIsDeadLetteredAndReportedSo(@TempDir Path dir) throws Exception {
        hub.start("--port", "0", "--db", dir.resolve("hub.db").toString());
        CliTest.Run sent = run("send", "team/absent", "please review", "--receipt", "--url", hub.url());
        assertThat(sent.code()).as(sent.err()).isEqualTo(ExitCodes.REFUSED);
        assertThat(sent.out()).startsWith("not delivered to team/absent").contains("dead letter");

        CliTest.Run letters = run("dead-letters", "--url", hub.url());
        assertThat(letters.code()).isEqualTo(ExitCodes.OK);
        assertThat(letters.out()).contains("1 target(s)").contains("team/absent").contains("operator/cli");
    }

    @Test
    void aBroadcastIsAcceptedAndTailSeesIt() throws Exception {
        hub.start("--port", "0");
        CompletableFuture<CliTest.Run> tail = CompletableFuture.supplyAsync(() -> run("tail", "--url", hub.url(),
                "--name", "ops/tail", "--type", "chat", "--count", "1", "--duration", "20"));
        try (HubClient watcher = HubClient.connect(URI.create(hub.url()), WAIT)) {
            watcher.register("ops/watcher", null, WAIT);
            watcher.await(f -> "presence_update".equals(f.path("type").asText())
                    && "ops/tail".equals(f.path("agent").asText()), WAIT);
        }
        CliTest.Run sent = run("send", "all", "hello fleet", "--url", hub.url(), "--name", "ops/sender");
        assertThat(sent.code()).as(sent.err()).isEqualTo(ExitCodes.OK);
        assertThat(sent.out()).startsWith("sent to all (msg_id 1");
        CliTest.Run tailed = tail.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(tailed.code()).isEqualTo(ExitCodes.OK);
        assertThat(tailed.out()).contains("chat ops/sender -> all: hello fleet");
    }

    @Test
    void boardShowsTasksReadinessAndNotes() throws Exception {
        hub.start("--port", "0");
        try (HubClient planner = HubClient.connect(URI.create(hub.url()), WAIT)) {
            planner.register("proj/planner", null, WAIT);
            ObjectNode design = planner.frame("ledger_task");
            design.put("task_id", "design");
            design.put("title", "Design the parser");
            planner.send(design);
            planner.awaitType("ledger_task_posted", WAIT);
            ObjectNode build = planner.frame("ledger_task");
            build.put("task_id", "build");
            build.put("title", "Build it");
            build.putArray("depends_on").add("design");
            planner.send(build);
            planner.await(f -> "ledger_task_posted".equals(f.path("type").asText())
                    && "build".equals(f.path("task").path("task_id").asText()), WAIT);
            ObjectNode note = planner.frame("ledger_progress");
            note.put("task_id", "design");
            note.put("text", "started sketching");
            planner.send(note);
            planner.awaitType("ledger_progress_posted", WAIT);
        }
        CliTest.Run board = run("board", "--url", hub.url());
        assertThat(board.code()).as(board.err()).isEqualTo(ExitCodes.OK);
        assertThat(board.out()).contains("2 task(s); ready: [\"design\"]")
                .contains("build").contains("after [\"design\"]")
                .contains("[note] proj/planner on design: started sketching");
    }
}
