package dev.synapsehub.net.protocol;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Dark-seat episodes (contract §8.7) and live waiters (§8.6), decided from given times. */
class DarkSeatsTest {
    private static final DarkSeats.Seat CLAIM = new DarkSeats.Seat(List.of("T1"), List.of());
    private static final DarkSeats.Seat TASK = new DarkSeats.Seat(List.of(), List.of("B1"));

    @Test
    void alertsOncePerEpisodeAfterThirtySecondsAndAgainAfterTheConditionCleared() {
        DarkSeats d = new DarkSeats();
        Set<String> waiting = new HashSet<>();
        Map<String, DarkSeats.Seat> seats = Map.of("a", CLAIM, "b", TASK);
        assertThat(d.check(100, seats, waiting::contains)).isEmpty();
        assertThat(d.check(129.999, seats, waiting::contains)).isEmpty();
        List<DarkSeats.Alert> due = d.check(130, seats, waiting::contains);
        assertThat(due).extracting(DarkSeats.Alert::identity).containsExactly("a", "b");
        assertThat(due.get(0).missingForSeconds()).isEqualTo(30.0);
        assertThat(due.get(0).seat()).isEqualTo(CLAIM);
        assertThat(d.check(135, seats, waiting::contains)).as("once per episode").isEmpty();
        assertThat(d.check(500, seats, waiting::contains)).isEmpty();
        // a's waiter is live at one check: its episode ends; b's goes on without a second alert
        waiting.add("a");
        assertThat(d.check(505, seats, waiting::contains)).isEmpty();
        waiting.remove("a");
        assertThat(d.check(510, seats, waiting::contains)).isEmpty(); // a new episode starts here
        assertThat(d.check(539.9, seats, waiting::contains)).isEmpty();
        assertThat(d.check(540, seats, waiting::contains)).extracting(DarkSeats.Alert::identity)
                .containsExactly("a");
        // responsible for nothing any more ends the episode too
        assertThat(d.check(545, Map.of("a", CLAIM), waiting::contains)).isEmpty();
        assertThat(d.check(575, seats, waiting::contains)).isEmpty();
        assertThat(d.check(605, seats, waiting::contains)).extracting(DarkSeats.Alert::identity)
                .containsExactly("b");
    }

    @Test
    void aLiveWaiterIsABoundRxOrPaneRxSeenWithinTwentySeconds() {
        Map<String, Double> seen = Map.of("a-rx", 100.0, "b-pane-rx", 100.0, "c-rx", 100.0, "a", 100.0);
        Set<String> online = Set.of("a-rx", "b-pane-rx", "a", "d");
        assertThat(LiveWaiters.has("a", 120.0, 20.0, online, seen)).isTrue();
        assertThat(LiveWaiters.has("a", 120.001, 20.0, online, seen)).isFalse();
        assertThat(LiveWaiters.has("b", 110.0, 20.0, online, seen)).isTrue();
        assertThat(LiveWaiters.has("c", 110.0, 20.0, online, seen)).as("seen, but no longer bound").isFalse();
        assertThat(LiveWaiters.has("d", 110.0, 20.0, online, seen)).as("online itself is no waiter").isFalse();
        assertThat(LiveWaiters.has("a", 105.001, 5.0, online, seen)).as("a shorter window").isFalse();
    }
}
