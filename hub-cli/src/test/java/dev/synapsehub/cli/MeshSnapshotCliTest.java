package dev.synapsehub.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code --mesh-snapshot-every}, the last snapshot in {@code mesh status}, {@code mesh transfer-leader}. */
class MeshSnapshotCliTest {
    private final List<LoopbackHub> hubs = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (LoopbackHub h : hubs) {
            h.close();
        }
    }

    private static int freePort() throws IOException {
        return HubProcess.freePort(); // below the ephemeral range: no outgoing socket takes it meanwhile
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

    /** Starts three nodes together (each waits for a leader before it serves); returns --mesh-peers. */
    private String startThree(Path dir, String... extra) throws Exception {
        String peers = "n1=127.0.0.1:" + freePort() + ",n2=127.0.0.1:" + freePort() + ",n3=127.0.0.1:" + freePort();
        List<Thread> starts = new ArrayList<>();
        List<Exception> failures = new CopyOnWriteArrayList<>();
        for (int i = 1; i <= 3; i++) {
            LoopbackHub hub = new LoopbackHub();
            hubs.add(hub);
            List<String> args = new ArrayList<>(List.of("--port", "0", "--db", dir.resolve("n" + i + ".db").toString(),
                    "--mesh-id", "n" + i, "--mesh-peers", peers, "--mesh-bootstrap"));
            args.addAll(List.of(extra));
            Thread t = new Thread(() -> {
                try {
                    hub.start(args.toArray(String[]::new));
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
        return peers;
    }

    @Test
    void meshStatusShowsEachVotersLastSnapshot(@TempDir Path dir) throws Exception {
        String peers = startThree(dir, "--mesh-snapshot-every", "4");
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

    @Test
    void transferLeaderHandsLeadershipToTheNamedVoterAndRefusesAnUnknownOne(@TempDir Path dir) throws Exception {
        String peers = startThree(dir);
        CliTest.Run status = run("mesh", "status", "--mesh-peers", peers, "--timeout", "10");
        assertThat(status.code()).as(status.err()).isEqualTo(ExitCodes.OK);
        String follower = status.out().lines().filter(l -> l.contains("FOLLOWER")).findFirst().orElseThrow()
                .trim().split("\\s+")[0];

        CliTest.Run moved = run("mesh", "transfer-leader", "--mesh-peers", peers, "--to", follower, "--timeout", "20");
        assertThat(moved.code()).as(moved.err()).isEqualTo(ExitCodes.OK);
        assertThat(moved.out()).containsPattern("leader n[123] -> " + follower + " \\(term \\d+\\)");
        CliTest.Run after = run("mesh", "status", "--mesh-peers", peers, "--timeout", "10");
        assertThat(after.out()).contains("leader " + follower + ",");
        CliTest.Run again = run("mesh", "transfer-leader", "--mesh-peers", peers, "--to", follower);
        assertThat(again.code()).isEqualTo(ExitCodes.OK);
        assertThat(again.out()).contains(follower + " already leads");
        CliTest.Run unknown = run("mesh", "transfer-leader", "--mesh-peers", peers, "--to", "n9");
        assertThat(unknown.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.err()).contains("'n9' is not one of");
        CliTest.Run claim = run("claim", "AFTER", "--url", hubs.get(0).url(), "--name", "alice", "--timeout", "20");
        assertThat(claim.code()).as(claim.err()).isEqualTo(ExitCodes.OK);
    }
}
