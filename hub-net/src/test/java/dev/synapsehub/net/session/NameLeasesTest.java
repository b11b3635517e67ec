package dev.synapsehub.net.session;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/** The lease table on its own: a matched lease that lapsed before the bind completed. */
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
}
