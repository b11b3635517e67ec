package dev.synapsehub.net.session;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Offline name leases lapse {@code --lease-offline-ttl} after their holder left and are then
 * removed, whether or not the name ever binds again (issue 11: they used to stay until it did).
 */
class NameLeaseExpiryTest {
    private static final double TTL = 60;
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final SessionRegistry registry = new SessionRegistry(100, 0, 100, false, TTL);
    private long ids;

    private Session connected() {
        EmbeddedChannel channel = new EmbeddedChannel();
        channels.add(channel);
        Session s = new Session(++ids, channel, "127.0.0.1");
        assertThat(registry.admit(s)).isNull();
        return s;
    }

    private SessionRegistry.Bind bind(String name, boolean lease, String ownerLease, double now) {
        return registry.bind(connected(), name, false, ownerLease, lease, now);
    }

    @AfterEach
    void closeChannels() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    @Test
    void anOfflineLeaseIsRemovedOnceItLapsesThoughItsNameNeverBindsAgain() {
        Session holder = connected();
        assertThat(registry.bind(holder, "p/a", false, null, true, 0).leaseToken()).isNotNull();
        registry.remove(holder, 10); // offline: the lease lasts until 70
        assertThat(registry.leaseCount()).isEqualTo(1);

        assertThat(bind("p/b", false, null, 69).kind()).isEqualTo(SessionRegistry.Bind.Kind.BOUND);
        assertThat(registry.leaseCount()).as("still within the offline TTL").isEqualTo(1);
        assertThat(bind("p/a", false, null, 69.5).kind()).as("p/a still owned")
                .isEqualTo(SessionRegistry.Bind.Kind.OWNED);

        assertThat(bind("p/c", false, null, 70).kind()).isEqualTo(SessionRegistry.Bind.Kind.BOUND);
        assertThat(registry.leaseCount()).as("lapsed at 70, removed by an unrelated bind").isZero();
        assertThat(bind("p/a", false, null, 71).kind()).isEqualTo(SessionRegistry.Bind.Kind.BOUND);
    }

    @Test
    void aDepartureAlsoSweepsAndALeaseWhoseHolderCameBackIsKept() {
        Session first = connected();
        String token = registry.bind(first, "p/d", false, null, true, 0).leaseToken();
        registry.remove(first, 10); // lapses at 70 unless the holder comes back
        Session back = connected();
        assertThat(registry.bind(back, "p/d", false, token, false, 20).kind()).isEqualTo(SessionRegistry.Bind.Kind.BOUND);

        Session other = connected();
        registry.bind(other, "p/e", false, null, false, 30);
        registry.remove(other, 100); // a sweep past 70: p/d's holder is online, so its lease stays
        assertThat(registry.leaseCount()).isEqualTo(1);

        registry.remove(back, 110); // offline again: lapses at 170
        Session third = connected();
        registry.bind(third, "p/f", false, null, false, 169);
        registry.remove(third, 169.9);
        assertThat(registry.leaseCount()).isEqualTo(1);
        registry.remove(connected(), 170); // a socket that never bound still sweeps on departure
        assertThat(registry.leaseCount()).isZero();
    }
}
