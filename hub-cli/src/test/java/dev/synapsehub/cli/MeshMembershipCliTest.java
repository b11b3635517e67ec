package dev.synapsehub.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code mesh add-node} / {@code mesh remove-node} against nodes started from the command line. */
class MeshMembershipCliTest {
    private static final Pattern GROUP = Pattern.compile("group ([0-9a-f-]{36})");
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

    /** Starts nodes {@code ids} in parallel (each waits for a leader before it serves); fails on any failure. */
    private List<LoopbackHub> start(Path dir, String peers, List<String> ids, String... extra) throws Exception {
        List<LoopbackHub> started = new ArrayList<>();
        List<Thread> starts = new ArrayList<>();
        List<Exception> failures = new CopyOnWriteArrayList<>();
        for (String id : ids) {
            LoopbackHub hub = new LoopbackHub();
            hubs.add(hub);
            started.add(hub);
            List<String> args = new ArrayList<>(List.of("--port", "0", "--db", dir.resolve(id + ".db").toString(),
                    "--mesh-id", id, "--mesh-peers", peers));
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
        return started;
    }

    /**
     * {@code mesh status}, asked again for up to 30 s while a majority does not agree on a leader or a voter does
     * not answer: on a loaded machine an election may be under way just after a start or a membership change.
     */
    private static CliTest.Run status(String peers) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        CliTest.Run status = run("mesh", "status", "--mesh-peers", peers, "--timeout", "10");
        while ((status.code() != ExitCodes.OK || status.out().contains("unreachable"))
                && System.nanoTime() - deadline < 0) {
            Thread.sleep(250);
            status = run("mesh", "status", "--mesh-peers", peers, "--timeout", "10");
        }
        return status;
    }

