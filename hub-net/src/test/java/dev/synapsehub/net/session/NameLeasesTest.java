package dev.synapsehub.net.session;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/** The lease table on its own: a matched lease that lapsed before the bind completed; its bound. */
class NameLeasesTest {
    @Test
    void aMatchedLeaseSweptBeforeTheBindCompletesIsTreatedAsNoLeaseInsteadOfFailingTheBind() {
        NameLeases leases = new NameLeases(60);
        String token = leases.bound("p/a", NameLeases.Presented.NO_LEASE, true);
        leases.departed("p/a", 100);
        NameLeases.Presented presented = leases.check("p/a", token, 159);
        assertThat(presented).isEqualTo(NameLeases.Presented.MATCHED);
        leases.sweep(161); // another thread's sweep, after the check, before bound
        assertThatCode(() -> leases.bound("p/a", presented, false)).doesNotThrowAnyException();
        assertThat(leases.live("p/a", 161)).isFalse();
        String fresh = leases.bound("p/a", presented, true);
        assertThat(fresh).isNotNull();
        assertThat(leases.live("p/a", 162)).isTrue();
    }

    /**
     * Names bound with a lease and left stay leased for the TTL: the table holds at most MAX_LEASES,
     * and beyond it a new name binds without a lease; no held lease, online or offline, goes early.
     */
    @Test
    void aFullLeaseTableGrantsNoNewLeaseAndDropsNoHeldOne() {
        NameLeases leases = new NameLeases(3600);
        String victim = leases.bound("p/victim", NameLeases.Presented.NO_LEASE, true);
        leases.departed("p/victim", 100); // a restarting agent: offline, its lease the closest to lapsing
        for (int i = 0; i < NameLeases.MAX_LEASES + 10; i++) {
            String name = "p/flood-" + i;
            leases.bound(name, NameLeases.Presented.NO_LEASE, true);
            leases.departed(name, 101 + i * 0.001);
        }
        assertThat(leases.count()).isEqualTo(NameLeases.MAX_LEASES);
        assertThat(leases.refused()).isEqualTo(11);
        assertThat(leases.check("p/victim", null, 800)).as("its name stays protected").isEqualTo(
                NameLeases.Presented.REFUSED);
        assertThat(leases.check("p/victim", victim, 800)).isEqualTo(NameLeases.Presented.MATCHED);
        assertThat(leases.live("p/flood-" + (NameLeases.MAX_LEASES + 9), 800)).as("bound without a lease").isFalse();
        leases.sweep(3701 + 100); // the victim's and the first floods' leases lapse: room again
        assertThat(leases.bound("p/new", NameLeases.Presented.NO_LEASE, true)).isNotNull();
    }
}
