package dev.synapsehub.cli;

import java.nio.file.Path;
import java.util.Optional;

/**
 * {@code --compact-hint-threshold} (contract §13, "log-size hint only"): a start on a journal
 * holding more rows than {@code threshold} logs one hint pointing at retention; 0 disables it.
 * It never deletes anything itself.
 */
record CompactHint(long threshold) {
    /** The contract's default. */
    static final long DEFAULT_THRESHOLD = 100_000;

    CompactHint {
        if (threshold < 0) {
            throw new IllegalArgumentException("--compact-hint-threshold must be a number of rows >= 0 (0: no hint)");
        }
    }

    /**
     * The hint for a journal at {@code journal} holding {@code rows} rows, with retention at
     * {@code keepRows} ({@code --journal-keep-rows}); empty when it is off or the journal is not over it.
     */
    Optional<String> message(Path journal, long rows, String keepRows) {
        if (threshold == 0 || rows <= threshold) {
            return Optional.empty();
        }
        // there is no separate compaction command: retention after each snapshot is what deletes rows
        String advice = "all".equals(keepRows)
                ? "--journal-keep-rows is all, so no row is ever deleted: set --journal-keep-rows N to let retention "
                        + "delete, after each snapshot, the rows older than the last N that the kept snapshots cover"
                : "--journal-keep-rows is " + keepRows + ": retention deletes only rows the kept snapshots cover and "
                        + "no pending directed chat (up to 7 days), federation peer or backup still needs; "
                        + "each retention pass that deletes rows logs what set its floor ('journal retention: … (floor"
                        + " set by …)')";
        return Optional.of("journal " + journal + " holds " + rows + " rows, more than --compact-hint-threshold "
                + threshold + "; " + advice + " (docs/operations.md, \"The journal\")");
    }
}
