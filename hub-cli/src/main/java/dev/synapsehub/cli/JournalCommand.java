package dev.synapsehub.cli;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.journal.CorruptSnapshotException;
import dev.synapsehub.journal.BackupTargetRefusedException;
import dev.synapsehub.journal.HubHoldsJournalException;
import dev.synapsehub.journal.JournalBackup;
import dev.synapsehub.journal.JournalCheck;
import dev.synapsehub.journal.JournalControl;
import dev.synapsehub.journal.JournalRefusedException;
import dev.synapsehub.journal.ReplayStats;
import dev.synapsehub.journal.SnapshotCodec;
import dev.synapsehub.journal.SnapshotStore;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.journal.StateRecovery;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/** {@code synapse-hub journal inspect|verify|backup --db FILE}: look into a journal file read-only (snapshots included), or copy it. */
@Command(name = "journal", description = "Inspect or verify a journal file (read-only: the file is never changed, and"
        + " may be on read-only storage), or back it up (online through the running hub, or offline).",
        mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER,
        subcommands = {JournalCommand.Inspect.class, JournalCommand.Verify.class, JournalCommand.Backup.class})
public final class JournalCommand {

    /**
     * Opens an existing journal file for a tool, read-only: no WAL switch, no schema created, no
     * migration, no lock file; a file that is empty, foreign, of another hub's layout or in need of
     * a migration is refused with what it is, unchanged.
     */
    static SqliteJournal openExisting(Path db) throws JournalException {
        if (!Files.isRegularFile(db)) {
            throw new JournalRefusedException(db + ": no such journal file");
        }
        return SqliteJournal.openReadOnly(db);
    }

    /** A subcommand that opens one journal file and reports on it. */
    abstract static class JournalTool implements Callable<Integer> {
        @Option(names = "--db", required = true, paramLabel = "FILE", description = "The journal file.")
        Path db;

        @Spec
        CommandSpec spec;

        /** Reports on the open journal; returns the exit code. */
        abstract int report(SqliteJournal journal, double now) throws Exception;

        @Override
        public Integer call() throws Exception {
            try (SqliteJournal journal = openExisting(db)) {
                if (journal.hubRunning()) {
                    // safe: a read-only view in one read transaction; but it is already behind the hub
                    spec.commandLine().getErr().printf("synapse-hub: note: a hub is running on %s; this reads the"
                            + " journal as of seq %,d, which the hub may already have moved past%n", journal.path(),
                            journal.lastSeq());
                }
                return report(journal, System.currentTimeMillis() / 1000.0);
            } catch (JournalException e) {
                spec.commandLine().getErr().println("synapse-hub: " + e.getMessage());
                return ExitCodes.DATA_ERROR;
            }
        }
    }

