package dev.synapsehub.net;

import com.code_intelligence.jazzer.api.SilentCloseable;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static dev.synapsehub.net.FuzzedHub.closeStatus;
import static dev.synapsehub.net.FuzzedHub.show;
import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided fuzzing (Jazzer) of a connection's first frame: the binding path (names,
 * reserved look-alikes, leases, takeover) on top of {@link FrameFuzzTest}'s. Each input opens
 * a connection, sends the input as its first frame and then an unnamed probe, which ends every
 * connection: a first frame that bound a name makes the probe a name switch (4009), one that was
 * refused closed it already. Whatever bound passes an independent name oracle; a refused first
 * frame changes no state and binds nothing. Regression corpus:
 * {@code src/test/resources/dev/synapsehub/net/FirstFrameFuzzTestInputs/aFirstFrame/}.
 */
class FirstFrameFuzzTest {
    /** Closes a refused first frame may carry: too big, conflict or reserved, invalid, takeover refused, owned. */
    private static final Set<Integer> CLOSES = Set.of(1009, 4009, 4010, 4014, 4016);

    private static FuzzedHub fuzzed;

    @BeforeAll
    static void startHub() throws Exception {
        fuzzed = new FuzzedHub();
    }

    @AfterAll
    static void stopHub() throws Exception {
        if (fuzzed != null) {
            fuzzed.close();
        }
    }

    @FuzzTest(maxDuration = "30m")
    void aFirstFrame(byte[] frame) throws Exception {
        try (SilentCloseable loopback = FuzzedHub.loopbackOnly()) {
            check(frame);
        }
    }

    private static void check(byte[] frame) throws Exception {
        fuzzed.drainWitness();
        Set<String> onlineBefore = new HashSet<>(fuzzed.hub.server.services().registry().online());
        FuzzedHub.Fingerprint before = fuzzed.fingerprint();
        long faults = fuzzed.faults();
        HubClient.CloseStatus closed;
        List<ObjectNode> replies;
        try (HubClient c = HubClient.connect(fuzzed.hub.uri(), WAIT)) {
            c.awaitType("welcome", WAIT); // an open hub's, sent at connect
            c.clearPending();
            try {
                c.channelWriteText(frame);
                c.sendText("{\"type\":\"who_request\"}");
            } catch (Exception refusedAlready) {
                // the hub closed the connection after the first frame: the close code tells why
            }
            closed = closeStatus(c, null);
            replies = c.received();
        }
        awaitOnlyOnline(onlineBefore, frame);
        FuzzedHub.Fingerprint after = fuzzed.fingerprint();

        fuzzed.assertInvariants(after, faults, frame);
        if (!(closed.code() == -1 && FuzzedHub.mayResetInsteadOfClose(frame))) {
            assertThat(CLOSES).as("close after %s (replies %s)", show(frame), replies).contains(closed.code());
        }
        // the probe is a name switch only for a connection the first frame bound
        boolean bound = closed.code() == 4009 && "name switch".equals(closed.reason());
        for (ObjectNode reply : replies) {
            String type = reply.path("type").asText();
            if ("error".equals(type)) {
                FuzzedHub.assertWellFormedError(reply, frame);
            } else if ("name_conflict".equals(type) && bound) {
                FuzzedHub.assertBindable(reply.path("target").asText(), frame); // the name it was bound to
            }
        }
        if (!bound) {
            assertThat(after).as("state after the refused first %s (replies %s)", show(frame), replies)
                    .isEqualTo(before);
        }
    }

    /** Waits until the fuzzed connection's departure is processed: no name it bound stays online. */
    private static void awaitOnlyOnline(Set<String> names, byte[] frame) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!names.containsAll(fuzzed.hub.server.services().registry().online())) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still online " + WAIT + " after the socket closed: "
                        + fuzzed.hub.server.services().registry().online() + " after " + show(frame));
            }
            Thread.sleep(1);
        }
    }
}
