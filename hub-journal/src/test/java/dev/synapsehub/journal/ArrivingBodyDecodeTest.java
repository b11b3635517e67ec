package dev.synapsehub.journal;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.MutationDecider;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A snapshot body decoded while it is still arriving ({@link ArrivingBody}): the decode waits
 * for the bytes it needs, gives the same snapshot as a decode of the whole body whatever the
 * pieces (formats 8 and 7), hands claims on before the body is whole, and stops with a
 * {@link CorruptSnapshotException} when the body is abandoned or ends short.
 */
class ArrivingBodyDecodeTest {
    /** A state of 600 live claims (every tenth keyed, so the ledger has entries) of 10 agents. */
    private static StateSnapshot snapshot() {
        CoordinationState state = new CoordinationState();
        double now = 1_700_000_000;
        for (int i = 0; i < 600; i++) {
            String agent = "agent" + (i % 10);
            String task = String.format("task-%05d", i);
            Mutation m = i % 10 == 0 ? Fixtures.keyedClaim(agent, task, "k" + i) : Fixtures.claimOf(agent, task);
            if (MutationDecider.decide(state, m, now) instanceof MutationDecider.Fresh fresh) {
                for (CoordinationEvent e : fresh.events()) {
                    state.apply(e);
                }
            }
            now += 0.5;
        }
        return new StateSnapshot(1_700_000_123.25, 2, 17, state.image());
    }

    private static CompletableFuture<StateSnapshot> decodeBeside(ArrivingBody body, SnapshotCodec.ClaimsSink sink) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return SnapshotCodec.decode(body, sink);
            } catch (CorruptSnapshotException e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
    }

    @Test
    void aBodyArrivingInRandomPiecesDecodesAsTheWholeBodyDoesInFormatsEightAndSeven() throws Exception {
        StateSnapshot snapshot = snapshot();
        assertThat(snapshot.image().claims().live()).hasSize(600);
        Random random = new Random(3);
        for (int format : new int[] {SnapshotCodec.FORMAT, SnapshotCodec.LAST_SEQUENTIAL_FORMAT}) {
            byte[] whole = SnapshotCodec.encode(snapshot, format);
            for (int round = 0; round < 20; round++) {
                ArrivingBody body = new ArrivingBody(whole.length);
                CompletableFuture<StateSnapshot> decoded = decodeBeside(body, null);
                int at = 0;
                while (at < whole.length) {
                    int piece = Math.min(whole.length - at, 1 + random.nextInt(round < 10 ? 7 : 900));
                    System.arraycopy(whole, at, body.bytes(), at, piece);
                    at += piece;
                    body.arrived(at);
                }
                body.close();
                assertThat(decoded.get(20, TimeUnit.SECONDS)).isEqualTo(snapshot);
            }
        }
    }

    @Test
    void claimsAreHandedOnBeforeTheBodyIsWhole() throws Exception {
        StateSnapshot snapshot = snapshot();
        byte[] whole = SnapshotCodec.encode(snapshot);
        int live = snapshot.image().claims().live().size();
        CountDownLatch someClaims = new CountDownLatch(live / 2);
        CountDownLatch ended = new CountDownLatch(1);
        SnapshotCodec.ClaimsSink sink = new SnapshotCodec.ClaimsSink() {
            @Override
            public void start(double now, long epochCounter, long orderCounter, int n) {
            }

            @Override
            public void held(Claim claim, long order) {
                someClaims.countDown();
            }

            @Override
            public void end(List<StateImage.Retained> retained) {
                ended.countDown();
            }
        };
        ArrivingBody body = new ArrivingBody(whole.length);
        CompletableFuture<StateSnapshot> decoded = decodeBeside(body, sink);
        // all but the last 64 bytes (the end of the last section and the closing magic)
        System.arraycopy(whole, 0, body.bytes(), 0, whole.length - 64);
        body.arrived(whole.length - 64);
        assertThat(someClaims.await(20, TimeUnit.SECONDS)).as("claims decoded before the body is whole").isTrue();
        assertThat(ended.await(20, TimeUnit.SECONDS)).as("the claims section is before the missing bytes").isTrue();
        assertThat(decoded).isNotDone();
        System.arraycopy(whole, whole.length - 64, body.bytes(), whole.length - 64, 64);
        body.arrived(whole.length);
        body.close();
        StateSnapshot result = decoded.get(20, TimeUnit.SECONDS);
        assertThat(result.image().claims()).isSameAs(SnapshotCodec.HANDED_OFF);
        assertThat(result.image().idempotency()).isEqualTo(snapshot.image().idempotency());
    }

    @Test
    void anAbandonedOrShortBodyStopsTheDecodeWithACorruptSnapshot() throws Exception {
        byte[] whole = SnapshotCodec.encode(snapshot());
        for (boolean abandon : new boolean[] {true, false}) {
            ArrivingBody body = new ArrivingBody(whole.length);
            CompletableFuture<StateSnapshot> decoded = decodeBeside(body, null);
            System.arraycopy(whole, 0, body.bytes(), 0, whole.length / 2);
            body.arrived(whole.length / 2);
            if (abandon) {
                body.abandon();
            } else {
                body.close(); // nothing more comes: the body is short
            }
            assertThatThrownBy(() -> decoded.get(20, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(CorruptSnapshotException.class)
                    .hasMessageContaining(abandon ? "abandoned" : "ends early");
        }
    }
}
