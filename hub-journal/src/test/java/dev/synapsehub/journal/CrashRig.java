package dev.synapsehub.journal;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.state.CoordinationState;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The SIGKILL rig shared by the crash and power-loss suites: runs {@link CrashChild} (the core
 * and the SQLite journal under durable load) in a child JVM, kills it at random moments,
 * restarts on the same file, and after each kill checks the file against everything the child
 * acknowledged: every acknowledged event committed as acknowledged, one live owner per task
 * along the log, the replayed state equal to the log's live authority, and acknowledged keyed
 * grants replaying their first response with nobody online.
 */
final class CrashRig {
    private final Path dir;
    private final Path sqliteDir;
    private final Map<String, String> childEnvironment;
    private final String label;

    /**
     * A rig writing into {@code dir}, its children's SQLite library into {@code sqliteDir} (a
     * directory the test removes, outside any faultfs match: the library is loaded from the disk);
     * {@code childEnvironment} is added to the child's (faults, preloads).
     */
    CrashRig(Path dir, Path sqliteDir, Map<String, String> childEnvironment, String label) {
        this.dir = dir;
        this.sqliteDir = sqliteDir;
        this.childEnvironment = childEnvironment;
        this.label = label;
    }

    /** What a run of kills saw. */
    record Summary(int kills, int killedWithAcks, int acknowledged, List<String> keyedVerbs) {
    }

