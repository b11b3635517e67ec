package dev.synapsehub.net;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.api.SilentCloseable;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;

import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hub the frame fuzzers ({@link FrameFuzzTest}, {@link FirstFrameFuzzTest}) feed, and what
 * must hold after every input: no hub fault, the writer alive, the witness's leased name and
 * claim untouched, the claim registry consistent, every error a well-formed typed error, and a
 * refused frame leaving the coordination state exactly as it was.
 */
final class FuzzedHub implements AutoCloseable {
    static final String WITNESS = "p/witness";
    static final String WITNESS_TASK = "witness-task";
    /** Frozen time: no lease lapses between two fingerprints, so any difference is the frame's. */
    private static final double NOW = 1_767_225_600.0;
    static final int MAX_FRAME_BYTES = 64 * 1024;
    /** Enough bytes for the 301 UTF-16 units {@link #show} looks at, whatever they encode. */
    private static final int SHOWN_BYTES = 3 * 301;

    final TestHub hub;
    private final HubClient witness;
    /**
     * The live claims whose identifiers the last input already checked, by identity: a claim is
     * an immutable record and the registry keeps the same instance while it lives, so only a claim
     * an input added or replaced needs the character scan. Scanning every live claim after every
     * input cost most of a long run's time once claims with 60,000-character task ids had piled
     * up (nothing expires on the frozen clock).
     */
    private Set<Claim> checkedClaims = Collections.newSetFromMap(new IdentityHashMap<>());

    /** What a refused frame must leave as it was: the writer's state, and the journal's end. */
    record Fingerprint(long lastSeq, StateImage image) {
        /** True when {@code name} has a dead-letter entry, which its next non-chat frame clears. */
        boolean hasDeadLetterFor(String name) {
            return image.messaging().deadLetters().stream().anyMatch(d -> name.equals(d.target()));
        }
    }

