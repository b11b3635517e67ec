package dev.synapsehub.net.protocol;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.net.delivery.Delivery;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A restarted hub's live claims, read at start, are indexed into scoped delivery's view only
 * once it is needed (the first scoped connection, or the bound on the tasks tracked since start),
 * and every task published since start keeps its newer state.
 */
class ScopedDeliverySeedTest {
    private static final double NOW = 1_000.0;
    private static final double LEASE_END = NOW + 3_600;

    private final DefaultEventExecutor thread = new DefaultEventExecutor(new DefaultThreadFactory("test-outbox", true));
    private final SessionRegistry registry = new SessionRegistry(64, 0, 64, false, 60);
    private final List<EmbeddedChannel> sockets = new ArrayList<>();
    /** Scoped by default, so a change nobody loud can take is not encoded for nobody. */
    private final Outbox outbox = new Outbox(thread, new HubFrames(new WireJson(64), "hub"), 1 << 20, Duration.ZERO,
            new HubMetrics(), 100, Delivery.SCOPED_NOTHING_ELSE, () -> NOW);
    private final ScopedDelivery scoped = outbox.scoped();

    @AfterEach
    void stop() {
        sockets.forEach(EmbeddedChannel::finishAndReleaseAll);
        thread.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    private static Claim claim(String task, String owner, String worktree, String path) {
        return new Claim(task, owner, owner, null, NOW - 10, LEASE_END, ClaimStatus.CLAIMED, null, worktree,
                List.of(path), 1, 0, null, null);
    }

    private <T> T onOutbox(Callable<T> task) {
        return thread.submit(task).syncUninterruptibly().getNow();
    }

    private void onOutbox(Runnable task) {
        thread.submit(task).syncUninterruptibly();
    }

    /** A change the hub publishes (a grant, a renewal, a handoff; a release when {@code released}). */
    private void published(Claim claim, boolean released, String previousOwner) {
        onOutbox(() -> scoped.claimTraffic(List.of(claim.taskId() + (released ? " released" : " held by " + claim.owner())),
                null, claim, released, previousOwner));
    }

    /** A connection bound to {@code name} that declared scoped (nothing else selected). */
    private Session scopedAgent(String name) {
        EmbeddedChannel socket = new EmbeddedChannel();
        sockets.add(socket);
        Session session = new Session(sockets.size(), socket, "127.0.0.1");
        registry.bind(session, name, false, null, false, NOW);
        scoped.declare(session, Delivery.SCOPED_NOTHING_ELSE, null);
        onOutbox(() -> { }); // declared on the outbox thread
        return session;
    }

    private static List<String> received(Session session) {
        EmbeddedChannel socket = (EmbeddedChannel) session.channel();
        List<String> out = new ArrayList<>();
        for (Object m = socket.readOutbound(); m != null; m = socket.readOutbound()) {
            TextWebSocketFrame f = (TextWebSocketFrame) m;
            try {
                out.add(f.text());
            } finally {
                f.release();
            }
        }
        return out;
    }

    private boolean seedPending() {
        return onOutbox(scoped::seedPending);
    }

    private int indexed() {
        return onOutbox(scoped::liveClaimsIndexed);
    }

    @Test
    void withNoScopedConnectionTheStartUpClaimsAreKeptUnindexed() {
        scoped.seed(new ArrayList<>(List.of(claim("H-1", "p/holder", "wt-b", "src/core"),
                claim("H-2", "p/holder", "wt-b", "doc"), claim("H-3", "p/other", "wt-c", "lib"))));
        published(claim("N-1", "p/new", "wt-d", "src"), false, null);

        assertThat(seedPending()).as("the start-up claims wait").isTrue();
        assertThat(indexed()).as("only the change published since start is in the view").isEqualTo(1);
    }

    @Test
    void theFirstScopedDeclarationIndexesThemAndTrafficTouchingAClaimFromBeforeTheRestartReachesItsHolder() {
        scoped.seed(new ArrayList<>(List.of(claim("H-1", "p/holder", "wt-b", "src/core"),
                claim("B-1", "p/other", "wt-x", "doc"))));
        assertThat(seedPending()).isTrue();

        Session holder = scopedAgent("p/holder");
        assertThat(seedPending()).as("indexed when the first connection declared scoped").isFalse();
        assertThat(indexed()).isEqualTo(2);

        published(claim("G-1", "p/giver", "wt-c", "src/core/Main.java"), false, null); // touches H-1
        published(claim("G-2", "p/giver", "wt-c", "test"), false, null); // touches nothing
        assertThat(received(holder)).containsExactly("G-1 held by p/giver");
    }

    @Test
    void aSeedArrivingWhileAConnectionIsScopedIsIndexedAtOnce() {
        Session holder = scopedAgent("p/holder");
        scoped.seed(new ArrayList<>(List.of(claim("H-1", "p/holder", "wt-b", "src/core"))));

        assertThat(seedPending()).isFalse();
        assertThat(indexed()).isEqualTo(1);
        published(claim("G-1", "p/giver", "wt-c", "src/core/Main.java"), false, null);
        assertThat(received(holder)).containsExactly("G-1 held by p/giver");
    }

    @Test
    void aTaskPublishedSinceStartKeepsItsNewerStateWhenTheWaitingClaimsAreIndexed() {
        List<Claim> atStart = List.of(claim("S-1", "p/early", "wt-e", "src/core"),
                claim("L-1", "p/leaver", "wt-f", "src/core"), claim("R-1", "p/was", "wt-g", "src/core"));
        // released after start, before the start-up claims arrived at the outbox
        published(claim("S-1", "p/early", "wt-e", "src/core"), true, null);
        scoped.seed(new ArrayList<>(atStart));
        // after they arrived, before anyone declared scoped: a release and a handoff
        published(claim("L-1", "p/leaver", "wt-f", "src/core"), true, null);
        published(claim("R-1", "p/now", "wt-g", "src/core"), false, "p/was");
        assertThat(seedPending()).isTrue();

        Session early = scopedAgent("p/early");
        Session leaver = scopedAgent("p/leaver");
        Session was = scopedAgent("p/was");
        Session now = scopedAgent("p/now");
        assertThat(indexed()).as("R-1 alone, held by its new owner: nothing released is resurrected").isEqualTo(1);

        published(claim("G-1", "p/giver", "wt-c", "src/core/Main.java"), false, null); // touches all three
        assertThat(received(now)).as("the new owner of the handed-off claim").containsExactly("G-1 held by p/giver");
        assertThat(received(was)).as("its owner at start").isEmpty();
        assertThat(received(leaver)).as("released after the claims arrived").isEmpty();
        assertThat(received(early)).as("released before they arrived").isEmpty();
    }

    @Test
    void reachingTheBoundOnTasksPublishedSinceStartIndexesTheWaitingClaimsAndTheChangeThatReachedItWins() {
        scoped.seed(new ArrayList<>(List.of(claim("W-0", "p/old", "wt-a", "src/x"),
                claim("K-1", "p/keeper", "wt-k", "src/k"))));
        onOutbox(() -> { // every other task the window holds, published since start, touching neither
            for (int i = 1; i < ScopedDelivery.SEED_WINDOW; i++) {
                Claim c = claim("B-" + i, "p/bulk", "wt-bulk", "f" + i);
                scoped.claimTraffic(List.of("bulk"), null, c, false, null);
            }
        });
        assertThat(seedPending()).as("one short of the bound: still waiting").isTrue();
        assertThat(indexed()).isEqualTo(ScopedDelivery.SEED_WINDOW - 1);

        published(claim("W-0", "p/new", "wt-a", "src/x"), false, "p/old"); // the task that reaches the bound
        assertThat(seedPending()).as("indexed, not dropped").isFalse();
        assertThat(indexed()).as("the bulk, K-1 from the start, W-0 once").isEqualTo(ScopedDelivery.SEED_WINDOW + 1);

        Session keeper = scopedAgent("p/keeper");
        Session old = scopedAgent("p/old");
        Session fresh = scopedAgent("p/new");
        published(claim("T-1", "p/giver", "wt-c", "src/k/A.java"), false, null); // touches K-1
        published(claim("T-2", "p/giver", "wt-c", "src/x/B.java"), false, null); // touches W-0
        assertThat(received(keeper)).as("a claim from before the restart").containsExactly("T-1 held by p/giver");
        assertThat(received(fresh)).as("the change that reached the bound").containsExactly("T-2 held by p/giver");
        assertThat(received(old)).as("W-0's owner at start").isEmpty();
    }
}
