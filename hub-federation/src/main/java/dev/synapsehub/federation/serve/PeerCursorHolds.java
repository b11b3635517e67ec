package dev.synapsehub.federation.serve;

import dev.synapsehub.core.journal.RetentionHold;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The journal rows authorised peers still have to pull, held from retention: the lowest cursor
 * ({@code after_seq}) of a peer that pulled within {@link #WINDOW}. A peer silent for longer no
 * longer holds rows, so one that is gone for good cannot grow the journal without end; pulls only
 * register after the serving policy allowed them, so there is one entry per authorised peer.
 *
 * <p>The cursors are kept in memory, so a start does not know how far behind a peer that pulled
 * before it is: until every peer the serving policy grants has pulled since the start (or
 * {@link #WINDOW} has passed, as long as a silent peer holds rows anyway), every row is held.
 * Otherwise the first compaction after a restart would delete the rows a lagging peer still
 * needs, and that peer could never catch up ("Log compacted").
 */
public final class PeerCursorHolds implements RetentionHold {
    private static final System.Logger LOG = System.getLogger(PeerCursorHolds.class.getName());
    /** How long a peer's last pull holds rows for it. */
    public static final Duration WINDOW = Duration.ofHours(24);

    private final Map<String, Pull> peers = new ConcurrentHashMap<>();
    /** Peers that pulled since the start, served or not. */
    private final Set<String> seen = ConcurrentHashMap.newKeySet();
    private final LongSupplier nanos;
    /** The peers the serving policy grants; null while it is unknown (an invalid file). */
    private final Supplier<Set<String>> granted;
    private final long startedAt;
    private volatile boolean settling = true; // every row held until each granted peer pulled since the start

    private record Pull(long afterSeq, long atNanos) {
    }

    /** Holds for the peers {@code granted} names (read at each compaction). */
    public PeerCursorHolds(Supplier<Set<String>> granted) {
        this(System::nanoTime, granted);
    }

    /** With {@code nanos} as the monotonic clock (tests move it). */
    PeerCursorHolds(LongSupplier nanos, Supplier<Set<String>> granted) {
        this.nanos = nanos;
        this.granted = granted;
        this.startedAt = nanos.getAsLong();
    }

    /** {@code peer} asked for the rows after {@code afterSeq}: it holds everything up to it. */
    void pulled(String peer, long afterSeq) {
        peers.put(peer, new Pull(afterSeq, nanos.getAsLong()));
        seen.add(peer);
    }

    /** {@code peer} asked for rows retention had deleted: it holds nothing, but it is no longer unknown. */
    void behind(String peer) {
        seen.add(peer);
    }

    @Override
    public long keepAfter() {
        long now = nanos.getAsLong();
        if (settling && !settled(now)) {
            return 0;
        }
        long lowest = Long.MAX_VALUE;
        for (Map.Entry<String, Pull> e : peers.entrySet()) {
            Pull p = e.getValue();
            if (now - p.atNanos() > WINDOW.toNanos()) {
                peers.remove(e.getKey(), p); // silent past the window: its rows may go
            } else {
                lowest = Math.min(lowest, p.afterSeq());
            }
        }
        return lowest;
    }

    /** True (and logged, once) when the start's hold of every row ends. */
    private boolean settled(long now) {
        Set<String> expected = granted.get();
        boolean allPulled = expected != null && seen.containsAll(expected);
        if (!allPulled && now - startedAt <= WINDOW.toNanos()) {
            return false;
        }
        settling = false;
        LOG.log(System.Logger.Level.INFO, allPulled && expected.isEmpty()
                ? "no peer is granted the log: retention holds no rows for peers"
                : allPulled
                ? "every peer granted the log has pulled since the start: retention holds only their cursors now"
                : "a granted peer has not pulled for " + WINDOW.toHours() + " h since the start: retention no longer"
                        + " holds every row for it");
        return true;
    }
}
