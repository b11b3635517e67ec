package dev.synapsehub.net;

import com.code_intelligence.jazzer.api.SilentCloseable;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.NetTransport;
import dev.synapsehub.net.session.Session;
import io.netty.channel.EventLoopGroup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

import static dev.synapsehub.net.FuzzedHub.closeStatus;
import static dev.synapsehub.net.FuzzedHub.show;
import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided fuzzing (Jazzer) of the frame → command path: every input is one text frame
 * a bound agent sends over a real socket into a real hub (decode, shape checks, names, HMAC
 * gate, verbs, the actor); {@link FuzzedHub} says what must hold after it. A frame the hub
 * refused (only typed errors came back, or a documented refusal close) leaves the coordination
 * state exactly as it was. Without {@code JAZZER_FUZZ} this runs the regression corpus in
 * {@code src/test/resources/dev/synapsehub/net/FrameFuzzTestInputs/aTextFrame/}; the longer run
 * and its result are in docs/benchmarks.md.
 */
class FrameFuzzTest {
    private static final String ME = "p/fuzzer";
    /** Close codes a refusal of a bound agent's text frame may carry: too big; name switch or reserved. */
    private static final Set<Integer> REFUSAL_CLOSES = Set.of(1009, 4009);
    /**
     * Inputs fed to one hub before the run starts a fresh one. On the frozen clock nothing
     * lapses, so the state only grows, and the exact fingerprint images all of it two or three
     * times per input: in a long run that imaging took 90 % of the Java samples near input
     * 470,000 (docs/benchmarks.md). A fixed count keeps the run deterministic; a regression run
     * (under 100 inputs) never reaches it.
     */
    private static final long INPUTS_PER_HUB = 50_000;

    private static FuzzedHub fuzzed;
    /** One loop for every fuzzer connection: a reconnect (after a refusal close) starts no thread. */
    private static EventLoopGroup clientLoop;
    private static HubClient fuzzer;
    private static long markers;
    private static long inputs;
    /** Per-input cost by size and the state's growth, with {@code -Dfuzz.progress=SECONDS}; null otherwise. */
    private static FuzzProgress progress;

    @BeforeAll
    static void startHub() throws Exception {
        fuzzed = new FuzzedHub();
        clientLoop = NetTransport.choose(true).group(1, "fuzz-client");
        fuzzer = bind();
        progress = FuzzProgress.fromProperty();
    }

    @AfterAll
    static void stopHub() throws Exception {
        if (fuzzed != null) {
            fuzzed.close();
        }
        if (clientLoop != null) {
            clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    @FuzzTest(maxDuration = "30m")
    void aTextFrame(byte[] frame) throws Exception {
        if (progress != null) {
            progress.start();
        }
        try (SilentCloseable loopback = FuzzedHub.loopbackOnly()) {
            if (++inputs % INPUTS_PER_HUB == 0) {
                freshHub();
            }
            check(frame);
        }
        if (progress != null) {
            progress.done(frame.length, () -> fuzzed.fingerprint().image());
        }
    }

    private static void check(byte[] frame) throws Exception {
        fuzzed.drainWitness();
        HubClient c = boundFuzzer();
        // Any non-chat frame of the fuzzer clears a dead letter addressed to it that an earlier
        // chat left (MessagingVerbs#onActivity): the probe below would do that inside this
        // input's window and pass for a change by a refused frame, so a probe does it first.
        // Only an entry can be cleared: while the fuzzer has none, that probe would change
        // nothing, and the input skips its round trip (most inputs do).
        FuzzedHub.Fingerprint before = fuzzed.fingerprint();
        if (before.hasDeadLetterFor(ME)) {
            c.send(c.frame("who_request"));
            c.awaitWhileOpen(f -> "who_snapshot".equals(f.path("type").asText()), WAIT);
            before = fuzzed.fingerprint();
        }
        long faults = fuzzed.faults();
        c.clearPending();

        Integer closedWith = null;
        try {
            c.channelWriteText(frame);
            c.send(c.frame("who_request"));
            // the edge has handled the frame once the probe behind it is answered
            c.awaitWhileOpen(f -> "who_snapshot".equals(f.path("type").asText()), WAIT);
        } catch (Exception closed) { // a write or the wait met the hub's close (Netty throws it unchecked)
            closedWith = closeStatus(c, closed).code();
        }
        // the actor is FIFO: this read runs after any mutation the frame submitted
        FuzzedHub.Fingerprint after = fuzzed.fingerprint();
        if (closedWith == null) {
            closedWith = awaitMarker(c);
        }
        List<ObjectNode> replies = c.pending();

        fuzzed.assertInvariants(after, faults, frame);
        for (ObjectNode reply : replies) {
            if ("error".equals(reply.path("type").asText())) {
                FuzzedHub.assertWellFormedError(reply, frame);
            }
        }
        boolean refused;
        if (closedWith != null) {
            if (!(closedWith == -1 && FuzzedHub.mayResetInsteadOfClose(frame))) {
                assertThat(REFUSAL_CLOSES).as("close code after %s", show(frame)).contains(closedWith);
            }
            refused = true;
        } else {
            refused = !replies.isEmpty() && replies.stream().allMatch(r -> "error".equals(r.path("type").asText()));
        }
        if (refused) {
            assertThat(after).as("state after the refused %s (replies %s)", show(frame), replies).isEqualTo(before);
        }
    }

    /** Replaces the hub (and its witness) with a new one and binds the fuzzer to it. */
    private static void freshHub() throws Exception {
        fuzzer.close();
        fuzzed.close();
        fuzzed = new FuzzedHub();
        fuzzer = bind();
    }

    /** The fuzzing connection, reconnected and bound again after the hub closed it. */
    private static HubClient boundFuzzer() throws Exception {
        if (fuzzer.isOpen() && !fuzzer.closeFuture().isDone()) {
            return fuzzer;
        }
        fuzzer.close();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (fuzzed.hub.server.services().registry().isOnline(ME)) { // the old socket's departure is processed
            if (System.nanoTime() > deadline) {
                throw new AssertionError(ME + " still online " + WAIT + " after its socket closed");
            }
            LockSupport.parkNanos(20_000); // the close is usually processed within tens of microseconds
        }
        fuzzer = bind();
        return fuzzer;
    }

    /** A connection bound as {@link #ME} (not kept by the TestHub: a long run makes many). */
    private static HubClient bind() throws Exception {
        HubClient c = HubClient.connect(fuzzed.hub.uri(), WAIT, clientLoop);
        c.register(ME, null, WAIT);
        c.await(f -> "presence_update".equals(f.path("type").asText()) && ME.equals(f.path("agent").asText()), WAIT);
        return c;
    }

    /**
     * A private frame the outbox sends after everything published before it: once it arrives,
     * every reply to the fuzzed frame has. Returns the close code if the socket closed instead.
     */
    private static Integer awaitMarker(HubClient c) throws Exception {
        Session session = fuzzed.hub.server.services().registry().session(ME);
        if (session == null) {
            return closeStatus(c, null).code();
        }
        long n = ++markers;
        fuzzed.hub.server.services().outbox().sendInOrder(session, "{\"type\":\"fuzz_marker\",\"n\":" + n + "}");
        try {
            c.awaitWhileOpen(f -> "fuzz_marker".equals(f.path("type").asText()) && f.path("n").asLong() == n, WAIT);
            return null;
        } catch (TimeoutException closed) {
            return closeStatus(c, closed).code();
        }
    }
}
