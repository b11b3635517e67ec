package dev.synapsehub.journal;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.reply.Reply;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The hub core on a SQLite journal in a child JVM, driven line by line through stdin by
 * {@link JournalFaultTest} while the faultfs shim breaks its disk. Commands:
 * {@code claim ID AGENT TASK} (a keyed claim; its answer comes whenever the actor gives it:
 * {@code ANSWER ID granted|refused:REASON|...}), {@code status} ({@code STATUS writing=B doubt=B
 * failures=N lastSeq=N}), {@code stop} (a clean close). Every output line ends in {@code " $"}.
 *
 * <p>Argument: the db path.
 */
public final class FaultChild {
    private static final PrintStream OUT = new PrintStream(new FileOutputStream(FileDescriptor.out), false,
            StandardCharsets.UTF_8);

    private FaultChild() {
    }

    private static synchronized void emit(String line) {
        OUT.print(line + " $\n");
        OUT.flush();
    }

    public static void main(String[] args) throws Exception {
        DurableCoordination hub = DurableCoordination.open(Path.of(args[0]), Clock.system());
        emit("READY " + hub.journal().lastSeq());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "claim" -> {
                    String id = f[1];
                    Mutation keyed = new Mutation(Fixtures.claim(f[2], f[3], null), new Idempotency(
                            Idempotency.key(f[2], "claim", id), Fixtures.sha256(f[2] + f[3]), Fixtures.RENDERER));
                    hub.actor().submit(keyed).whenComplete((outcome, failure) -> emit("ANSWER " + id + " "
                            + (failure != null ? "failure:" + failure : describe(outcome))));
                }
                case "status" -> emit("STATUS writing=" + hub.actor().metrics().journalWriting() + " doubt="
                        + hub.actor().metrics().journalInDoubt() + " failures=" + hub.actor().metrics().journalFailures()
                        + " lastSeq=" + hub.journal().lastSeq());
                case "stop" -> {
                    hub.actor().close();
                    emit("STOPPED");
                    return;
                }
                default -> emit("ERROR unknown command " + line);
            }
        }
    }

    private static String describe(Outcome outcome) {
        if (outcome instanceof Outcome.Decided d) {
            return d.reply() instanceof Reply.Granted ? "granted" : "denied";
        } else if (outcome instanceof Outcome.Refused r) {
            return "refused:" + r.reason();
        } else if (outcome instanceof Outcome.Replayed) {
            return "replayed";
        }
        return outcome.getClass().getSimpleName();
    }
}
