package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;

import java.util.List;

/**
 * Finds where the rows written since a point in time begin, by binary search over the row
 * timestamps (hub time, which rises with the seq; a clock step back only blurs the edge).
 */
final class RowsSince {
    private RowsSince() {
    }

    /**
     * The lowest seq whose row was written at or after {@code ts}; rows below it are older (or
     * compacted). {@code lastSeq + 1} when every row is older. A row whose time is not a number
     * counts as new, so it never ages anything out.
     */
    static long firstSeq(SqliteJournal journal, double ts) throws JournalException {
        long last = journal.lastSeq();
        long old = journal.compactedThrough(); // every seq <= old is older or gone
        long young = last + 1;                 // every seq >= young is young or not written yet
        while (young - old > 1) {
            long mid = old + (young - old) / 2;
            List<SqliteJournal.RawRow> row = journal.readRaw(mid - 1, last, 1);
            if (!row.isEmpty() && row.get(0).ts() instanceof Number t && t.doubleValue() < ts) {
                old = row.get(0).seq();
            } else {
                young = mid; // seqs from mid up to that row do not exist
            }
        }
        return young;
    }
}
