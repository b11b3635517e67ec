package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Locale;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** The hub serves the same protocol on the native epoll transport and on Java NIO. */
class TransportTest {

    @ParameterizedTest(name = "native transport preferred: {0}")
    @ValueSource(booleans = {true, false})
    void aClaimIsAnsweredAndBroadcastOnEitherTransport(boolean preferNative) throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().nativeTransport(preferNative))) {
            assertThat(hub.server.transport()).isEqualTo(preferNative && nativeLibraryExpected()
                    ? NetTransport.EPOLL : NetTransport.NIO);
            HubClient alpha = hub.agent("t/alpha");
            HubClient beta = hub.agent("t/beta");
            ObjectNode claim = alpha.frame("claim");
            claim.put("task_id", "T1").put("worktree", "wt");
            claim.putArray("paths").add("src/a.py");
            alpha.send(claim);
            assertThat(alpha.awaitType("claim_granted", WAIT).path("owner").asText()).isEqualTo("t/alpha");
            assertThat(beta.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("T1");
        }
    }

    /** The build ships the x86-64 Linux library; there it must load (else NIO is silently used). */
    private static boolean nativeLibraryExpected() {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch");
        boolean shipped = os.contains("linux") && (arch.equals("amd64") || arch.equals("x86_64"));
        if (shipped) {
            assertThat(Epoll.isAvailable()).as("epoll loads here: %s", Epoll.unavailabilityCause()).isTrue();
        }
        return shipped;
    }
}