    /** {@code journal inspect}: what the file holds. */
    @Command(name = "inspect", description = "Summarise a journal: rows by kind, sequence range, state snapshots,"
            + " retention, and the live claims of the state a start would rebuild.",
            mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER)
    static final class Inspect extends JournalTool {
        @Override
        int report(SqliteJournal journal, double now) throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            Map<String, Long> kinds = journal.rowsByKind();
            long rows = kinds.values().stream().mapToLong(Long::longValue).sum();
            out.printf("journal        %s (%,d bytes, mode %s)%n", journal.path(), Files.size(journal.path()),
                    journal.journalMode());
            out.printf("rows           %,d retained (last seq %,d)%n", rows, journal.lastSeq());
            kinds.forEach((kind, n) -> out.printf("  %-24s %,d%n", kind, n));
            long compacted = journal.compactedThrough();
            out.printf("compacted      %s%n", compacted == 0 ? "none (every row since the first is kept)"
                    : String.format("rows through seq %,d deleted by retention", compacted));
            List<SnapshotStore.Info> snapshots = journal.snapshots().list();
            int incomplete = journal.snapshots().incomplete();
            out.printf("snapshots      %d%s%n", snapshots.size(), incomplete > 0 ? " (+" + incomplete
                    + " incomplete or retired as unusable, discarded at the next start)" : "");
            for (SnapshotStore.Info info : snapshots) {
                String check;
                try {
                    SnapshotCodec.decode(journal.snapshots().read(info));
                    check = "checksum ok";
                } catch (CorruptSnapshotException e) {
                    check = "UNUSABLE: " + e.getMessage();
                }
                out.printf("  #%-5d seq %,d  taken %s  %,d bytes in %d chunk(s)  crc32c %08x  %s%n", info.id(), info.seq(),
                        Instant.ofEpochMilli((long) (info.createdAt() * 1000)), info.bytes(), info.chunks(),
                        info.crc32c(), check);
            }
            StateRecovery.Recovery r = StateRecovery.rebuild(journal, CoordinationState::new, now);
            ReplayStats s = r.tail();
            out.printf("start-up       %s, then %,d rows replayed in %.3f s (%,.0f rows/s)%n",
                    r.snapshot() == null ? "a full replay" : "snapshot #" + r.snapshot().id() + String.format(
                            " (seq %,d, loaded in %.3f s)", r.snapshot().seq(), r.loadSeconds()),
                    s.rows(), s.seconds(), s.rowsPerSecond());
            for (String fallback : r.fallbacks()) {
                out.printf("  fallback: %s%n", fallback);
            }
            if (s.skippedUnknown() > 0) {
                out.printf("  %-24s %,d%n", "(unknown kinds skipped)", s.skippedUnknown());
            }
            out.printf("corrupt rows   %,d%s%n", journal.corruptRows(),
                    journal.corruptRows() > 0 ? " (first at seq " + journal.firstCorruptSeq() + ")" : "");
            CoordinationState state = r.state();
            List<Claim> live = state.claims().snapshot(now);
            out.printf("live claims    %,d (epoch counter %,d)%n", live.size(), state.claims().epochCounter());
            for (Claim c : live.subList(0, Math.min(20, live.size()))) {
                out.printf("  %-24s owner %-20s epoch %d version %d status %s%n", c.taskId(), c.owner(),
                        c.epoch(), c.version(), c.status().wire());
            }
            if (live.size() > 20) {
                out.printf("  … and %,d more%n", live.size() - 20);
            }
            out.printf("idempotency    %,d keys retained%n", state.idempotency().size());
            return ExitCodes.OK;
        }
    }

    /** {@code journal verify}: exit 0 only for a journal whose snapshots and rows rebuild one state cleanly. */
    @Command(name = "verify", description = "Check every state snapshot (CRC-32C, decoding) and replay each valid one"
            + " plus the rows after it, and every row when none was compacted; exit 0 when all decode and rebuild"
            + " the same state, 4 otherwise.",
            mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER)
    static final class Verify extends JournalTool {
        @Override
        int report(SqliteJournal journal, double now) throws Exception {
            JournalCheck.Result r = JournalCheck.verify(journal, CoordinationState::new, now);
            if (!r.ok()) {
                for (String problem : r.problems()) {
                    spec.commandLine().getErr().printf("synapse-hub: %s: %s%n", journal.path(), problem);
                }
                return ExitCodes.DATA_ERROR;
            }
            String snapshots = r.snapshots().isEmpty() ? "no snapshots"
                    : r.snapshots().size() + " snapshot(s) verified (newest #" + r.snapshots().get(0).info().id()
                    + String.format(" at seq %,d plus %,d rows)", r.snapshots().get(0).info().seq(),
                    r.snapshots().get(0).tail().rows());
            String rows = r.fullReplay() == null
                    ? String.format("rows through seq %,d compacted", r.compactedThrough())
                    : String.format("%,d rows replayed cleanly", r.fullReplay().rows());
            spec.commandLine().getOut().printf("ok: %s; %s, the same state; %,d live claims, last seq %,d%n",
                    snapshots, rows, r.state().claims().liveCount(), journal.lastSeq());
            return ExitCodes.OK;
        }
    }

    /** {@code journal backup}: a consistent copy, through the running hub or offline. */
    @Command(name = "backup", description = {"Copy a journal consistently into a new file.",
            "With a hub running on --db the copy is taken through that hub (its control socket FILE.control next to"
                    + " the journal, owner only), consistent at the seq it started at, while the hub keeps serving;"
                    + " with no hub running the file is copied directly. The target must not exist. A backup is"
                    + " itself a journal: start a hub on it, or check it with journal verify.",
            "Online, the hub process writes the file, at --to as the hub sees that path: under a service"
                    + " sandbox (the shipped systemd unit: ProtectSystem=strict, PrivateTmp=true) only its writable"
                    + " paths work, and /tmp is the hub's private one. Name a directory the hub may write and you"
                    + " can read (see docs/operations.md, Backup and restore).",
            "A running mesh node takes no online backup (it has no control socket): stop it for an offline copy.",
            "Here exit 2 also means the target exists or is not a new file in an existing directory, or the hub wrote"
                    + " it where this process does not see it; 3 a hub runs on --db but did not take the backup (no"
                    + " answer, it could not, its control socket is not this user's, or no control socket: see its"
                    + " start-up log, or a mesh node)."},
            mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER)
    static final class Backup implements Callable<Integer> {
        @Option(names = "--db", required = true, paramLabel = "FILE", description = "The journal file.")
        Path db;

        @Option(names = "--to", required = true, paramLabel = "FILE", description = "The new file to write.")
        Path to;

        @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "30",
                description = "Online: give up (exit 3) when the running hub stays silent this long: to accept the"
                        + " connection, or between the progress signs a working hub sends every 2 s (default:"
                        + " ${DEFAULT-VALUE}; at least 3). A long copy is not cut short while the hub keeps working.")
        double timeout;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            if (!(timeout >= 3) || timeout > 86_400) { // a working hub signs every 2 s: less would cut it short
                err.println("synapse-hub: --timeout must be at least 3 and at most 86400 seconds");
                return ExitCodes.USAGE;
            }
            Path target = to.toAbsolutePath().normalize();
            try {
                Optional<String> online = JournalControl.request(db, "backup " + target,
                        Math.max(1, Math.round(timeout * 1000)));
                if (online.isPresent()) {
                    String reply = online.get();
                    if (reply.startsWith("ok ")) {
                        out.println("online backup written by the hub process (the path as it sees it) to "
                                + reply.substring(3));
                        if (!Files.exists(target)) {
                            err.println("synapse-hub: the hub reports the backup written at " + target + ", but this"
                                    + " process does not see a file there: the hub runs in another file-system view"
                                    + " (a systemd unit's PrivateTmp= or a container's own mounts), so the copy is in"
                                    + " the hub's view only (a private /tmp is removed when the hub stops). Back up to"
                                    + " a directory both share, e.g. one in the unit's ReadWritePaths.");
                            return ExitCodes.USAGE;
                        }
                        return ExitCodes.OK;
                    }
                    if (reply.startsWith(JournalControl.TARGET_REFUSED)) {
                        err.println("synapse-hub: the running hub refused the target: "
                                + reply.substring(JournalControl.TARGET_REFUSED.length()));
                        return ExitCodes.USAGE;
                    }
                    err.println("synapse-hub: the running hub could not take the backup: "
                            + reply.replaceFirst("^error ", ""));
                    return ExitCodes.UNAVAILABLE;
                }
                out.println("offline backup " + JournalBackup.offline(db, target).summary());
                return ExitCodes.OK;
            } catch (JournalControl.NoAnswerException e) {
                err.println("synapse-hub: " + e.getMessage() + "; no backup was taken here (if the hub resumes it may"
                        + " still write " + target + ")");
                return ExitCodes.UNAVAILABLE;
            } catch (JournalControl.UnusableSocketException e) {
                err.println("synapse-hub: " + e.getMessage() + "; nothing was written");
                return ExitCodes.UNAVAILABLE;
            } catch (BackupTargetRefusedException e) {
                err.println("synapse-hub: " + e.getMessage());
                return ExitCodes.USAGE;
            } catch (HubHoldsJournalException e) {
                Path raft = Path.of(db + ".raft"); // where a mesh node keeps its Raft log (ServeOptions.meshStorage)
                if (Files.isDirectory(raft)) {
                    err.println("synapse-hub: " + db + " is the journal of a running mesh node (its Raft log is " + raft
                            + "): a mesh node opens no control socket, so it takes no online backup. Stop the node"
                            + " (the others keep serving while a quorum is up) and run this again for an offline copy"
                            + " of its journal. Nothing was written.");
                } else {
                    err.println("synapse-hub: " + e.getMessage());
                }
                return ExitCodes.UNAVAILABLE;
            } catch (JournalException | java.io.IOException e) {
                err.println("synapse-hub: " + e.getMessage());
                return ExitCodes.DATA_ERROR;
            }
        }
    }
}