    @Test
    void addNodeGrowsTheMeshAndRemoveNodeShrinksItWhileClaimsKeepBeingGranted(@TempDir Path dir) throws Exception {
        String three = "n1=127.0.0.1:" + freePort() + ",n2=127.0.0.1:" + freePort() + ",n3=127.0.0.1:" + freePort();
        List<LoopbackHub> first = start(dir, three, List.of("n1", "n2", "n3"), "--mesh-bootstrap");
        CliTest.Run before = status(three);
        assertThat(before.code()).as(before.out() + before.err()).isEqualTo(ExitCodes.OK);
        Matcher m = GROUP.matcher(before.out());
        assertThat(m.find()).as("mesh status shows the group: " + before.out()).isTrue();
        String group = m.group(1);
        assertThat(run("claim", "M1", "--url", first.get(0).url(), "--name", "alice", "--timeout", "20").code())
                .isEqualTo(ExitCodes.OK);

        String n4 = "n4=127.0.0.1:" + freePort();
        String four = three + "," + n4;
        CliTest.Run notRunning = run("mesh", "add-node", "--mesh-peers", three, "--node", n4, "--timeout", "5");
        assertThat(notRunning.code()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(notRunning.err()).contains("start it first").contains(group).contains("nothing was changed");

        // the new node waits for a leader before it serves agents, so it starts beside the command
        List<Exception> failed = new CopyOnWriteArrayList<>();
        List<LoopbackHub> fourth = new ArrayList<>();
        Thread starting = new Thread(() -> {
            try {
                fourth.addAll(start(dir, four, List.of("n4"), "--mesh-group", group));
            } catch (Exception | AssertionError e) {
                failed.add(new IllegalStateException(e));
            }
        });
        starting.start();
        CliTest.Run added = null;
        long deadline = System.nanoTime() + 60_000_000_000L;
        do { // until n4's Raft server answers (it starts in the thread above)
            if (added != null) {
                Thread.sleep(200);
            }
            added = run("mesh", "add-node", "--mesh-peers", three, "--node", n4, "--timeout", "30");
        } while (added.code() == ExitCodes.UNAVAILABLE && added.err().contains("start it first")
                && System.nanoTime() - deadline < 0);
        assertThat(added.code()).as(added.err()).isEqualTo(ExitCodes.OK);
        assertThat(added.out()).contains("voters n1,n2,n3 -> n1,n2,n3,n4").contains("group " + group)
                .contains("--mesh-peers " + four);
        starting.join(120_000);
        assertThat(failed).isEmpty();

        CliTest.Run grown = status(four);
        assertThat(grown.code()).as(grown.out() + grown.err()).isEqualTo(ExitCodes.OK);
        assertThat(grown.out()).containsPattern("leader n[1234], 4 voters, quorum 3").contains("group " + group)
                .doesNotContain("unreachable");
        CliTest.Run viaFourth = run("claim", "M2", "--url", fourth.get(0).url(), "--name", "alice", "--timeout", "20");
        assertThat(viaFourth.code()).as(viaFourth.out() + viaFourth.err()).isEqualTo(ExitCodes.OK);

        String follower = grown.out().lines().filter(l -> l.contains("FOLLOWER") && !l.trim().startsWith("n4"))
                .findFirst().orElseThrow().trim().split("\\s+")[0];
        CliTest.Run removed = run("mesh", "remove-node", "--mesh-peers", four, "--node", follower, "--timeout", "30");
        assertThat(removed.code()).as(removed.err()).isEqualTo(ExitCodes.OK);
        assertThat(removed.out()).contains("-> ").contains("group " + group);
        String after = removed.out().lines().filter(l -> l.startsWith("--mesh-peers ")).findFirst().orElseThrow()
                .substring("--mesh-peers ".length());
        assertThat(after).doesNotContain(follower + "=").contains(n4);
        hubs.get(Integer.parseInt(follower.substring(1)) - 1).close();
        CliTest.Run shrunk = status(after);
        assertThat(shrunk.code()).as(shrunk.out() + shrunk.err()).isEqualTo(ExitCodes.OK);
        assertThat(shrunk.out()).containsPattern("3 voters, quorum 2").doesNotContain("unreachable");
        String survivor = List.of("n1", "n2", "n3").stream().filter(id -> !id.equals(follower)).findFirst().orElseThrow();
        CliTest.Run claim = run("claim", "M3", "--url", hubs.get(Integer.parseInt(survivor.substring(1)) - 1).url(),
                "--name", "alice", "--timeout", "20");
        assertThat(claim.code()).as(claim.err()).isEqualTo(ExitCodes.OK);

        CliTest.Run unknown = run("mesh", "remove-node", "--mesh-peers", after, "--node", "n9");
        assertThat(unknown.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.err()).contains("'n9' is not one of");
        CliTest.Run stale = run("mesh", "remove-node", "--mesh-peers", four, "--node", n4.substring(0, 2));
        assertThat(stale.code()).as("an out-of-date --mesh-peers is refused").isEqualTo(ExitCodes.USAGE);
        assertThat(stale.err()).contains("but the mesh's voters are");
    }

    /** Adds {@code node} to the mesh of {@code voters}, asking again while it does not answer yet (it starts beside). */
    private static CliTest.Run addNode(String voters, String node) throws InterruptedException {
        CliTest.Run added = null;
        long deadline = System.nanoTime() + 60_000_000_000L;
        do {
            if (added != null) {
                Thread.sleep(200);
            }
            added = run("mesh", "add-node", "--mesh-peers", voters, "--node", node, "--timeout", "30");
        } while (added.code() == ExitCodes.UNAVAILABLE && added.err().contains("start it first")
                && System.nanoTime() - deadline < 0);
        return added;
    }

    @Test
    @org.junit.jupiter.api.Timeout(value = 5, unit = java.util.concurrent.TimeUnit.MINUTES)
    void aVoterThatLostItsStorageIsRefusedAndRejoinsByRemoveNodeAndAddNode(@TempDir Path dir) throws Exception {
        int[] ports = {freePort(), freePort(), freePort()};
        String three = "n1=127.0.0.1:" + ports[0] + ",n2=127.0.0.1:" + ports[1] + ",n3=127.0.0.1:" + ports[2];
        String two = "n1=127.0.0.1:" + ports[0] + ",n2=127.0.0.1:" + ports[1];
        String n3 = "n3=127.0.0.1:" + ports[2];
        List<LoopbackHub> first = start(dir, three, List.of("n1", "n2", "n3"), "--mesh-bootstrap");
        assertThat(run("claim", "L1", "--url", first.get(0).url(), "--name", "alice", "--timeout", "20").code())
                .isEqualTo(ExitCodes.OK);
        Matcher m = GROUP.matcher(status(three).out());
        assertThat(m.find()).isTrue();
        String group = m.group(1);

        // n3 leads when it is lost: remove-node must then wait for the others to elect a leader that answers
        CliTest.Run moved = run("mesh", "transfer-leader", "--mesh-peers", three, "--to", "n3", "--timeout", "30");
        assertThat(moved.code()).as(moved.err()).isEqualTo(ExitCodes.OK);
        // n3 loses its storage: its Raft directory and its journal are moved aside
        first.get(2).close();
        for (String name : List.of("n3.db", "n3.db-wal", "n3.db-shm", "n3.db.raft")) {
            Path p = dir.resolve(name);
            if (java.nio.file.Files.exists(p)) {
                java.nio.file.Files.move(p, dir.resolve("aside-" + name));
            }
        }
        String db = dir.resolve("n3.db").toString();
        CliTest.Run refused = run("--port", "0", "--db", db, "--mesh-id", "n3", "--mesh-peers", three);
        assertThat(refused.code()).as(refused.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(refused.err()).contains("mesh node n3 has no Raft state").contains("has committed records")
                .contains("mesh remove-node --mesh-peers " + three + " --node n3")
                .contains("--mesh-group " + group).contains("mesh add-node --mesh-peers " + two + " --node " + n3);

        // the recipe the refusal names: remove it, start it on the empty storage, add it
        CliTest.Run removed = run("mesh", "remove-node", "--mesh-peers", three, "--node", "n3", "--timeout", "30");
        assertThat(removed.code()).as(removed.err()).isEqualTo(ExitCodes.OK);
        List<Exception> failed = new CopyOnWriteArrayList<>();
        List<LoopbackHub> back = new CopyOnWriteArrayList<>();
        Thread starting = new Thread(() -> {
            try {
                back.addAll(start(dir, three, List.of("n3"), "--mesh-group", group));
            } catch (Exception | AssertionError e) {
                failed.add(new IllegalStateException(e));
            }
        });
        starting.start();
        CliTest.Run added = addNode(two, n3);
        assertThat(added.code()).as(added.err()).isEqualTo(ExitCodes.OK);
        assertThat(added.out()).contains("voters n1,n2 -> n1,n2,n3").contains("group " + group);
        starting.join(120_000);
        assertThat(failed).isEmpty();
        CliTest.Run status = status(three);
        assertThat(status.out()).as(status.err()).containsPattern("3 voters, quorum 2").doesNotContain("unreachable");
        CliTest.Run through = run("claim", "L2", "--url", back.get(0).url(), "--name", "alice", "--timeout", "20");
        assertThat(through.code()).as(through.out() + through.err()).isEqualTo(ExitCodes.OK);
    }

    @Test
    void aNodeKeepsTheGroupItsStorageHoldsAndRefusesAnotherOrAMalformedOne(@TempDir Path dir) throws Exception {
        String db = dir.resolve("n1.db").toString();
        CliTest.Run malformed = run("--port", "0", "--db", db, "--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1:1",
                "--mesh-group", "not-a-uuid");
        assertThat(malformed.code()).isNotEqualTo(ExitCodes.OK);
        assertThat(malformed.err()).contains("--mesh-group 'not-a-uuid' is not a UUID");

        java.nio.file.Files.createDirectories(dir.resolve("n1.db.raft").resolve("0b6f3c5e-1f8e-3c61-9d4c-1a2b3c4d5e6f"));
        SynapseHubCommand command = new SynapseHubCommand();
        new picocli.CommandLine(command).parseArgs("--db", db, "--mesh-id", "n1", "--mesh-peers",
                "n1=127.0.0.1:1,n2=127.0.0.1:2");
        assertThat(command.serve.meshConfig().groupId()).as("the stored group, not one derived from today's peers")
                .hasToString("0b6f3c5e-1f8e-3c61-9d4c-1a2b3c4d5e6f");
        CliTest.Run other = run("--port", "0", "--db", db, "--mesh-id", "n1", "--mesh-peers", "n1=127.0.0.1:1",
                "--mesh-group", "11111111-2222-3333-4444-555555555555");
        assertThat(other.code()).isNotEqualTo(ExitCodes.OK);
        assertThat(other.err()).contains("differs from the group 0b6f3c5e-1f8e-3c61-9d4c-1a2b3c4d5e6f");
    }
}
