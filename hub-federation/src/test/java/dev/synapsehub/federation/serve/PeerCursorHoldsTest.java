package dev.synapsehub.federation.serve;

import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

class PeerCursorHoldsTest {
    @Test
    void theLowestCursorOfAPeerSeenWithinTheWindowIsHeldAndASilentPeerStopsHoldingAfterIt() {
        AtomicLong now = new AtomicLong(1_000);
        PeerCursorHolds holds = new PeerCursorHolds(now::get, Set::of);
        assertThat(holds.keepAfter()).as("no peer: nothing held").isEqualTo(Long.MAX_VALUE);
        holds.pulled("hub-a", 500);
        holds.pulled("hub-c", 120);
        assertThat(holds.keepAfter()).isEqualTo(120);
        holds.pulled("hub-c", 900); // it caught up: its newest cursor counts, not its oldest
        assertThat(holds.keepAfter()).isEqualTo(500);

        now.addAndGet(PeerCursorHolds.WINDOW.toNanos()); // hub-c pulls again, hub-a stays silent
        holds.pulled("hub-c", 950);
        assertThat(holds.keepAfter()).as("hub-a's last pull is exactly a window old").isEqualTo(500);
        now.addAndGet(1);
        assertThat(holds.keepAfter()).as("past the window hub-a holds nothing").isEqualTo(950);
        holds.pulled("hub-a", 600); // back: it holds again from its pull
        assertThat(holds.keepAfter()).isEqualTo(600);
    }

    @Test
    void afterAStartEveryRowIsHeldUntilEachGrantedPeerHasPulledServedOrNot() {
        AtomicLong now = new AtomicLong(1_000);
        PeerCursorHolds holds = new PeerCursorHolds(now::get, () -> Set.of("hub-a", "hub-c"));
        assertThat(holds.keepAfter()).as("nobody pulled since the start").isZero();
        holds.pulled("hub-a", 500);
        assertThat(holds.keepAfter()).as("hub-c's cursor is not known yet").isZero();
        holds.behind("hub-c"); // asked for deleted rows: it holds nothing, but it is known now
        assertThat(holds.keepAfter()).isEqualTo(500);
    }

    @Test
    void aGrantedPeerSilentSinceTheStartHoldsEveryRowForOneWindowOnly() {
        AtomicLong now = new AtomicLong(1_000);
        AtomicReference<Set<String>> granted = new AtomicReference<>(); // the policy file is invalid for now
        PeerCursorHolds holds = new PeerCursorHolds(now::get, granted::get);
        assertThat(holds.keepAfter()).as("the granted peers are unknown: every row held").isZero();
        granted.set(Set.of("hub-a"));
        now.addAndGet(PeerCursorHolds.WINDOW.toNanos());
        assertThat(holds.keepAfter()).isZero();
        now.addAndGet(1);
        assertThat(holds.keepAfter()).as("silent for a whole window: as a silent peer, it holds nothing")
                .isEqualTo(Long.MAX_VALUE);
    }
}
