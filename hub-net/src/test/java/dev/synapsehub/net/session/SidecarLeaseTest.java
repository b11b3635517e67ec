package dev.synapsehub.net.session;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A sidecar X-rx of a leased X: its binding needs X's lease, and once it holds a lease of its own, that lease rebinds it. */
class SidecarLeaseTest {
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final SessionRegistry registry = new SessionRegistry(100, 0, 100, false, 3600);
    private long ids;

    private Session connected() {
        EmbeddedChannel channel = new EmbeddedChannel();
        channels.add(channel);
        Session s = new Session(++ids, channel, "127.0.0.1");
        assertThat(registry.admit(s)).isNull();
        return s;
    }

    @AfterEach
    void closeChannels() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    @Test
    void aLeasedSidecarOfALeasedOwnerCanRebind() {
        Session owner = connected();
        String ownerToken = registry.bind(owner, "x", false, null, true, 0).leaseToken();
        Session rx = connected();
        SessionRegistry.Bind first = registry.bind(rx, "x-rx", false, ownerToken, true, 1);
        assertThat(first.kind()).isEqualTo(SessionRegistry.Bind.Kind.BOUND);
        String rxToken = first.leaseToken();
        assertThat(rxToken).isNotNull();
        registry.remove(rx, 2); // the sidecar reconnects

        SessionRegistry.Bind withOwn = registry.bind(connected(), "x-rx", false, rxToken, false, 3);
        SessionRegistry.Bind withOwners = registry.bind(connected(), "x-rx", false, ownerToken, false, 3);
        assertThat(withOwn.kind()).as("its own lease rebinds it").isEqualTo(SessionRegistry.Bind.Kind.BOUND);
        assertThat(withOwners.kind()).as("X's token is not the sidecar's own lease")
                .isEqualTo(SessionRegistry.Bind.Kind.OWNED);
        Session stranger = connected();
        registry.remove(registry.session("x-rx"), 4);
        assertThat(registry.bind(stranger, "x-rx", false, null, false, 5).kind()).as("nor does no token")
                .isEqualTo(SessionRegistry.Bind.Kind.OWNED);
    }
}
