package dev.synapsehub.journal;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Start-up's streamed restore: claims loaded into the registry while the snapshot is decoded
 * (several chunks, on the pipe's thread or, when none can be had, on the decoding thread) give
 * exactly the state a restore of the fully decoded image gives, for a sectioned body and an older
 * sequential one; a claims section damaged after some chunks went over is refused and the
 * loading thread stops.
 */
class ClaimsPipeTest {
    private static final Executor OWN_THREAD = task -> {
        Thread t = new Thread(task, "test-claims-pipe");
        t.setDaemon(true);
        t.start();
    };
    private static final Executor NO_THREAD = task -> {
        throw new RejectedExecutionException("no thread in this test");
    };

    /** A snapshot of a random history, with its claims replaced by {@code live} claims over shared directories. */
    private static StateSnapshot snapshot(int live) {
        StateImage image = SnapshotCodecTest.randomState(7, 2_000).image();
        List<StateImage.Held> held = new ArrayList<>(live);
        for (int i = 0; i < live; i++) {
            String owner = "agent-" + (i % 37);
            Claim claim = new Claim("task-" + i, owner, "principal-" + (i % 11), "note " + i, 1_700_000_000.0 + i,
                    1_700_100_000.0 + (i * 7919 % 5_000), ClaimStatus.fromWire("claimed").orElseThrow(), "",
                    "wt-" + (i % 5), List.of("src/mod" + (i % 50) + "/file" + i + ".java", "docs/d" + i + ".md"),
                    1_000 + i, 1 + i % 3, i % 4 == 0 ? "ck-" + i : "", null);
            held.add(new StateImage.Held(claim, 10 + 2L * i));
        }
        List<StateImage.Retained> retained = List.of(new StateImage.Retained("gone-1", "ck-gone-1"),
                new StateImage.Retained("gone-2", "ck-gone-2"));
        StateImage.Claims claims = new StateImage.Claims(1_700_000_500.0, 5_000 + live, 20L + 2L * live, held, retained);
        return new StateSnapshot(1_700_000_600.0, 0, 0, new StateImage(image.lastSeq(), claims, image.idempotency(),
                image.board(), image.resources(), image.messaging(), image.channels(), image.cards(), image.pins(),
                image.findingCounts()));
    }

    private static StateImage streamed(byte[] body, Executor runner) throws Exception {
        CoordinationState state = SnapshotEquivalenceTest.smallState();
        ClaimsPipe pipe = new ClaimsPipe(state, runner);
        StateSnapshot decoded = SnapshotCodec.decode(body, pipe);
        assertThat(decoded.image().claims()).isSameAs(SnapshotCodec.HANDED_OFF);
        state.restoreAllButClaims(decoded.image());
        pipe.awaitRestored();
        return state.image();
    }

    private static StateImage restoredWhole(byte[] body) throws Exception {
        CoordinationState state = SnapshotEquivalenceTest.smallState();
        state.restore(SnapshotCodec.decode(body).image());
        return state.image();
    }

    @Test
    void claimsLoadedWhileDecodedGiveTheStateARestoreOfTheWholeImageGives() throws Exception {
        int live = 3 * ClaimsPipe.CHUNK + 123; // three full chunks and a partial one
        StateSnapshot snapshot = snapshot(live);
        for (byte[] body : List.of(SnapshotCodec.encode(snapshot),
                SnapshotCodec.encode(snapshot, SnapshotCodec.LAST_SEQUENTIAL_FORMAT))) {
            StateImage whole = restoredWhole(body);
            assertThat(whole.claims().live()).hasSize(live);
            assertThat(whole.claims()).isEqualTo(snapshot.image().claims());
            assertThat(streamed(body, OWN_THREAD)).isEqualTo(whole);
            assertThat(streamed(body, NO_THREAD)).isEqualTo(whole);
        }
    }

    @Test
    void anEmptyClaimsSectionStreamsToAnEmptyRegistryWithTheImagesCounters() throws Exception {
        StateSnapshot snapshot = snapshot(0);
        byte[] body = SnapshotCodec.encode(snapshot);
        StateImage state = streamed(body, OWN_THREAD);
        assertThat(state).isEqualTo(restoredWhole(body));
        assertThat(state.claims().orderCounter()).isEqualTo(20L);
    }

    @Test
    void aClaimsSectionDamagedAfterSomeChunksIsRefusedAndTheLoaderStops() throws Exception {
        int live = 3 * ClaimsPipe.CHUNK;
        byte[] body = SnapshotCodec.encode(snapshot(live));
        // the status of a claim in the third chunk becomes one no hub knows
        byte[] marker = "task-2500".getBytes(StandardCharsets.US_ASCII);
        int at = indexFrom(body, marker, 0);
        assertThat(at).isNotNegative();
        byte[] status = "\u0008claimed".getBytes(StandardCharsets.US_ASCII);
        int s = indexFrom(body, status, at);
        assertThat(s).isGreaterThan(at);
        body[s + 3] = 'X';

        CoordinationState state = SnapshotEquivalenceTest.smallState();
        ClaimsPipe pipe = new ClaimsPipe(state, OWN_THREAD);
        assertThatThrownBy(() -> SnapshotCodec.decode(body, pipe))
                .isInstanceOf(CorruptSnapshotException.class)
                .hasMessageContaining("claims section")
                .hasMessageContaining("unknown claim status");
        pipe.abandon();
        assertThatThrownBy(pipe::awaitRestored).hasMessageContaining("abandoned");
    }

    private static int indexFrom(byte[] body, byte[] needle, int from) {
        outer:
        for (int i = from; i <= body.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (body[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
