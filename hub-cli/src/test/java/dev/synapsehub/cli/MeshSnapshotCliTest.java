package dev.synapsehub.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code --mesh-snapshot-every} and the last snapshot in {@code mesh status}. */
class MeshSnapshotCliTest {
    private final List<LoopbackHub> hubs = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (LoopbackHub h : hubs) {
            h.close();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Test
    void theSnapshotIntervalIsValidatedAndShownInTheEffectiveConfiguration(@TempDir Path dir) {
        String db = dir.resolve("n1.db").toString();
        CliTest.Run zero = run("--port", "0", "--db", db, "--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1:1",
                "--mesh-snapshot-every", "0");
        assertThat(zero.code()).isNotEqualTo(ExitCodes.OK);
        assertThat(zero.err()).contains("--mesh-snapshot-every must be within 1..100000000");
        assertThat(run("--help").out()).contains("--mesh-snapshot-every");

        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs("--db", db, "--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1:1",
                "--mesh-snapshot-every", "250");
        assertThat(command.serve.meshCompaction().snapshotEvery()).isEqualTo(250);
        var summary = command.serve.effectiveSummary(command.serve.hubConfig(), command.serve.registryLimits(),
                command.serve.actorSettings());
        assertThat(summary.get("mesh").toString()).contains("snapshot every 250 log entries");
    }

    @Test
    void meshStatusShowsEachVotersLastSnapshot(@TempDir Path dir) throws Exception {
        String peers = "n1=127.0.0.1:" + freePort() + ",n2=127.0.0.1:" + freePort() + ",n3=127.0.0.1:" + freePort();
        List<Thread> starts = new ArrayList<>();
        List<Exception> failures = new CopyOnWriteArrayList<>();
        for (int i = 1; i <= 3; i++) {
            LoopbackHub hub = new LoopbackHub();
            hubs.add(hub);
            String id = "n" + i;
            Thread t = new Thread(() -> { // each node waits for a leader before it serves: start them together
                try {
                    hub.start("--port", "0", "--db", dir.resolve(id + ".db").toString(), "--mesh-id", id,
                            "--mesh-peers", peers, "--mesh-snapshot-every", "4");
                } catch (Exception e) {
                    failures.add(e);
                }
            });
            t.start();
            starts.add(t);
        }
        for (Thread t : starts) {
            t.join();
        }
        assertThat(failures).isEmpty();
        CliTest.Run before = run("mesh", "status", "--mesh-peers", peers, "--timeout", "10");
        assertThat(before.out()).contains("snapshot none");

        for (int i = 0; i < 8; i++) {
            CliTest.Run granted = run("claim", "S" + i, "--url", hubs.get(i % 3).url(), "--name", "alice",
                    "--timeout", "20");
            assertThat(granted.code()).as(granted.err()).isEqualTo(ExitCodes.OK);
        }
        long deadline = System.nanoTime() + 30_000_000_000L;
        CliTest.Run status = run("mesh", "status", "--mesh-peers", peers, "--timeout", "10");
        while (status.out().contains("snapshot none") && System.nanoTime() - deadline < 0) {
            Thread.sleep(200);
            status = run("mesh", "status", "--mesh-peers", peers, "--timeout", "10");
        }
        assertThat(status.code()).as(status.err()).isEqualTo(ExitCodes.OK);
        assertThat(status.out()).doesNotContain("snapshot none");
        assertThat(status.out().lines().filter(l -> l.matches(".*snapshot [1-9][0-9]*.*"))).hasSize(3);
        CliTest.Run json = run("mesh", "status", "--mesh-peers", peers, "--json");
        assertThat(json.out()).containsPattern("\"last_snapshot_index\":[1-9]");
    }
}
