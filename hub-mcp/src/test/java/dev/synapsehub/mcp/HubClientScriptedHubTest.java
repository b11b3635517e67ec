package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link HubClient} against a scripted hub: registration on a busy hub, and the swap to a frame listener. */
class HubClientScriptedHubTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final FakeHub hub = new FakeHub();

    @AfterEach
    void close() {
        hub.close();
    }

    @Test
    void registerBoundAsksAgainWhenABusyHubRefusedItsWhoRequest() throws Exception {
        AtomicInteger whos = new AtomicInteger();
        hub.script(f -> "who_request".equals(f.path("type").asText()) && whos.incrementAndGet() == 1
                ? List.of(FakeHub.now(FakeHub.error("busy"))) : List.of());
        try (HubClient client = HubClient.connect(hub.uri(), WAIT)) {
            ObjectNode welcome = client.registerBound("proj/me", null, null, Duration.ofSeconds(3));
            assertThat(welcome.path("type").asText()).isEqualTo("welcome");
            assertThat(whos.get()).isEqualTo(2);
            assertThat(client.isOpen()).isTrue();
        }
        assertThat(hub.connections.get()).isEqualTo(1);
    }

    @Test
    void aListenerSetAfterFramesWereQueuedGetsThemFirstAndLosesNoneThatArriveMeanwhile() throws Exception {
        int burst = 2000;
        hub.script(f -> "burst".equals(f.path("type").asText())
                ? IntStream.range(0, burst).mapToObj(i -> {
                    ObjectNode c = FakeHub.frame("chat");
                    c.put("n", i);
                    return FakeHub.now(c);
                }).toList() : List.of());
        try (HubClient client = HubClient.connect(hub.uri(), WAIT)) {
            List<ObjectNode> got = new CopyOnWriteArrayList<>();
            client.send(client.frame("proj/me", "burst"));
            // the swap lands while the burst streams in: some frames are queued, the rest go to the listener
            client.await(f -> "chat".equals(f.path("type").asText()), WAIT); // one consumed: the rest queue behind it
            client.onFrameAfterQueued(got::add);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (got.stream().filter(f -> "chat".equals(f.path("type").asText())).count() < burst - 1
                    && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            List<Integer> order = new ArrayList<>();
            for (ObjectNode f : got) {
                if ("chat".equals(f.path("type").asText())) {
                    order.add(f.path("n").asInt());
                }
            }
            assertThat(order).as("each once, in the order sent").isEqualTo(IntStream.range(1, burst).boxed().toList());
            assertThat(got.get(0).path("type").asText()).as("the welcome queued first comes first").isEqualTo("welcome");
            assertThat(client.pending()).isEmpty();
        }
    }
}
