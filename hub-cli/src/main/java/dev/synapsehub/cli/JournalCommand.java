package dev.synapsehub.cli;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.journal.JournalRefusedException;
import dev.synapsehub.journal.ReplayStats;
import dev.synapsehub.journal.SqliteJournal;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

/** {@code synapse-hub journal inspect|verify --db FILE}: look into a journal file offline. */
@Command(name = "journal", description = "Inspect or verify a journal file (the hub must not be running on it).",
        mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER,
        subcommands = {JournalCommand.Inspect.class, JournalCommand.Verify.class})
public final class JournalCommand {

    /** What one replay of the file found. */
    record Reading(SqliteJournal journal, ReplayStats stats, Map<String, Long> kinds, CoordinationState state,
                   double replayedAt) {
    }

    static Reading read(Path db) throws JournalException {
        if (!Files.isRegularFile(db)) {
            throw new JournalRefusedException(db + ": no such journal file");
        }
        SqliteJournal journal = SqliteJournal.open(db);
        CoordinationState state = new CoordinationState();
        Map<String, Long> kinds = new TreeMap<>();
        double now = System.currentTimeMillis() / 1000.0;
        try {
            journal.replay(j -> {
                kinds.merge(j.event().kind(), 1L, Long::sum);
                state.apply(j.event());
            });
            state.claims().advanceTo(now);
        } catch (JournalException | RuntimeException e) {
            journal.close();
            throw e;
        }
        return new Reading(journal, journal.lastReplay(), kinds, state, now);
    }

    /** A subcommand that replays one journal file and reports on it. */
    abstract static class JournalTool implements Callable<Integer> {
        @Option(names = "--db", required = true, paramLabel = "FILE", description = "The journal file.")
        Path db;

        @Spec
        CommandSpec spec;

        /** Reports on the replayed journal (and closes it); returns the exit code. */
        abstract int report(Reading r) throws Exception;

        @Override
        public Integer call() throws Exception {
            Reading r;
            try {
                r = read(db);
            } catch (JournalException e) {
                spec.commandLine().getErr().println("synapse-hub: " + e.getMessage());
                return ExitCodes.DATA_ERROR;
            }
            return report(r);
        }
    }

    /** {@code journal inspect}: what the file holds. */
    @Command(name = "inspect", description = "Summarise a journal: events by kind, sequence range, live claims after replay.",
            mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER)
    static final class Inspect extends JournalTool {
        @Override
        int report(Reading r) throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            try (SqliteJournal journal = r.journal()) {
                ReplayStats s = r.stats();
                out.printf("journal        %s (%,d bytes, mode %s)%n", journal.path(), Files.size(journal.path()),
                        journal.journalMode());
                out.printf("events         %,d (last seq %,d)%n", s.rows(), journal.lastSeq());
                r.kinds().forEach((kind, n) -> out.printf("  %-24s %,d%n", kind, n));
                if (s.skippedUnknown() > 0) {
                    out.printf("  %-24s %,d%n", "(unknown kinds skipped)", s.skippedUnknown());
                }
                out.printf("corrupt rows   %,d%s%n", s.corrupt(),
                        s.corrupt() > 0 ? " (first at seq " + s.firstCorruptSeq() + ")" : "");
                out.printf("replay         %.3f s (%,.0f rows/s)%n", s.seconds(), s.rowsPerSecond());
                List<Claim> live = r.state().claims().snapshot(r.replayedAt());
                out.printf("live claims    %,d (epoch counter %,d)%n", live.size(), r.state().claims().epochCounter());
                for (Claim c : live.subList(0, Math.min(20, live.size()))) {
                    out.printf("  %-24s owner %-20s epoch %d version %d status %s%n", c.taskId(), c.owner(),
                            c.epoch(), c.version(), c.status().wire());
                }
                if (live.size() > 20) {
                    out.printf("  … and %,d more%n", live.size() - 20);
                }
                out.printf("idempotency    %,d keys retained%n", r.state().idempotency().size());
            }
            return ExitCodes.OK;
        }
    }

    /** {@code journal verify}: exit 0 only for a journal that replays cleanly. */
    @Command(name = "verify", description = "Replay a journal fully; exit 0 when every row decodes, 4 otherwise.",
            mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER)
    static final class Verify extends JournalTool {
        @Override
        int report(Reading r) throws Exception {
            try (SqliteJournal journal = r.journal()) {
                ReplayStats s = r.stats();
                if (!s.clean()) {
                    spec.commandLine().getErr().printf("synapse-hub: %s: %,d corrupt row(s), first at seq %d%n",
                            journal.path(), s.corrupt(), s.firstCorruptSeq());
                    return ExitCodes.DATA_ERROR;
                }
                spec.commandLine().getOut().printf("ok: %,d events replayed cleanly, %,d live claims, last seq %,d%n",
                        s.rows(), r.state().claims().liveCount(), journal.lastSeq());
                return ExitCodes.OK;
            }
        }
    }
}
