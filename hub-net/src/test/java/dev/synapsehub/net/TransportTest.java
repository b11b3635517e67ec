package dev.synapsehub.net;

import dev.synapsehub.client.NetTransport;
import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.channel.EventLoopGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.concurrent.TimeUnit;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** The hub and its client speak the same protocol on the native epoll transport and on Java NIO. */
class TransportTest {

    @ParameterizedTest(name = "hub prefers native: {0}, client on {1}")
    @CsvSource({"true, EPOLL", "true, NIO", "false, EPOLL", "false, NIO"})
    void aClaimIsAnsweredAndBroadcastOnEitherTransport(boolean hubPrefersNative, NetTransport client)
            throws Exception {
        NetTransport clientTransport = client == NetTransport.EPOLL ? NetTransport.choose(true) : NetTransport.NIO;
        EventLoopGroup group = clientTransport.group(1, "transport-test");
        try (TestHub hub = new TestHub(HubConfig.builder().nativeTransport(hubPrefersNative))) {
            assertThat(hub.server.transport()).isEqualTo(NetTransport.choose(hubPrefersNative));
            HubClient alpha = HubClient.connect(hub.uri(), WAIT, group);
            HubClient beta = HubClient.connect(hub.uri(), WAIT, group);
            try {
                alpha.register("t/alpha", null, WAIT);
                beta.register("t/beta", null, WAIT);
                ObjectNode claim = alpha.frame("claim");
                claim.put("task_id", "T1").put("worktree", "wt");
                claim.putArray("paths").add("src/a.py");
                alpha.send(claim);
                assertThat(alpha.awaitType("claim_granted", WAIT).path("owner").asText()).isEqualTo("t/alpha");
                assertThat(beta.awaitType("claim_granted", WAIT).path("task_id").asText()).isEqualTo("T1");
            } finally {
                alpha.close();
                beta.close();
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /**
     * The build ships the x86-64 Linux library; without it "auto" would quietly mean NIO there.
     * (It can still fail to load, e.g. from a noexec temp directory; the start-up log says which.)
     */
    @Test
    void theNativeLibraryIsShippedForX8664Linux() {
        String library = "META-INF/native/libnetty_transport_native_epoll_x86_64.so";
        assertThat(getClass().getClassLoader().getResource(library)).as(library).isNotNull();
    }
}
