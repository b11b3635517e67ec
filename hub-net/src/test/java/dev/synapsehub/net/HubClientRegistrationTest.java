package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeoutException;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link HubClient#registerBound}: an open hub sends {@code welcome} at connect, before it reads
 * the registration (contract §3.7), so only an answer to a later frame shows the name bound; a
 * refusal of the name after that welcome ends the wait at once, naming the close.
 */
class HubClientRegistrationTest {

    @Test
    void registerBoundReturnsOnceTheNameIsBoundOnAnOpenHub() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient c = hub.connect();
            assertThat(c.registerBound("p/a", null, null, WAIT).path("type").asText()).isEqualTo("welcome");
            assertThat(hub.server.services().registry().isOnline("p/a")).isTrue();
            c.send(c.frame("who_request")); // its own answer was taken by the registration
            assertThat(c.awaitType("who_snapshot", WAIT).path("online_agents").toString()).contains("p/a");
        }
    }

    @Test
    void registerBoundReportsANameRefusedAfterTheOpenHubsWelcome() throws Exception {
        try (TestHub hub = TestHub.open()) {
            hub.connect().registerBound("p/a", null, null, WAIT);
            HubClient second = hub.connect();
            assertThatThrownBy(() -> second.registerBound("p/a", null, null, WAIT))
                    .isInstanceOf(TimeoutException.class).hasMessageContaining("4009 name conflict");
            assertThat(second.pending()).anyMatch(f -> "name_conflict".equals(f.path("type").asText()));
        }
    }
}
