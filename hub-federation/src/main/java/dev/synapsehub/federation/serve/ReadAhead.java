package dev.synapsehub.federation.serve;

import dev.synapsehub.journal.StoredEvent;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Pages read before their pull came, keyed by the pull they answer ({@code after_seq}, page size):
 * a follower catching up asks for the page after the one it was just sent, so the log reader
 * reads that page while the last one is encoded, sent and parsed. A committed row never changes
 * (retention may delete old rows, which then makes it an earlier snapshot of the log), so a page
 * read ahead, cut by its size or bytes, is the page that pull would read. At most {@code capacity} pages are held (the least recently kept goes first),
 * each for {@code maxAgeNanos} at most: a pull that does not come soon is not waited for with a
 * megabyte of rows. Used by the log reader's thread only.
 */
final class ReadAhead {
    private record Pull(long afterSeq, int events) {
    }

    private record Held(List<StoredEvent> rows, long readAtNanos) {
    }

    private final Map<Pull, Held> pages;
    private final long maxAgeNanos;
    private final LongSupplier nanoTime;

    ReadAhead(int capacity, long maxAgeNanos, LongSupplier nanoTime) {
        this.maxAgeNanos = maxAgeNanos;
        this.nanoTime = nanoTime;
        this.pages = new LinkedHashMap<>(capacity * 2, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Pull, Held> eldest) {
                return size() > capacity;
            }
        };
    }

    /** The page read ahead for this pull, taken out; null when none was, or it is too old. */
    List<StoredEvent> take(long afterSeq, int events) {
        Held held = pages.remove(new Pull(afterSeq, events));
        long now = nanoTime.getAsLong();
        pages.values().removeIf(h -> now - h.readAtNanos() > maxAgeNanos); // nothing held long after a catch-up
        return held == null || now - held.readAtNanos() > maxAgeNanos ? null : held.rows();
    }

    /** Keeps {@code rows} for the pull of {@code events} after {@code afterSeq}; pages too old to be served go. */
    void keep(long afterSeq, int events, List<StoredEvent> rows) {
        long now = nanoTime.getAsLong();
        pages.values().removeIf(h -> now - h.readAtNanos() > maxAgeNanos);
        pages.put(new Pull(afterSeq, events), new Held(rows, now));
    }

    /** Pages held now. */
    int size() {
        return pages.size();
    }
}
