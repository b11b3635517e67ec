package dev.synapsehub.journal;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Faults injected between SQLite and the disk (the faultfs shim) while the core runs on the
 * real journal in a child JVM: a write error, a full disk, a failed fsync, a crash in the
 * middle of a page. In every case the hub refuses what it could not journal, answers nothing
 * it did not commit, says so in its metrics, and writes again once the fault clears; and what
 * a restart finds is exactly what was acknowledged (plus, after a crash during an fsync
 * failure, possibly the batch nobody was answered about).
 */
class JournalFaultTest {
    @TempDir
    Path dir;

    private Process child;
    private OutputStream commands;
    private final Map<String, String> answers = new ConcurrentHashMap<>();
    private final List<String> statuses = java.util.Collections.synchronizedList(new ArrayList<>());
    private FaultFs faults;
    private Path db;

    @AfterEach
    void kill() {
        if (child != null) {
            child.destroyForcibly();
        }
    }

    private void start() throws Exception {
        Path data = dir.resolve("data");
        Files.createDirectories(data);
        db = data.resolve("hub.db");
        if (faults == null) {
            faults = new FaultFs(dir.resolve("faultfs.control"));
        }
        answers.clear();
        ProcessBuilder pb = new ProcessBuilder(ChildJvm.command(ChildJvm.sqliteDirIn(dir),
                List.of("-Xmx128m", "-XX:TieredStopAtLevel=1"), FaultChild.class, db.toString()));
        pb.environment().putAll(faults.environment(data, false));
        pb.redirectError(dir.resolve("child.err").toFile());
        child = pb.start();
        commands = child.getOutputStream();
        java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(1);
        Process mine = child;
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(mine.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    if (!line.endsWith(" $")) {
                        continue;
                    }
                    String[] f = line.substring(0, line.length() - 2).split(" ");
                    switch (f[0]) {
                        case "READY" -> ready.countDown();
                        case "ANSWER" -> answers.put(f[1], f[2]);
                        case "STATUS" -> statuses.add(String.join(" ", List.of(f).subList(1, f.length)));
                        default -> { }
                    }
                }
            } catch (Exception ignored) {
                // the pipe breaks when the child dies
            }
        });
        reader.setDaemon(true);
        reader.start();
        assertThat(ready.await(60, TimeUnit.SECONDS)).as("child started; see " + dir.resolve("child.err")).isTrue();
    }

    private void send(String line) throws Exception {
        commands.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        commands.flush();
    }

    private String answer(String id) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            String a = answers.get(id);
            if (a != null) {
                return a;
            }
            Thread.sleep(5);
        }
        throw new AssertionError("no answer to " + id + "; answers " + answers);
    }

    private String status() throws Exception {
        int before = statuses.size();
        send("status");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (statuses.size() == before && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        return statuses.get(statuses.size() - 1);
    }

    private void stop() throws Exception {
        send("stop");
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
        child = null;
    }

    /** The live owners a restart rebuilds from the journal, as task=owner. */
    private TreeSet<String> replayedOwners() throws Exception {
        SqliteJournal journal = SqliteJournal.open(db);
        try {
            assertThat(journal.lastReplay().corrupt()).isZero();
            CoordinationState state = new CoordinationState();
            state.replay(journal, System.currentTimeMillis() / 1000.0, n -> { });
            TreeSet<String> owners = new TreeSet<>();
            for (Claim c : state.claims().snapshot(System.currentTimeMillis() / 1000.0)) {
                owners.add(c.taskId() + "=" + c.owner());
            }
            return owners;
        } finally {
            journal.close();
        }
    }

    private void aWriteFaultIsRefusedAndTheJournalRecovers(int errno) throws Exception {
        start();
        send("claim c1 alice T1");
        assertThat(answer("c1")).isEqualTo("granted");
        faults.failWrites(errno);
        send("claim c2 bob T2");
        assertThat(answer("c2")).isEqualTo("refused:JOURNAL_FAILED");
        assertThat(status()).contains("writing=false").contains("doubt=false");
        send("claim c3 carol T3");
        assertThat(answer("c3")).as("still failing").isEqualTo("refused:JOURNAL_FAILED");
        assertThat(faults.faultsInjected()).isPositive();
        faults.clear();
        send("claim c4 dave T4");
        assertThat(answer("c4")).as("writes again once the fault clears").isEqualTo("granted");
        answers.remove("c2");
        send("claim c2 bob T2");
        assertThat(answer("c2")).as("a refused keyed claim is decided afresh").isEqualTo("granted");
        assertThat(status()).contains("writing=true");
        stop();
        assertThat(replayedOwners()).containsExactly("T1=alice", "T2=bob", "T4=dave");
    }

    @Test
    void aWriteErrorIsRefusedAndTheJournalWritesAgainWhenItClears() throws Exception {
        aWriteFaultIsRefusedAndTheJournalRecovers(FaultFs.EIO);
    }

    @Test
    void aFullDiskIsRefusedAndTheJournalWritesAgainWhenThereIsRoom() throws Exception {
        aWriteFaultIsRefusedAndTheJournalRecovers(FaultFs.ENOSPC);
    }

    @Test
    void aFailedFsyncIsNeitherGrantedNorRefusedUntilTheJournalSettlesIt() throws Exception {
        start();
        send("claim c1 alice T1");
        assertThat(answer("c1")).isEqualTo("granted");
        faults.failFsync(FaultFs.EIO);
        send("claim c2 bob T2");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!status().contains("doubt=true") && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(status()).contains("doubt=true").contains("writing=false");
        Thread.sleep(300);
        assertThat(answers).as("nothing is answered while the outcome is unknown").doesNotContainKey("c2");
        faults.clear();
        // the journal commits again; its own commit takes the place of the doubtful frames,
        // so the batch is not in the journal and is refused, now that this is certain
        assertThat(answer("c2")).isEqualTo("refused:JOURNAL_FAILED");
        assertThat(status()).contains("doubt=false").contains("writing=true");
        send("claim c3 bob T2");
        assertThat(answer("c3")).isEqualTo("granted");
        stop();
        assertThat(replayedOwners()).containsExactly("T1=alice", "T2=bob");
    }

    @Test
    void aCrashWhileAnFsyncFailedAnswersNobodyAndTheRestartFindsTheBatchOrNot() throws Exception {
        start();
        send("claim c1 alice T1");
        assertThat(answer("c1")).isEqualTo("granted");
        faults.failFsync(FaultFs.EIO);
        send("claim c2 bob T2");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!status().contains("doubt=true") && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        child.destroyForcibly().waitFor(); // the machine goes down before the disk recovers
        child = null;
        faults.clear();
        assertThat(answers).doesNotContainKey("c2"); // nobody was told anything about T2
        // Whether the batch is in the journal depends on which frames reached the disk (the
        // settling commit's own frames may have taken their place); either way nobody was told
        // otherwise, and the keyed retry learns the truth from the journal.
        boolean inJournal = replayedOwners().contains("T2=bob");
        assertThat(replayedOwners()).contains("T1=alice");
        start();
        send("claim c2 bob T2");
        assertThat(answer("c2")).isEqualTo(inJournal ? "replayed" : "granted");
        stop();
        assertThat(replayedOwners()).containsExactly("T1=alice", "T2=bob");
    }

    @Test
    void aCrashInTheMiddleOfAPageLosesNothingAcknowledged() throws Exception {
        start();
        for (int i = 0; i < 20; i++) {
            send("claim k" + i + " agent-" + i + " T" + i);
        }
        for (int i = 0; i < 20; i++) {
            assertThat(answer("k" + i)).isEqualTo("granted");
        }
        faults.tearNextWrite();
        send("claim torn zed TZ");
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("the child died mid-write").isTrue();
        child = null;
        faults.clear();
        assertThat(answers).doesNotContainKey("torn");
        TreeSet<String> owners = replayedOwners();
        for (int i = 0; i < 20; i++) {
            assertThat(owners).contains("T" + i + "=agent-" + i);
        }
        assertThat(owners).doesNotContain("TZ=zed");
        start();
        send("claim after zed TZ");
        assertThat(answer("after")).isEqualTo("granted");
        stop();
    }
}
