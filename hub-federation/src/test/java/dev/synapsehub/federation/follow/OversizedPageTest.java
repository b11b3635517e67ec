package dev.synapsehub.federation.follow;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.route.ForwardSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FakePeer;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Federation;
import dev.synapsehub.federation.testing.Http;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pages of another size than the {@code limit} asked. A peer that answers a log pull with more
 * events (a huge page) is refused: the poll fails with an error saying so, and neither the cursor,
 * the advisory fold nor the persisted mirror changes; the peer is followed again once its pages
 * fit. A peer that stops every page short (as a byte cap does), by a varying count, is followed
 * event by event: each request starts where a page ended, though the next one leaves before the
 * current page is folded.
 */
class OversizedPageTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final double LEASE_END = Math.floor(System.currentTimeMillis() / 1000.0) + 3600;
    /** The follower asks for at most this many events per poll, so at most this (+1 overlap) per page. */
    static final int EVENTS_PER_POLL = 10;

    @TempDir
    Path dir;
    final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T keep(T c) {
        open.add(c);
        return c;
    }

    /** A peer log of {@code size} claims; {@code honest} false: every answer ignores the limit. */
    private static ObjectNode answer(ObjectNode request, int size, boolean honest) {
        return answer(request, size, honest ? request.path("limit").asInt() : Integer.MAX_VALUE);
    }

    /** A peer log of {@code size} claims, at most {@code pageSize} per page. */
    private static ObjectNode answer(ObjectNode request, int size, int pageSize) {
        long after = request.path("after_seq").asLong();
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        ArrayNode events = out.putArray("events");
        long last = after;
        for (long seq = after + 1; seq <= size && events.size() < pageSize; seq++) {
            ObjectNode e = events.addObject();
            e.put("seq", seq);
            e.put("ts", 1_700_000_000.5 + seq);
            e.put("kind", "claim");
            ObjectNode p = e.putObject("payload");
            p.put("task_id", "T-" + seq);
            p.put("owner", "proj/x");
            p.put("lease_expires_at", LEASE_END);
            p.put("epoch", seq);
            p.put("status", "claimed");
            last = seq;
        }
        out.put("next_cursor", last);
        out.put("log_end_seq", size);
        return out;
    }

    private FedHub follower(Pki.HubCerts a, Path db, FakePeer peer) throws Exception {
        return follower(a, db, peer, EVENTS_PER_POLL);
    }

    private FedHub follower(Pki.HubCerts a, Path db, FakePeer peer, int eventsPerPoll) throws Exception {
        WatchSettings watch = new WatchSettings(List.of(Federation.peer("hub-f", peer.uri(), peer.certs)),
                Duration.ofSeconds(1), null, a.clientFiles().cert(), a.clientFiles().key(),
                new PollBudget(100, eventsPerPoll, Duration.ofSeconds(20)), Duration.ofSeconds(10));
        return new FedHub(a, db, new FederationSettings(ServingTrust.none(), watch,
                new NamespaceOwners("hub-a", Map.of("proj", "hub-f")), ForwardSettings.none()));
    }

    @Test
    void aPageLargerThanItsLimitIsRefusedAndChangesNothing() throws Exception {
        Pki pki = new Pki(dir);
        Pki.HubCerts a = pki.hub("hub-a");
        AtomicInteger size = new AtomicInteger(3);
        AtomicBoolean honest = new AtomicBoolean(true);
        FakePeer peer = keep(new FakePeer(pki.hub("hub-f"), r -> answer(r, size.get(), honest.get())));
        Path db = dir.resolve("a.db");
        FedHub first = follower(a, db, peer);
        Await.until("the first 3 events are folded", WAIT, () -> first.federation.fold().peer("hub-f").cursor() == 3);
        PeerView before = first.federation.fold().peer("hub-f");

        honest.set(false);
        size.set(40); // the next pull asks for at most 11 (10 plus the overlap event) and gets 38
        Await.until("the huge page is refused", WAIT, () -> first.federation.fold().peer("hub-f").lastError() != null);
        PeerView refused = first.federation.fold().peer("hub-f");
        assertThat(refused.lastError()).startsWith("oversized page: the peer served 38 events where this hub asked "
                + "for at most 11 (limit)");
        assertThat(refused.cursor()).isEqualTo(3);
        assertThat(refused.logEnd()).isEqualTo(before.logEnd()); // the page's log_end_seq was not taken either
        assertThat(refused.claims()).isEqualTo(before.claims());
        assertThat(Http.get(first, "/metrics"))
                .contains("synapse_multihub_peer_observation_errors_total{peer=\"hub-f\",kind=\"oversized_page\"} ");
        first.close();

        // the mirror did not change: a restarted follower has the same view back
        FedHub second = keep(follower(a, db, peer));
        PeerView restored = second.federation.fold().peer("hub-f");
        assertThat(restored.cursor()).isEqualTo(3);
        assertThat(restored.claims()).isEqualTo(before.claims());

        honest.set(true); // pages that fit are followed again, in steps of at most 10 events
        Await.until("caught up with honest pages", WAIT, () -> second.federation.fold().peer("hub-f").cursor() == 40);
        assertThat(second.federation.fold().peer("hub-f").claims()).hasSize(40);
        assertThat(second.federation.fold().peer("hub-f").lastError()).isNull();
    }

    @Test
    void pagesStoppedShortAreFollowedEventByEvent() throws Exception {
        Pki pki = new Pki(dir);
        Set<Long> asked = ConcurrentHashMap.newKeySet();
        Set<Long> ends = ConcurrentHashMap.newKeySet();
        AtomicInteger size = new AtomicInteger(1_500);
        FakePeer peer = keep(new FakePeer(pki.hub("hub-f"), r -> {
            long after = r.path("after_seq").asLong();
            asked.add(after);
            // short of any limit the follower asks (at most 400 here), by a count that varies
            ObjectNode page = answer(r, size.get(), (int) Math.min(r.path("limit").asInt(), 7 + after * 31 % 40));
            ends.add(page.path("next_cursor").asLong());
            return page;
        }));
        FedHub follower = keep(follower(pki.hub("hub-a"), dir.resolve("a.db"), peer, 400));
        Await.until("the whole log is folded", WAIT, () -> follower.federation.fold().peer("hub-f").cursor() == 1_500);
        // the log grows: the next poll re-reads the last event folded, across the many pages of the
        // first, and finds it as fingerprinted (the last event's, not an earlier page's)
        size.set(1_600);
        Await.until("the rest is folded", WAIT, () -> follower.federation.fold().peer("hub-f").cursor() == 1_600
                || follower.federation.fold().peer("hub-f").quarantined());
        PeerView view = follower.federation.fold().peer("hub-f");
        assertThat(view.quarantined()).isFalse();
        assertThat(view.lastError()).isNull();
        assertThat(view.claims()).hasSize(1_600);
        // every request started at a page's end, or one before it (a poll re-reading its last event)
        Set<Long> elsewhere = new TreeSet<>(asked);
        for (long end : ends) {
            elsewhere.remove(end);
            elsewhere.remove(end - 1);
        }
        elsewhere.remove(0L);
        assertThat(elsewhere).isEmpty();
    }
}
