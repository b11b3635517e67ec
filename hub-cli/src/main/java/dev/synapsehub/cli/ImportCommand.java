package dev.synapsehub.cli;

import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.journal.migration.ImportRefusedException;
import dev.synapsehub.journal.migration.ImportReport;
import dev.synapsehub.journal.migration.ReferenceImport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code synapse-hub import --from OTHER.db --db hub.db}: take over another v2 hub's database. */
@Command(name = "import", mixinStandardHelpOptions = true, sortOptions = false, footer = ExitCodes.HELP_FOOTER,
        description = {
            "Import another wire-v2 hub's database (its --db file) as this hub's journal.",
            "",
            "Live claims with their epochs, versions and checkpoints, the board, resources, mailboxes (watermarks, "
                    + "pending receipts, dead letters) and idempotency records carry over under their seq numbers. "
                    + "Stop both hubs first. The source is never modified; the journal is built beside --db, checked "
                    + "by replaying it, then moved into place. Prints what was carried, skipped (and why) and left "
                    + "behind. See docs/operations.md."})
public final class ImportCommand implements Callable<Integer> {
    @Option(names = "--from", required = true, paramLabel = "OTHER.db", description = "The other hub's database file.")
    Path from;

    @Option(names = "--db", required = true, paramLabel = "FILE",
            description = "The journal to write (must not exist yet, be empty, or see --replace-existing).")
    Path db;

    @Option(names = "--dry-run", description = "Read and check everything, report what would be carried; write nothing.")
    boolean dryRun;

    @Option(names = "--replace-existing",
            description = "If --db already holds a journal with history, move it aside to FILE.replaced-<time> and "
                    + "import in its place (without this flag such a target is refused).")
    boolean replaceExisting;

    @Option(names = "--skip-corrupt",
            description = "Skip event rows that cannot be decoded (reported) instead of refusing the import.")
    boolean skipCorrupt;

    @Option(names = "--identity-pins", paramLabel = "PINS.json",
            description = "The other hub's identity pin file (its --identity-pins, by default "
                    + "~/synapse/identity-pins.json): its pins become this journal's identity pins, and its "
                    + "identity_pin_reclaim audit rows are carried with them. A malformed file refuses the import.")
    Path identityPins;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        ImportReport report;
        try {
            report = ReferenceImport.run(new ReferenceImport.Options(from, db, dryRun, replaceExisting, skipCorrupt,
                    identityPins),
                    System.currentTimeMillis() / 1000.0);
        } catch (ImportRefusedException e) {
            err.println("synapse-hub import: " + e.getMessage());
            // a refused target is a matter of the command line (another --db, or --replace-existing)
            return e.side() == ImportRefusedException.Side.TARGET ? ExitCodes.USAGE : ExitCodes.DATA_ERROR;
        } catch (JournalException e) {
            err.println("synapse-hub import: " + e.getMessage());
            return ExitCodes.DATA_ERROR;
        }
        PrintWriter out = spec.commandLine().getOut();
        report.lines().forEach(out::println);
        return ExitCodes.OK;
    }
}