    FuzzedHub() throws Exception {
        Clock frozen = () -> NOW;
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), frozen,
                ActorSettings.DEFAULTS);
        actor.start();
        hub = new TestHub(HubConfig.builder().maxFrameBytes(MAX_FRAME_BYTES).ratePerSecond(0), actor, frozen);
        // the witness holds its name by a lease: no fuzzed first frame can take it over
        witness = hub.connect();
        ObjectNode hello = witness.frame(WITNESS, "heartbeat");
        hello.put("lease", true);
        witness.send(hello);
        witness.awaitType("lease_granted", WAIT);
        ObjectNode claim = witness.frame(WITNESS, "claim");
        claim.put("task_id", WITNESS_TASK).put("worktree", "wt-witness");
        claim.putArray("paths").add("witness"); // a narrow scope: fuzzed claims elsewhere are granted
        witness.send(claim);
        witness.awaitType("claim_granted", WAIT);
        assertThat(fingerprint()).as("two fingerprints of an unchanged state").isEqualTo(fingerprint());
    }

    /**
     * Lets the hub and its clients talk over loopback, and nowhere else (Jazzer's SSRF detector),
     * for one input: close it when the input is done (Jazzer resets the policy after a fuzzing run,
     * so a policy held across inputs cannot be closed at the end).
     */
    static SilentCloseable loopbackOnly() {
        return BugDetectors.allowNetworkConnections((host, port) -> "127.0.0.1".equals(host)
                || "localhost".equals(host));
    }

    /** Drops what the idle witness received (broadcasts of fuzzed frames): a long run sends millions. */
    void drainWitness() {
        witness.clearPending();
    }

    Fingerprint fingerprint() throws Exception {
        return hub.actor.read(s -> new Fingerprint(s.lastSeq(), s.image())).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    long faults() {
        return hub.server.services().metrics().faults.get();
    }

    /** What holds after every input, refused or not. */
    void assertInvariants(Fingerprint after, long faultsBefore, byte[] frame) {
        String what = show(frame);
        assertThat(faults()).as("hub faults after %s", what).isEqualTo(faultsBefore);
        assertThat(hub.actor.failure()).as("writer failure after %s", what).isEmpty();
        assertThat(hub.server.services().registry().isOnline(WITNESS)).as("witness online after %s", what).isTrue();
        List<StateImage.Held> live = after.image().claims().live();
        assertThat(live).as("the witness's claim after %s", what)
                .anyMatch(h -> WITNESS_TASK.equals(h.claim().taskId()) && WITNESS.equals(h.claim().owner()));
        Set<String> ids = new HashSet<>();
        Set<Claim> checked = Collections.newSetFromMap(new IdentityHashMap<>());
        for (StateImage.Held held : live) {
            Claim c = held.claim();
            assertThat(ids.add(c.taskId())).as("one live claim per task id (%s) after %s", c.taskId(), what).isTrue();
            if (!checkedClaims.contains(c)) {
                assertThat(wellFormed(c.taskId()) && wellFormed(c.owner()))
                        .as("identifiers of %s are well-formed Unicode after %s", c, what).isTrue();
            }
            checked.add(c);
        }
        checkedClaims = checked;
    }

    /** A typed error of the wire contract (§4.2 envelope): the hub's, with a reason and a typed code. */
    static void assertWellFormedError(ObjectNode e, byte[] frame) {
        String what = "error " + e + " after " + show(frame);
        assertThat(e.path("sender").asText()).as(what).isEqualTo("SynapseHub");
        assertThat(e.path("target").isTextual()).as(what).isTrue();
        assertThat(e.path("payload").isTextual() && !e.path("payload").textValue().isBlank()).as(what).isTrue();
        assertThat(e.path("timestamp").isNumber()).as(what).isTrue();
        assertThat(e.path("hub_id").isTextual()).as(what).isTrue();
        JsonNode code = e.get("error_code");
        if (code != null) {
            assertThat(code.isTextual() && code.textValue().matches("[a-z_]+")).as(what).isTrue();
        }
    }

    /**
     * A bound name passes an oracle independent of the hub's own check: bounded, no control,
     * format, surrogate, private-use or unassigned code point, and not the hub's names after
     * compatibility folding and case folding.
     */
    static void assertBindable(String name, byte[] frame) {
        String what = "bound name '" + name + "' after " + show(frame);
        assertThat(name.codePointCount(0, name.length())).as(what).isLessThanOrEqualTo(256);
        assertThat(name.codePoints().noneMatch(cp -> switch (Character.getType(cp)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE,
                    Character.UNASSIGNED -> true;
            default -> false;
        })).as(what).isTrue();
        String folded = Normalizer.normalize(name, Normalizer.Form.NFKC).toUpperCase(Locale.ROOT)
                .toLowerCase(Locale.ROOT).strip();
        assertThat(Set.of("synapsehub", "synapse", "system")).as(what).doesNotContain(folded);
    }

    /**
     * True when the hub may end the connection after {@code frame} without its 1009 close frame
     * reaching the client: the hub closes a too-long frame's socket while the rest of the frame is
     * still arriving, and the kernel answers that with a reset that can overtake the close frame.
     */
    static boolean mayResetInsteadOfClose(byte[] frame) {
        return frame.length > MAX_FRAME_BYTES;
    }

    /** How the hub closed {@code c}; fails when it neither answered nor closed. */
    static HubClient.CloseStatus closeStatus(HubClient c, Exception why) throws Exception {
        try {
            return c.closeFuture().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException stillOpen) {
            if (why != null) {
                stillOpen.addSuppressed(why);
            }
            throw new AssertionError("no reply and no close within " + WAIT, stillOpen);
        }
    }

    static boolean wellFormed(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The frame for a failure message, cut at 300 characters. Built for every input, so only
     * the bytes that can reach the cut are decoded (a UTF-16 unit takes at most 3 bytes), not a
     * whole 100 KB input.
     */
    static String show(byte[] frame) {
        String s = new String(frame, 0, Math.min(frame.length, SHOWN_BYTES), StandardCharsets.UTF_8);
        return "frame " + (s.length() > 300 ? s.substring(0, 300) + "…(" + frame.length + " bytes)" : s);
    }

    @Override
    public void close() throws Exception {
        hub.close();
    }
}
