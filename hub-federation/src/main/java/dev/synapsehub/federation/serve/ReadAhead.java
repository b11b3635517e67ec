package dev.synapsehub.federation.serve;

import dev.synapsehub.journal.StoredEvent;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Pages read before their pull came, keyed by the pull they answer ({@code after_seq}, page size):
 * a follower catching up asks for the page after the one it was just sent, so the log reader
 * reads that page while the last one is encoded, sent and parsed. Journal rows never change once
 * committed, so a page read ahead is the page that pull would read. At most {@code capacity}
 * pages are held (the least recently kept goes first). Used by the log reader's thread only.
 */
final class ReadAhead {
    private record Pull(long afterSeq, int events) {
    }

    private final Map<Pull, List<StoredEvent>> pages;

    ReadAhead(int capacity) {
        this.pages = new LinkedHashMap<>(capacity * 2, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Pull, List<StoredEvent>> eldest) {
                return size() > capacity;
            }
        };
    }

    /** The page read ahead for this pull, taken out; null when none was. */
    List<StoredEvent> take(long afterSeq, int events) {
        return pages.remove(new Pull(afterSeq, events));
    }

    /** Keeps {@code rows} for the pull of {@code events} after {@code afterSeq}. */
    void keep(long afterSeq, int events, List<StoredEvent> rows) {
        pages.put(new Pull(afterSeq, events), rows);
    }

    /** Pages held now. */
    int size() {
        return pages.size();
    }
}
