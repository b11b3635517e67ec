package dev.synapsehub.net.protocol;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Dark-seat episodes (contract §8.7): an identity that owns an unexpired claim, or is the
 * suggested owner of a board task not done or cancelled, and has no live waiter, is dark from
 * the first check that sees it so; after 30 s dark without a break it is alerted once, and the
 * episode ends (so a later one can alert again) at the first check that no longer sees it dark.
 * Alerting releases nothing. Not thread-safe: the monitor runs it on one thread.
 */
public final class DarkSeats {
    /** Seconds continuously dark before the alert (§8.7). */
    public static final double ALERT_AFTER = 30.0;

    /** What an identity is responsible for: its live claims and its open board tasks, each sorted. */
    public record Seat(List<String> claims, List<String> tasks) {
        public Seat {
            claims = List.copyOf(claims);
            tasks = List.copyOf(tasks);
        }
    }

    /** An alert to broadcast. */
    public record Alert(String identity, Seat seat, double missingForSeconds) {
    }

    private record Episode(double since, boolean alerted) {
    }

    private final Map<String, Episode> episodes = new HashMap<>();

    /**
     * One check at hub time {@code now}: {@code seats} are the identities responsible for
     * something, {@code hasLiveWaiter} tells which have a live waiter now.
     *
     * @return the alerts due now, at most one per episode
     */
    public List<Alert> check(double now, Map<String, Seat> seats, Predicate<String> hasLiveWaiter) {
        for (Iterator<Map.Entry<String, Episode>> it = episodes.entrySet().iterator(); it.hasNext(); ) {
            String identity = it.next().getKey();
            if (!seats.containsKey(identity) || hasLiveWaiter.test(identity)) {
                it.remove(); // the condition cleared: the episode is over
            }
        }
        List<Alert> due = new ArrayList<>();
        for (Map.Entry<String, Seat> e : new TreeMap<>(seats).entrySet()) {
            String identity = e.getKey();
            if (hasLiveWaiter.test(identity)) {
                continue;
            }
            Episode episode = episodes.computeIfAbsent(identity, k -> new Episode(now, false));
            double dark = now - episode.since();
            if (!episode.alerted() && dark >= ALERT_AFTER) {
                episodes.put(identity, new Episode(episode.since(), true));
                due.add(new Alert(identity, e.getValue(), dark));
            }
        }
        return due;
    }
}
