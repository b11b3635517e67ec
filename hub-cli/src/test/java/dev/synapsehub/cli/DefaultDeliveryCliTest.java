package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code --default-delivery}: parsed, refused when unknown, logged, and {@code tail} still sees every claim. */
class DefaultDeliveryCliTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    @Test
    void theFlagSetsTheDefaultAndIsInTheEffectiveConfiguration() {
        ServeOptions serve = serve("--default-delivery", "scoped");
        var config = serve.hubConfig();
        assertThat(config.defaultDelivery().scoped()).isTrue();
        assertThat(serve.effectiveSummary(config, serve.registryLimits(), serve.actorSettings()))
                .containsEntry("default_delivery", "scoped");
        assertThat(serve("--port", "0").hubConfig().defaultDelivery().scoped()).as("the contract's by default").isFalse();
        assertThatThrownBy(() -> serve("--default-delivery", "loud").hubConfig())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--default-delivery");
    }

    @Test
    void tailAsksForEverythingOnAScopedHub() throws Exception {
        hub.start("--port", "0", "--default-delivery", "scoped");
        CompletableFuture<CliTest.Run> tail = CompletableFuture.supplyAsync(() -> run("tail", "--url", hub.url(),
                "--name", "ops/tail", "--type", "claim_granted", "--count", "1", "--duration", "30"));
        try (HubClient claimer = HubClient.connect(URI.create(hub.url()), WAIT)) {
            claimer.register("p/claimer", null, WAIT);
            // the tail registers on its own time: claim until it has seen one (bounded)
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(25);
            for (int i = 0; i < 250 && !tail.isDone() && System.nanoTime() < deadline; i++) {
                ObjectNode claim = claimer.frame("claim");
                claim.put("task_id", "T-" + i).put("worktree", "w");
                claim.putArray("paths").add("f" + i);
                claimer.send(claim);
                String task = "T-" + i;
                claimer.await(f -> "claim_granted".equals(f.path("type").asText())
                        && task.equals(f.path("task_id").asText()), WAIT);
                Thread.sleep(100);
            }
        }
        CliTest.Run tailed = tail.get(35, TimeUnit.SECONDS);
        assertThat(tailed.code()).as(tailed.err()).isEqualTo(ExitCodes.OK);
        assertThat(tailed.out()).contains("claim_granted").contains("p/claimer");
    }

    private static ServeOptions serve(String... args) {
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs(args);
        return command.serve;
    }
}
