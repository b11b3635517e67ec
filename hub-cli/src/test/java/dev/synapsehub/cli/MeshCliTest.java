package dev.synapsehub.cli;

import dev.synapsehub.mesh.MeshConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Mesh mode from the command line: {@code --mesh-id}, {@code --mesh-peers}, one hub id, Raft log beside --db. */
class MeshCliTest {
    private final List<LoopbackHub> hubs = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (LoopbackHub h : hubs) {
            h.close();
        }
    }

    private static SynapseHubCommand parse(String... args) {
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs(args);
        return command;
    }

    private static int freePort() throws IOException {
        return HubProcess.freePort(); // below the ephemeral range: no outgoing socket takes it meanwhile
    }

    @Test
    void meshOptionsAreValidatedWithOperatorFacingMessages(@TempDir Path dir) {
        String db = dir.resolve("n1.db").toString();
        assertThat(run("--port", "0", "--mesh-id", "n1", "--db", db).err()).contains("--mesh-id and --mesh-peers go together");
        assertThat(run("--port", "0", "--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1:1").err())
                .contains("a mesh node needs --db");
        assertThat(run("--port", "0", "--db", db, "--mesh-id", "n9", "--mesh-peers", "n1=127.0.0.1:1").err())
                .contains("--mesh-id 'n9' is not one of --mesh-peers");
        CliTest.Run bad = run("--port", "0", "--db", db, "--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1");
        assertThat(bad.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(bad.err()).contains("is not id=host:port");
        assertThat(run("--port", "0", "--db", db, "--mesh-id", "n1", "--mesh-peers", "n1=h:1,n1=h:2").err())
                .contains("listed twice");
        assertThat(Files.exists(dir.resolve("n1.db"))).as("nothing is created on a refused start").isFalse();
        assertThat(run("--help").out()).contains("--mesh-id").contains("--mesh-peers").contains("--mesh-commit-timeout");
        assertThat(run("mesh", "--help").out()).as("the group's summary covers the commands that change a mesh")
                .contains("move its leader or change");
    }

    @Test
    void aNodeOfANewMeshStartedWithoutBootstrapWhileItsPeersAreSilentExitsTwoNamingTheFlag(@TempDir Path dir)
            throws IOException {
        String db = dir.resolve("n1.db").toString();
        String peers = "n1=127.0.0.1:" + freePort() + ",n2=127.0.0.1:" + freePort() + ",n3=127.0.0.1:" + freePort();
        CliTest.Run refused = run("--port", "0", "--db", db, "--mesh-id", "n1", "--mesh-peers", peers,
                "--mesh-commit-timeout", "0.5");
        assertThat(refused.code()).as(refused.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(refused.err()).contains("mesh node n1 holds no Raft configuration")
                .contains("0 of the voters [n1, n2, n3] did, 2 must").contains("--mesh-bootstrap")
                .contains("n2 at 127.0.0.1:").contains("Restoring a node from its peers");
        assertThat(Files.exists(dir.resolve("n1.db.raft").resolve("synapse-unverified-start"))).as("no Raft state written")
                .isFalse();

        assertThat(run("--port", "0", "--db", db, "--mesh-bootstrap").err())
                .contains("--mesh-bootstrap is for a mesh node");
        CliTest.Run both = run("--port", "0", "--db", db, "--mesh-id", "n1", "--mesh-peers", peers, "--mesh-bootstrap",
                "--mesh-group", "11111111-2222-3333-4444-555555555555");
        assertThat(both.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(both.err()).contains("--mesh-bootstrap founds a new mesh and --mesh-group joins a running one");
        assertThat(run("--help").out()).contains("--mesh-bootstrap");
    }

    @Test
    void meshStatusRefusesATimeoutThatIsNotPositiveAsTheOtherMeshCommandsDo() {
        for (String timeout : new String[] {"-1", "0", "NaN"}) {
            CliTest.Run status = run("mesh", "status", "--mesh-peers", "n1=127.0.0.1:1", "--timeout", timeout);
            assertThat(status.code()).as("--timeout " + timeout + ": " + status.err()).isEqualTo(ExitCodes.USAGE);
            assertThat(status.err()).contains("--timeout must be a number of seconds of at least 0.001")
                    .doesNotContain("internal error");
            assertThat(status.out()).as("no voter is asked").isEmpty();
        }
    }

    @Test
    void whenNoVoterAnswersACommandWithoutTlsFlagsNamesThemAsTheLikelyCause() throws IOException {
        String peers = "n1=127.0.0.1:" + freePort() + ",n2=127.0.0.1:" + freePort();
        CliTest.Run status = run("mesh", "status", "--mesh-peers", peers, "--timeout", "1");
        assertThat(status.code()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(status.err()).contains("if the mesh runs mutual TLS, give --mesh-tls-certfile");
        CliTest.Run transfer = run("mesh", "transfer-leader", "--mesh-peers", peers, "--to", "n2", "--timeout", "1");
        assertThat(transfer.code()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(transfer.err()).contains("no leader is agreed").contains("if the mesh runs mutual TLS");
    }

    @Test
    void everyNodeShowsTheSameHubIdAndAnExplicitOneWins(@TempDir Path dir) {
        String peers = "n1=127.0.0.1:1,n2=127.0.0.1:2,n3=127.0.0.1:3";
        String id1 = parse("--db", dir.resolve("a.db").toString(), "--mesh-id", "n1", "--mesh-peers", peers)
                .serve.hubConfig().hubId();
        String id3 = parse("--db", dir.resolve("c.db").toString(), "--mesh-id", "n3", "--mesh-peers",
                "n3=127.0.0.1:3,n1=127.0.0.1:1,n2=127.0.0.1:2").serve.hubConfig().hubId();
        assertThat(id1).isEqualTo(id3).startsWith("syn-");
        assertThat(parse("--db", "x.db", "--mesh-id", "n1", "--mesh-peers", peers, "--hub-id", "syn-team")
                .serve.hubConfig().hubId()).isEqualTo("syn-team");
        MeshConfig mesh = parse("--db", dir.resolve("a.db").toString(), "--mesh-id", "n1", "--mesh-peers", peers)
                .serve.meshConfig();
        assertThat(mesh.storageDir()).isEqualTo(Path.of(dir.resolve("a.db") + ".raft"));
        assertThat(mesh.quorum()).isEqualTo(2);
    }

    @Test
    void theMembershipMayComeFromTheConfigFile(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("node.properties");
        Files.writeString(config, "mesh-id=n2\nmesh-peers=n1=127.0.0.1:9871,n2=127.0.0.1:9872\nmesh-commit-timeout=2.5\n");
        SynapseHubCommand command = CliTest.parsed("--config", config.toString(), "--db",
                dir.resolve("n2.db").toString());
        MeshConfig mesh = command.serve.meshConfig();
        assertThat(mesh.nodeId()).isEqualTo("n2");
        assertThat(mesh.peers()).hasSize(2);
        assertThat(mesh.commitTimeout()).hasMillis(2500);
    }

    @Test
    void aSingleHubsJournalIsRefusedAsAMeshNodesJournal(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        LoopbackHub single = new LoopbackHub();
        hubs.add(single);
        single.start("--port", "0", "--db", db.toString());
        assertThat(run("claim", "T1", "--url", single.url()).code()).isEqualTo(ExitCodes.OK);
        single.close();

        LoopbackHub node = new LoopbackHub();
        hubs.add(node);
        assertThatThrownBy(() -> node.start("--port", "0", "--db", db.toString(), "--mesh-id", "n1", "--mesh-peers",
                "n1=127.0.0.1:" + freePort())).hasMessageContaining("holds 1 events of a single hub")
                .as("a node restored as docs/mesh.md says is told to move its journal aside too")
                .hasMessageContaining("move the journal (with its -wal and -shm files) aside too");
        assertThat(Files.exists(Path.of(db + ".raft"))).isFalse();
    }

    /** A mesh node whose --port another program holds stops with exit 2, as a single hub does (operations.md). */
    @Test
    void aMeshNodeWhosePortIsInUseIsAConfigurationError(@TempDir Path dir) throws Exception {
        try (java.net.ServerSocket held = new java.net.ServerSocket(0, 1,
                java.net.InetAddress.getByName("127.0.0.1"))) {
            int port = held.getLocalPort();
            CliTest.Run start = run("--port", String.valueOf(port), "--db", dir.resolve("n1.db").toString(),
                    "--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1:" + freePort());
            assertThat(start.code()).as(start.err()).isEqualTo(ExitCodes.USAGE);
            assertThat(start.err()).contains("cannot listen on 127.0.0.1:" + port + ": address already in use")
                    .doesNotContain("could not start");
        }
    }

    /** A Raft address another program holds is told as that address and --mesh-peers, not as --port. */
    @Test
    void aMeshNodeWhoseRaftPortIsInUseNamesTheRaftAddress(@TempDir Path dir) throws Exception {
        try (java.net.ServerSocket held = new java.net.ServerSocket(0, 1,
                java.net.InetAddress.getByName("127.0.0.1"))) {
            int raft = held.getLocalPort();
            int ws = freePort();
            CliTest.Run start = run("--port", String.valueOf(ws), "--db", dir.resolve("n1.db").toString(),
                    "--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1:" + raft);
            assertThat(start.code()).as(start.err()).isEqualTo(ExitCodes.USAGE);
            assertThat(start.err()).contains("cannot listen on 127.0.0.1:" + raft + " (mesh node n1's Raft address): "
                    + "address already in use").contains("choose another port in n1's entry in --mesh-peers")
                    .doesNotContain("127.0.0.1:" + ws).doesNotContain("--port").doesNotContain("could not start");
        }
    }

    @Test
    void threeNodesStartedFromTheCommandLineActAsOneHub(@TempDir Path dir) throws Exception {
        String peers = "n1=127.0.0.1:" + freePort() + ",n2=127.0.0.1:" + freePort() + ",n3=127.0.0.1:" + freePort();
        List<Thread> starts = new ArrayList<>();
        List<Exception> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int i = 1; i <= 3; i++) {
            LoopbackHub hub = new LoopbackHub();
            hubs.add(hub);
            String id = "n" + i;
            // each node waits to catch up with a leader before it serves: start them together
            Thread t = new Thread(() -> {
                try {
                    hub.start("--port", "0", "--db", dir.resolve(id + ".db").toString(), "--mesh-id", id,
                            "--mesh-peers", peers, "--mesh-bootstrap");
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
        CliTest.Run granted = run("claim", "T1", "--url", hubs.get(1).url(), "--name", "alice",
                "--timeout", "20");
        assertThat(granted.code()).as(granted.err()).isEqualTo(ExitCodes.OK);
        CliTest.Run refused = run("claim", "T1", "--url", hubs.get(2).url(), "--name", "bob",
                "--timeout", "20");
        assertThat(refused.code()).isEqualTo(ExitCodes.REFUSED);
        assertThat(refused.out() + refused.err()).contains("LEASE_LIVE");
        CliTest.Run state = run("state", "--url", hubs.get(0).url(), "--timeout", "20");
        assertThat(state.out()).contains("T1").contains("alice");
        assertThat(Files.isDirectory(Path.of(dir.resolve("n1.db") + ".raft"))).isTrue();

        CliTest.Run status = run("mesh", "status", "--mesh-peers", peers, "--timeout", "10");
        assertThat(status.code()).as(status.err()).isEqualTo(ExitCodes.OK);
        assertThat(status.out()).containsPattern("leader n[123], 3 voters, quorum 2")
                .contains("LEADER").contains("FOLLOWER").contains("snapshot none")
                .contains("offline queue: 0 queued (n1 0, n2 0, n3 0)");
        CliTest.Run json = run("mesh", "status", "--mesh-peers", peers, "--json");
        assertThat(json.out()).contains("\"quorum\":2").contains("\"applied_index\"").contains("\"lag\"")
                .contains("\"queue_depth\":0");

        hubs.get(1).close();
        hubs.get(2).close(); // one of three left: no majority agrees on a leader
        CliTest.Run lost = run("mesh", "status", "--mesh-peers", peers, "--timeout", "2");
        assertThat(lost.code()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(lost.out()).contains("unreachable");
        assertThat(lost.err()).as("one voter answered: no TLS hint").doesNotContain("mutual TLS");

        // without a quorum a linearizable read is refused busy (docs/mesh.md), and the command says so
        // with the command's default --timeout: the node answers only at its commit timeout (default 5 s)
        CliTest.Run fresh = run("state", "--url", hubs.get(0).url(), "--linearizable");
        assertThat(fresh.code()).as(fresh.out() + fresh.err()).isEqualTo(ExitCodes.REFUSED);
        assertThat(fresh.out()).contains("refused (busy)").contains("No leader confirmed a read index");
        CliTest.Run queued = run("claim", "Q1", "--url", hubs.get(0).url(), "--name", "dave");
        assertThat(queued.code()).as(queued.out() + queued.err()).isEqualTo(ExitCodes.REFUSED);
        assertThat(queued.out()).as("the claim was queued, not lost: the command must say so")
                .contains("refused (queued)").contains("queued as intent");
        CliTest.Run stale = run("state", "--url", hubs.get(0).url());
        assertThat(stale.code()).isEqualTo(ExitCodes.OK);
        assertThat(stale.out()).as("a plain read of the cut-off node is last-known state and says so")
                .contains("1 live claim(s) (STALE read from").contains("1 write(s) queued here");
    }
}
