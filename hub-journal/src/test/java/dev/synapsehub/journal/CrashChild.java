package dev.synapsehub.journal;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.Reply;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The hub core and SQLite journal under load, run in a child JVM by {@link CrashSafetyTest}
 * and killed with SIGKILL. Prints one flushed line per acknowledged (committed) outcome:
 * {@code ACK seq kind task owner epoch $} per committed claim-family event and
 * {@code IDEM verb agent task recipient rawKey base64(response) $} per acknowledged keyed grant
 * (claims, releases, handoffs, updates and checkpoints are keyed alike).
 *
 * <p>Arguments: db path, clock offset in seconds, random seed.
 */
public final class CrashChild {
    static final int AGENTS = 6;
    static final int TASKS = 12;

    private static final PrintStream OUT = new PrintStream(new FileOutputStream(FileDescriptor.out), false,
            StandardCharsets.UTF_8);

    private CrashChild() {
    }

    static synchronized void emit(String line) {
        OUT.print(line + " $\n");
        OUT.flush();
    }

    static String digest(String verb, String agent, String task) {
        return Fixtures.sha256(verb + "|" + agent + "|" + task);
    }

    /**
     * The command of a keyed request as the child sends it; {@code recipientOnline} is false for
     * the retries the suite sends after a restart, when nobody is connected.
     */
    static Command command(String verb, String agent, String task, String to, boolean recipientOnline) {
        switch (verb) {
            case "claim":
                return Fixtures.claim(agent, task, 60.0);
            case "release":
                return new ReleaseCommand(agent, task, null);
            case "handoff":
                return new HandoffCommand(agent, task, to, recipientOnline, recipientOnline ? to : null, null, null);
            case "task_update":
                return new TaskUpdateCommand(agent, task, null, "keyed", null, null, null);
            case "checkpoint":
                return new CheckpointCommand(agent, task, "cp-" + agent, null);
            default:
                throw new IllegalArgumentException(verb);
        }
    }

    public static void main(String[] args) throws Exception {
        Path db = Path.of(args[0]);
        double offset = Double.parseDouble(args[1]);
        long seed = Long.parseLong(args[2]);
        Clock clock = () -> System.currentTimeMillis() / 1000.0 + offset;
        DurableCoordination hub = DurableCoordination.open(db, clock);
        emit("READY " + hub.journal().lastSeq());
        AtomicLong keys = new AtomicLong();
        for (int a = 0; a < AGENTS; a++) {
            String agent = "agent-" + a;
            Random random = new Random(seed * 31 + a);
            Thread t = new Thread(() -> load(hub, agent, random, keys, seed), agent);
            t.setDaemon(true);
            t.start();
        }
        Thread.sleep(Long.MAX_VALUE); // until SIGKILL
    }

    private static void load(DurableCoordination hub, String agent, Random random, AtomicLong keys, long seed) {
        while (true) {
            String task = "t" + random.nextInt(TASKS);
            int dice = random.nextInt(100);
            Mutation mutation;
            String rawKey = null;
            String verb;
            String to = "agent-" + random.nextInt(AGENTS);
            if (dice < 45) {
                verb = "claim";
            } else if (dice < 70) {
                verb = "release";
            } else if (dice < 85) {
                verb = "handoff";
            } else if (dice < 95) {
                verb = "task_update";
            } else {
                verb = "checkpoint";
            }
            Command command = verb.equals("claim") ? Fixtures.claim(agent, task, 30.0 + random.nextInt(90))
                    : command(verb, agent, task, to, true);
            if (random.nextInt(100) < 30) {
                rawKey = seed + "-" + agent + "-" + keys.incrementAndGet();
                mutation = new Mutation(command, new Idempotency(Idempotency.key(agent, verb, rawKey),
                        digest(verb, agent, task), Fixtures.RENDERER));
            } else {
                mutation = Mutation.of(command);
            }
            Outcome outcome;
            try {
                outcome = hub.actor().submit(mutation).get();
            } catch (Exception e) {
                emit("ERROR " + e);
                return;
            }
            if (!(outcome instanceof Outcome.Decided decided) || !(decided.reply() instanceof Reply.Granted)) {
                continue;
            }
            for (JournaledEvent committed : decided.committed()) {
                if (committed.event() instanceof ClaimSnapshotEvent s) {
                    emit("ACK " + committed.seq() + " " + s.kind() + " " + s.claim().taskId() + " " + s.claim().owner()
                            + " " + s.claim().epoch());
                } else if (committed.event() instanceof ClaimReleasedEvent r) {
                    Reply.Granted g = (Reply.Granted) decided.reply();
                    emit("ACK " + committed.seq() + " release " + r.taskId() + " " + agent + " " + g.claim().epoch());
                }
            }
            if (rawKey != null) {
                emit("IDEM " + verb + " " + agent + " " + task + " " + to + " " + rawKey + " "
                        + Base64.getEncoder().encodeToString(decided.storedResponse().getBytes(StandardCharsets.UTF_8)));
            }
        }
    }
}
