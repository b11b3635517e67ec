package dev.synapsehub.federation.serve;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class PeerCursorHoldsTest {
    @Test
    void theLowestCursorOfAPeerSeenWithinTheWindowIsHeldAndASilentPeerStopsHoldingAfterIt() {
        AtomicLong now = new AtomicLong(1_000);
        PeerCursorHolds holds = new PeerCursorHolds(now::get);
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
}
