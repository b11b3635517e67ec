package dev.synapsehub.net.protocol;

import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Who has a live waiter (contract §8.6, §8.7, §6.8 {@code has_live_waiter}): an identity
 * {@code X} has one while {@code X-rx} or {@code X-pane-rx} is bound and was seen (sent any
 * frame, heartbeats included) within the waiter window ({@code --waiter-liveness-window}, 20 s
 * by default) on the hub's clock.
 */
public final class LiveWaiters {
    private LiveWaiters() {
    }

    /**
     * True when {@code identity} has a live waiter at {@code now}.
     *
     * @param window the waiter liveness window, seconds
     * @param online the names bound now
     * @param seen name to the hub time of its last frame
     */
    public static boolean has(String identity, double now, double window, Set<String> online,
            Map<String, Double> seen) {
        return has(identity, now, window, name -> online.contains(name) ? seen.get(name) : null);
    }

    /**
     * True when {@code identity} has a live waiter at {@code now}.
     *
     * @param window the waiter liveness window, seconds
     * @param seenIfBound name to the hub time of its last frame while it is bound, null when it is not
     */
    public static boolean has(String identity, double now, double window, Function<String, Double> seenIfBound) {
        for (String waiter : new String[] {identity + "-rx", identity + "-pane-rx"}) {
            Double s = seenIfBound.apply(waiter);
            if (s != null && now - s <= window) {
                return true;
            }
        }
        return false;
    }
}
