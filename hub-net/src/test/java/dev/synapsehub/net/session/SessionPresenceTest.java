package dev.synapsehub.net.session;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bound name's presence lives on its session (written by its own frames, no shared lock) and
 * the registry's views read it back: last seen and last reaction, roles and wake, their fate at
 * departure and takeover, and the offline last-seen table.
 */
class SessionPresenceTest {
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final SessionRegistry registry = new SessionRegistry(100, 0, 100, false, 60);
    private long ids;

    private Session connected() {
        EmbeddedChannel channel = new EmbeddedChannel();
        channels.add(channel);
        Session s = new Session(++ids, channel, "127.0.0.1");
        assertThat(registry.admit(s)).isNull();
        return s;
    }

    private Session bound(String name, double now) {
        Session s = connected();
        assertThat(registry.bind(s, name, false, null, false, now).kind()).isEqualTo(SessionRegistry.Bind.Kind.BOUND);
        return s;
    }

    @AfterEach
    void closeChannels() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    @Test
    void framesRefreshLastSeenAndOnlyNonHeartbeatsCountAsReactions() {
        Session a = bound("p/a", 10);
        assertThat(registry.lastSeenIfBound("p/a")).isEqualTo(10.0);
        assertThat(registry.lastReactionIfBound("p/a")).as("binding is a reaction").isEqualTo(10.0);

        registry.touch(a, 12, false); // a heartbeat
        assertThat(registry.lastSeen()).containsEntry("p/a", 12.0);
        assertThat(registry.lastReactions()).containsEntry("p/a", 10.0);

        registry.touch(a, 15, true);
        assertThat(registry.presence()).containsExactly(
                new SessionRegistry.Presence("p/a", List.of(), Session.UNKNOWN_WAKE, 15, 15));
        assertThat(registry.lastSeenIfBound("p/nobody")).isNull();
        assertThat(registry.lastReactionIfBound("p/nobody")).isNull();
    }

    @Test
    void aDepartedNameKeepsItsLastSeenButLosesReactionRolesWakeAndWaits() {
        Session a = bound("p/a", 10);
        registry.roles("p/a", List.of("reviewer"));
        registry.wake("p/a", "direct");
        registry.addWait("p/a", "T1");
        registry.touch(a, 20, false);
        assertThat(registry.roles()).containsEntry("p/a", List.of("reviewer"));
        assertThat(registry.rolesOf("p/a")).containsExactly("reviewer");
        assertThat(registry.wake()).containsEntry("p/a", "direct");
        assertThat(registry.waitGraph()).containsKey("p/a");

        SessionRegistry.Departure left = registry.remove(a, 30);
        assertThat(left.left()).isTrue();
        assertThat(registry.lastSeen()).containsEntry("p/a", 20.0);
        assertThat(registry.lastReactions()).doesNotContainKey("p/a");
        assertThat(registry.roles()).isEmpty();
        assertThat(registry.rolesOf("p/a")).isEmpty();
        assertThat(registry.wake()).isEmpty();
        assertThat(registry.waitGraph()).isEmpty();
        assertThat(registry.presence()).isEmpty();

        registry.addWait("p/a", "T2"); // not bound: no edge
        registry.roles("p/a", List.of("x")); // not bound: ignored
        assertThat(registry.waitGraph()).isEmpty();

        bound("p/a", 40); // bound again: a fresh session, no declarations, seen at its bind
        assertThat(registry.lastSeen()).containsEntry("p/a", 40.0);
        assertThat(registry.rolesOf("p/a")).isEmpty();
    }

    @Test
    void aTakeoverKeepsTheNamesRolesAndWakeAsOneTableDid() {
        Session first = bound("p/a", 10);
        registry.roles("p/a", List.of("lead"));
        registry.wake("p/a", "passive");
        Session second = connected();
        SessionRegistry.Bind taken = registry.bind(second, "p/a", true, null, false, 11);
        assertThat(taken.kind()).isEqualTo(SessionRegistry.Bind.Kind.BOUND);
        assertThat(taken.superseded()).isSameAs(first);
        assertThat(registry.session("p/a")).isSameAs(second);
        assertThat(registry.rolesOf("p/a")).containsExactly("lead");
        assertThat(registry.wake()).containsEntry("p/a", "passive");

        SessionRegistry.Departure old = registry.remove(first, 12); // the superseded socket closes
        assertThat(old.left()).isFalse();
        assertThat(registry.isOnline("p/a")).isTrue();
        assertThat(registry.rolesOf("p/a")).containsExactly("lead");

        registry.wake("p/a", Session.UNKNOWN_WAKE); // clears
        assertThat(registry.wake()).isEmpty();
    }

    @Test
    void theOfflineLastSeenTableForgetsTheLeastRecentlySeenNameFirst() {
        SeenNames table = new SeenNames(3);
        table.left("a", 1);
        table.left("b", 2);
        table.left("c", 3);
        table.left("a", 4); // seen again: now the youngest
        table.left("d", 5);
        Map<String, Double> copy = new LinkedHashMap<>();
        table.copyInto(copy);
        assertThat(copy).containsOnlyKeys("c", "a", "d");
        table.bound("c");
        table.left("e", Double.NaN); // never seen: nothing to remember
        assertThat(table.size()).isEqualTo(2);
    }

    @Test
    void aRolesChangeCountsAsALaterBindForChatFanOut() {
        Session bob = bound("p/bob", 10);
        long read = registry.binds(); // what a chat reads before it resolves its recipients
        assertThat(bob.bindOrder()).isLessThanOrEqualTo(read);
        registry.roles("p/bob", List.of("reviewer")); // the registration frame's roles, set after its bind
        assertThat(bob.bindOrder()).as("checked again at that chat's fan-out").isGreaterThan(read);
        assertThat(registry.binds()).isEqualTo(bob.bindOrder());
        long again = registry.binds();
        registry.roles("p/bob", List.of("reviewer")); // unchanged: nothing to check again
        assertThat(bob.bindOrder()).isEqualTo(again);
        registry.roles("p/nobody", List.of("x"));
        assertThat(registry.binds()).isEqualTo(again);
    }
}
