package dev.synapsehub.cli;

import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The bench's claims whose grant broadcast the observer has not seen yet: each with its send
 * instant and whether it was sent inside the measured phase. The phase is taken at the send, not
 * when the grant arrives, so a claim sent in the warm-up whose grant lands after measuring began
 * does not count, and one sent in the measured phase counts even when its grant lands just after.
 */
final class ObservedClaims {
    private record Sent(long atNanos, boolean measured) {
    }

    private final Map<String, Sent> pending = new ConcurrentHashMap<>();

    /** Notes that the claim for {@code task} was sent at {@code atNanos}, inside the measured phase or not. */
    void sent(String task, long atNanos, boolean measured) {
        pending.put(task, new Sent(atNanos, measured));
    }

    /**
     * The observer saw {@code task}'s grant at {@code nowNanos}: its latency from the send when the
     * claim was sent while measuring, else empty. Either way the claim is forgotten.
     */
    OptionalLong granted(String task, long nowNanos) {
        Sent s = pending.remove(task);
        return s != null && s.measured() ? OptionalLong.of(nowNanos - s.atNanos()) : OptionalLong.empty();
    }

    /** Forgets every claim still waiting (at the end of a run: their grants will not come). */
    void clear() {
        pending.clear();
    }

    /** How many claims are waiting for the observer. */
    int size() {
        return pending.size();
    }
}