    /** {@code iterations} kill-restart-verify rounds on one file from {@code seed}. */
    Summary run(int iterations, long seed) throws Exception {
        Random random = new Random(seed);
        Path db = dir.resolve("crash.db");
        List<Ack> acked = new ArrayList<>();
        List<Keyed> keyed = new ArrayList<>();
        double offset = 0;
        long started = System.nanoTime();
        int killedWithAcks = 0;
        for (int i = 0; i < iterations; i++) {
            List<String> lines = runAndKill(db, offset, seed + i, 50 + random.nextInt(300));
            for (String line : lines) {
                String[] f = line.split(" ");
                if (f[0].equals("ACK")) {
                    acked.add(new Ack(Long.parseLong(f[1]), f[2], f[3], f[4], Long.parseLong(f[5])));
                } else if (f[0].equals("IDEM")) {
                    keyed.add(new Keyed(f[1], f[2], f[3], f[4], f[5],
                            new String(Base64.getDecoder().decode(f[6]), StandardCharsets.UTF_8)));
                } else if (f[0].equals("ERROR")) {
                    fail("child reported " + line + " (seed " + seed + ")");
                }
            }
            if (lines.stream().anyMatch(l -> l.startsWith("ACK"))) {
                killedWithAcks++;
            }
            verify(db, acked, keyed, offset + System.currentTimeMillis() / 1000.0, seed, i);
            offset += 20; // leases of 30..120 s expire across a few restarts
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf("%s: %d kills, %d acknowledged events, %d keyed grants, %.1f s, seed %d%n",
                label, iterations, acked.size(), keyed.size(), seconds, seed);
        return new Summary(iterations, killedWithAcks, acked.size(), keyed.stream().map(Keyed::verb).toList());
    }

    private record Ack(long seq, String kind, String task, String owner, long epoch) {
    }

    private record Keyed(String verb, String agent, String task, String to, String rawKey, String response) {
    }

    /** What the journal says a task's authority is, walking events in seq order. */
    private record Holder(String owner, long epoch, double expiresAt) {
    }

    /** A started {@link CrashChild}, its acknowledged lines read into {@code lines} until it dies. */
    record Running(Process process, Thread reader, List<String> lines) {
    }

    /**
     * Starts a {@link CrashChild} on {@code db} and waits until it has opened its journal (60 s at
     * most); it then acknowledges under load until it is killed.
     */
    Running start(Path db, double offset, long seed) throws Exception {
        // AppCDS would need a jar class path (surefire hands us directories), so only -Xshare:auto.
        ProcessBuilder pb = new ProcessBuilder(ChildJvm.command(sqliteDir,
                List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xmx128m"),
                CrashChild.class, db.toString(), Double.toString(offset), Long.toString(seed)));
        pb.environment().putAll(childEnvironment);
        pb.redirectError(new File(dir.toFile(), "child-" + seed + ".err"));
        Process child = pb.start();
        List<String> lines = new CopyOnWriteArrayList<>();
        CountDownLatch ready = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    if (line.startsWith("READY")) {
                        ready.countDown();
                    } else if (line.endsWith(" $")) { // a line cut by the kill is not an acknowledgement
                        lines.add(line.substring(0, line.length() - 2));
                    }
                }
            } catch (Exception ignored) {
                // the pipe breaks when the child dies
            }
        });
        reader.start();
        if (!ready.await(60, TimeUnit.SECONDS)) {
            child.destroyForcibly().waitFor();
            fail("child did not start; see " + dir.resolve("child-" + seed + ".err"));
        }
        return new Running(child, reader, lines);
    }

    private List<String> runAndKill(Path db, double offset, long seed, int runMillis) throws Exception {
        Running running = start(db, offset, seed);
        Process child = running.process();
        List<String> lines = running.lines();
        // the random moment is counted from the first acknowledgement, so the kill lands under
        // load even on a machine slow to warm up
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (lines.isEmpty() && child.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        Thread.sleep(runMillis);
        child.destroyForcibly(); // SIGKILL
        child.waitFor(30, TimeUnit.SECONDS);
        running.reader().join(30_000);
        return lines;
    }

    private void verify(Path db, List<Ack> acked, List<Keyed> keyed, double now, long seed, int iteration)
            throws Exception {
        String where = " (iteration " + iteration + ", seed " + seed + ")";
        SqliteJournal journal = SqliteJournal.open(db);
        TreeMap<Long, CoordinationEvent> events = new TreeMap<>();
        journal.replay(e -> events.put(e.seq(), e.event()));
        assertThat(journal.lastReplay().corrupt()).as("corrupt rows" + where).isZero();

        // 1. every acknowledged event is committed, at its seq, as acknowledged
        for (Ack ack : acked) {
            CoordinationEvent e = events.get(ack.seq());
            assertThat(e).as("acknowledged " + ack + " is in the journal" + where).isNotNull();
            assertThat(e.kind()).as(ack + where).isEqualTo(ack.kind());
            if (e instanceof ClaimSnapshotEvent s) {
                assertThat(s.claim().taskId() + " " + s.claim().owner() + " " + s.claim().epoch())
                        .as(ack + where).isEqualTo(ack.task() + " " + ack.owner() + " " + ack.epoch());
            } else {
                assertThat(((ClaimReleasedEvent) e).taskId()).as(ack + where).isEqualTo(ack.task());
            }
        }

        // 2. walking the log: one live owner per task, nothing released comes back, epochs strictly increase
        Map<String, Holder> holders = new HashMap<>();
        long maxEpoch = 0;
        for (Map.Entry<Long, CoordinationEvent> entry : events.entrySet()) {
            String at = " at seq " + entry.getKey() + where;
            CoordinationEvent e = entry.getValue();
            if (e instanceof ClaimSnapshotEvent s) {
                Claim c = s.claim();
                Holder h = holders.get(c.taskId());
                boolean held = h != null && h.expiresAt() > s.ts();
                switch (s.change()) {
                    case CLAIM -> {
                        assertThat(!held || h.owner().equals(c.owner())).as("two live owners of " + c.taskId() + at).isTrue();
                        assertThat(c.epoch()).as("epochs strictly increase" + at).isGreaterThan(maxEpoch);
                    }
                    case HANDOFF -> {
                        assertThat(held).as("handoff of a task not held" + at).isTrue();
                        assertThat(c.epoch()).as("epochs strictly increase" + at).isGreaterThan(maxEpoch);
                    }
                    default -> {
                        assertThat(held).as("update of a released or expired task (resurrection)" + at).isTrue();
                        assertThat(c.owner() + c.epoch()).as(at).isEqualTo(h.owner() + h.epoch());
                    }
                }
                maxEpoch = Math.max(maxEpoch, c.epoch());
                holders.put(c.taskId(), new Holder(c.owner(), c.epoch(), c.leaseExpiresAt()));
            } else if (e instanceof ClaimReleasedEvent r) {
                Holder h = holders.remove(r.taskId());
                assertThat(h != null && h.expiresAt() > r.ts()).as("release of a task not held" + at).isTrue();
            }
        }

        // 3. the restarted state is exactly the log's live authority at restart time
        CoordinationState state = new CoordinationState();
        state.replay(journal, now, n -> { });
        Map<String, String> expected = new TreeMap<>();
        holders.forEach((task, h) -> {
            if (h.expiresAt() > now) {
                expected.put(task, h.owner() + "@" + h.epoch());
            }
        });
        Map<String, String> actual = new TreeMap<>();
        for (Claim c : state.claims().snapshot(now)) {
            actual.put(c.taskId(), c.owner() + "@" + c.epoch());
        }
        assertThat(actual).as("replayed live claims" + where).isEqualTo(expected);
        assertThat(state.claims().epochCounter()).as(where).isEqualTo(maxEpoch);

        // 4. acknowledged keyed grants still replay their first response after the restart, before
        //    anything of the present moment is weighed: nobody is online now, so a handoff's
        //    recipient is offline, yet its retry gets handoff's first answer (INV-CR-1)
        CoordinationActor actor = new CoordinationActor(state, journal, () -> now, ActorSettings.DEFAULTS);
        actor.start();
        try {
            long seqBefore = journal.lastSeq();
            for (Keyed k : keyed.subList(Math.max(0, keyed.size() - 40), keyed.size())) {
                Mutation retry = new Mutation(CrashChild.command(k.verb(), k.agent(), k.task(), k.to(), false),
                        new Idempotency(Idempotency.key(k.agent(), k.verb(), k.rawKey()),
                                CrashChild.digest(k.verb(), k.agent(), k.task()), Fixtures.RENDERER));
                assertThat(Fixtures.await(actor.submit(retry))).as("retry of " + k.verb() + " " + k.rawKey() + where)
                        .isEqualTo(new Outcome.Replayed(k.response()));
            }
            assertThat(journal.lastSeq()).as("retries change nothing" + where).isEqualTo(seqBefore);
        } finally {
            actor.close();
        }
    }
}
