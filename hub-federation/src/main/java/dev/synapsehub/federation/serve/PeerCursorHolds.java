package dev.synapsehub.federation.serve;

import dev.synapsehub.core.journal.RetentionHold;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The journal rows authorised peers still have to pull, held from retention: the lowest cursor
 * ({@code after_seq}) of a peer that pulled within {@link #WINDOW}. A peer silent for longer no
 * longer holds rows, so one that is gone for good cannot grow the journal without end; pulls only
 * register after the serving policy allowed them, so there is one entry per authorised peer.
 * Kept in memory: after a restart a peer holds rows again from its first pull.
 */
public final class PeerCursorHolds implements RetentionHold {
    /** How long a peer's last pull holds rows for it. */
    public static final Duration WINDOW = Duration.ofHours(24);

    private final Map<String, Pull> peers = new ConcurrentHashMap<>();
    private final LongSupplier nanos;

    private record Pull(long afterSeq, long atNanos) {
    }

    public PeerCursorHolds() {
        this(System::nanoTime);
    }

    /** With {@code nanos} as the monotonic clock (tests move it). */
    PeerCursorHolds(LongSupplier nanos) {
        this.nanos = nanos;
    }

    /** {@code peer} asked for the rows after {@code afterSeq}: it holds everything up to it. */
    void pulled(String peer, long afterSeq) {
        peers.put(peer, new Pull(afterSeq, nanos.getAsLong()));
    }

    @Override
    public long keepAfter() {
        long now = nanos.getAsLong();
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
}
