package dev.synapsehub.cli;

import dev.synapsehub.client.tls.TestCertificates;
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

/** {@code --mesh-tls-certfile/keyfile/cafile} on a node and on {@code mesh status}: validated, then enforced. */
class MeshTlsCliTest {
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

    private static String[] tls(TestCertificates.PemPair pair, Path ca) {
        return new String[] {"--mesh-tls-certfile", pair.cert().toString(), "--mesh-tls-keyfile", pair.key().toString(),
            "--mesh-tls-cafile", ca.toString()};
    }

    @Test
    void theFlagsAreValidatedAtStartWithOperatorFacingMessages(@TempDir Path dir) throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("mesh-ca");
        Path caFile = ca.writeCertificate(dir, "ca");
        TestCertificates.PemPair n1 = ca.issue("n1").write(dir, "n1");
        String db = dir.resolve("n1.db").toString();
        String[] mesh = {"--port", "0", "--db", db, "--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1:" + freePort()};

        CliTest.Run certOnly = run(concat(mesh, "--mesh-tls-certfile", n1.cert().toString()));
        assertThat(certOnly.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(certOnly.err()).contains("--mesh-tls-keyfile, --mesh-tls-cafile missing");
        CliTest.Run absent = run(concat(mesh, tls(new TestCertificates.PemPair(n1.cert(), dir.resolve("gone.key")),
                caFile)));
        assertThat(absent.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(absent.err()).contains("--mesh-tls-keyfile " + dir.resolve("gone.key") + ": no such file");
        CliTest.Run single = run(concat(new String[] {"--port", "0"}, tls(n1, caFile)));
        assertThat(single.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(single.err()).contains("--mesh-tls-* are for a mesh node");
        CliTest.Run status = run("mesh", "status", "--mesh-peers", "n1=127.0.0.1:1", "--mesh-tls-cafile",
                caFile.toString());
        assertThat(status.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(status.err()).contains("--mesh-tls-certfile, --mesh-tls-keyfile missing");
        assertThat(run("--help").out()).contains("--mesh-tls-certfile", "--mesh-tls-keyfile", "--mesh-tls-cafile");

        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs(concat(mesh, tls(n1, caFile)));
        assertThat(command.serve.meshConfig().tls().subject()).isEqualTo("CN=n1");
        var summary = command.serve.effectiveSummary(command.serve.hubConfig(), command.serve.registryLimits(),
                command.serve.actorSettings());
        assertThat(summary.get("mesh_tls").toString()).startsWith("mutual TLS as CN=n1");
        SynapseHubCommand plain = new SynapseHubCommand();
        new CommandLine(plain).parseArgs(mesh);
        assertThat(plain.serve.effectiveSummary(plain.serve.hubConfig(), plain.serve.registryLimits(),
                plain.serve.actorSettings()).get("mesh_tls").toString()).startsWith("off: Raft traffic is plain gRPC");
    }

    @Test
    void threeNodesOverMutualTlsActAsOneHubAndMeshStatusNeedsACertificate(@TempDir Path dir) throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("mesh-ca");
        Path caFile = ca.writeCertificate(dir, "ca");
        String peers = "n1=127.0.0.1:" + freePort() + ",n2=127.0.0.1:" + freePort() + ",n3=127.0.0.1:" + freePort();
        List<Thread> starts = new ArrayList<>();
        List<Exception> failures = new CopyOnWriteArrayList<>();
        for (int i = 1; i <= 3; i++) {
            LoopbackHub hub = new LoopbackHub();
            hubs.add(hub);
            String id = "n" + i;
            String[] args = concat(new String[] {"--port", "0", "--db", dir.resolve(id + ".db").toString(), "--mesh-id",
                id, "--mesh-peers", peers, "--mesh-bootstrap"}, tls(ca.issue(id).write(dir, id), caFile));
            Thread t = new Thread(() -> { // each node waits for a leader before it serves: start them together
                try {
                    hub.start(args);
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
        CliTest.Run granted = run("claim", "T1", "--url", hubs.get(1).url(), "--name", "alice", "--timeout", "20");
        assertThat(granted.code()).as(granted.err()).isEqualTo(ExitCodes.OK);
        CliTest.Run state = run("state", "--url", hubs.get(2).url(), "--timeout", "20", "--linearizable");
        assertThat(state.out()).as("a linearizable read over the TLS transport").contains("T1").contains("alice")
                .contains("1 live claim(s) (linearizable read)");

        String[] operator = tls(ca.issue("operator").write(dir, "operator"), caFile);
        CliTest.Run status = run(concat(new String[] {"mesh", "status", "--mesh-peers", peers, "--timeout", "10"},
                operator));
        assertThat(status.code()).as(status.out() + status.err()).isEqualTo(ExitCodes.OK);
        assertThat(status.out()).containsPattern("leader n[123], 3 voters, quorum 2")
                .contains("offline queue: 0 queued (n1 0, n2 0, n3 0)");
        CliTest.Run plain = run("mesh", "status", "--mesh-peers", peers, "--timeout", "3");
        assertThat(plain.code()).as("plain gRPC is refused by every node").isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(plain.out()).contains("leader none agreed").doesNotContain("LEADER");
        assertThat(plain.err()).as("the refusal itself reads 'network closed': the command names the flags")
                .contains("if the mesh runs mutual TLS, give --mesh-tls-certfile");
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = new String[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
