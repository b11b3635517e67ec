package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.governance.NamespaceGovernance;
import dev.synapsehub.federation.AuditJournal;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.Mirror;
import dev.synapsehub.federation.follow.PollBudget;
import dev.synapsehub.federation.follow.WatchPeer;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.link.ClientIdentity;
import dev.synapsehub.federation.link.PeerLinks;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FakePeer;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Federation;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The leader's half of a mesh's watch ({@link ClusterWatch}), on the actor of the node that
 * decides (here a hub's own actor, deciding everything): what it proposes against the
 * replicated partitions and quarantines (issue 12/13, the review of the withdrawn design).
 * A peer counts as observed only after this leader read its whole log; until then its last
 * replicated state stands. The mesh itself (replication, refusal where the leader decides,
 * snapshots, leader change) is pinned by hub-mesh's {@code MeshGovernanceTest} and hub-cli's
 * {@code MeshWatchCliTest}.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ClusterWatchTest {
    static final Duration WAIT = Duration.ofSeconds(60);
    static final double LEASE_END = Math.floor(System.currentTimeMillis() / 1000.0) + 3600;
    static final NamespaceOwners OWNERS = new NamespaceOwners("hub-m", Map.of("proj", "hub-m"));

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

    @Test
    void oneUnreachablePeerDoesNotKeepAnotherPeersPartitionFromBeingRecorded() throws Exception { // review (b)
        Pki pki = new Pki(dir);
        FedHub leader = keep(leaderHub(pki));
        FakePeer dead = keep(new FakePeer(pki.hub("hub-d"), r -> null)); // never answers
        FakePeer b = keep(new FakePeer(pki.hub("hub-b"), r -> page(r, 3, 3)));
        ClusterWatch watch = keep(watch(pki, leader, 100, Federation.peer("hub-d", dead.uri(), dead.certs),
                Federation.peer("hub-b", b.uri(), b.certs)));

        Await.until("the partition hub-b's claim makes is recorded", WAIT,
                () -> governance(leader).partitions().size() == 1);
        assertThat(governance(leader).partitions().get(0).contestingHubs()).containsExactly("hub-b");
        assertThat(watch.fold().completeAt("hub-d")).as("hub-d was never read").isZero();
    }

    @Test
    void aNewLeaderDoesNotHealOnAPartialReadOfAPeerOnlyOnAComplete() throws Exception { // review (c)
        Pki pki = new Pki(dir);
        FedHub leader = keep(leaderHub(pki));
        record(leader, "multihub_partition", partition("hub-b"));
        AtomicBoolean stalled = new AtomicBoolean(true);
        // 30 events, none in proj: a first step of 10 is committed, then the peer goes silent. The
        // next poll asks from seq 9 (it reads the last accepted event again to check it is unchanged),
        // so the silence starts there: answered, it would take the cursor on to 20 at once, and the
        // wait below for exactly 10 would race it
        FakePeer b = keep(new FakePeer(pki.hub("hub-b"), r -> stalled.get() && r.path("after_seq").asLong() >= 9
                ? null : page(r, 30, 0)));
        ClusterWatch watch = keep(watch(pki, leader, 10, Federation.peer("hub-b", b.uri(), b.certs)));

        Await.until("the first step is committed", WAIT,
                () -> watch.fold().peer("hub-b") != null && watch.fold().peer("hub-b").cursor() == 10);
        long seen = watch.comparisons();
        Await.until("three more comparisons", WAIT, () -> watch.comparisons() >= seen + 3);
        assertThat(governance(leader).partitions()).as("not healed on a partial read").hasSize(1);

        stalled.set(false);
        Await.until("healed once hub-b's whole log was read", WAIT, () -> governance(leader).partitions().isEmpty());
        assertThat(watch.fold().peer("hub-b").cursor()).isEqualTo(30);
    }

    @Test
    void aNewLeaderKeepsAQuarantineAnEarlierLeaderRecordedAndDoesNotFollowThatPeer() throws Exception { // review (d)
        Pki pki = new Pki(dir);
        FedHub leader = keep(leaderHub(pki));
        record(leader, "multihub_partition", partition("hub-b"));
        ObjectNode equivocation = AuditJournal.payload();
        AuditJournal.putIdentity(equivocation, "peer_id", "hub-b");
        equivocation.put("accepted_fingerprint", "sha256:aa");
        equivocation.put("conflicting_fingerprint", "sha256:bb");
        equivocation.put("status", "quarantined");
        record(leader, "multihub_equivocation", equivocation);
        FakePeer b = keep(new FakePeer(pki.hub("hub-b"), r -> page(r, 0, 0))); // an empty log: would heal
        ClusterWatch watch = keep(watch(pki, leader, 100, Federation.peer("hub-b", b.uri(), b.certs)));

        Await.until("three comparisons", WAIT, () -> watch.comparisons() >= 3);
        assertThat(b.requests.get()).as("a quarantined peer is not polled").isZero();
        assertThat(watch.fold().peer("hub-b").quarantined()).isTrue();
        assertThat(governance(leader).partitions()).as("its partition stands").hasSize(1);
        assertThat(governance(leader).quarantines()).containsOnlyKeys("hub-b");
    }

    @Test
    void aRecoveryTheLeaderTakesLiftsTheReplicatedQuarantineAndFollowsThePeerAgain() throws Exception {
        Pki pki = new Pki(dir);
        FedHub leader = keep(leaderHub(pki));
        record(leader, "multihub_partition", partition("hub-b"));
        ObjectNode equivocation = AuditJournal.payload();
        AuditJournal.putIdentity(equivocation, "peer_id", "hub-b");
        equivocation.put("accepted_fingerprint", "sha256:aa");
        equivocation.put("conflicting_fingerprint", "sha256:bb");
        record(leader, "multihub_equivocation", equivocation);
        FakePeer b = keep(new FakePeer(pki.hub("hub-b"), r -> page(r, 5, 0))); // nothing in proj: heals once read
        ClusterWatch watch = keep(watch(pki, leader, 100, Federation.peer("hub-b", b.uri(), b.certs)));
        Await.until("three comparisons", WAIT, () -> watch.comparisons() >= 3);
        assertThat(b.requests.get()).as("quarantined: not polled").isZero();

        ObjectNode body = JsonNodeFactory.instance.objectNode();
        body.put("peer", "hub-b");
        body.put("operator", "operator/cli");
        body.put("reason", "restored");
        ObjectNode answer = watch.serveRecover(body).get(30, TimeUnit.SECONDS);
        assertThat(answer.path("recovered").asBoolean()).as(answer.toString()).isTrue();
        assertThat(answer.path("detail").asText()).isEqualTo("recovered peer 'hub-b'; log generation 1, following from seq 0");
        assertThat(governance(leader).quarantines()).as("the recovery record was committed and applied").isEmpty();
        Await.until("hub-b read again and proj healed", WAIT, () -> governance(leader).partitions().isEmpty());
        assertThat(watch.fold().peer("hub-b").cursor()).isEqualTo(5);

        ObjectNode observed = watch.serveObserved(JsonNodeFactory.instance.objectNode()).get(30, TimeUnit.SECONDS);
        assertThat(observed.path("peers").get(0).path("peer").asText()).isEqualTo("hub-b");
        assertThat(observed.path("peers").get(0).path("quarantined").asBoolean()).isFalse();
        assertThat(observed.path("peers").get(0).path("log_generation").asLong()).isEqualTo(1);
        body.put("peer", "hub-x");
        assertThat(watch.serveRecover(body).get(30, TimeUnit.SECONDS).path("detail").asText())
                .isEqualTo("'hub-x' is not a watched peer");
    }

    @Test
    void aLiveClaimInAPartialReadIsCountedAtOnceAsOnASingleHub() throws Exception { // review of the mesh watch, 2
        Pki pki = new Pki(dir);
        FedHub leader = keep(leaderHub(pki));
        // 30 events, seq 5 claims in proj: the first step of 10 reads it, then the peer goes silent from seq 9
        // (the next poll re-reads the last accepted event), so this leader never reads the log to its end
        FakePeer b = keep(new FakePeer(pki.hub("hub-b"), r -> r.path("after_seq").asLong() >= 9 ? null : page(r, 30, 5)));
        ClusterWatch watch = keep(watch(pki, leader, 10, Federation.peer("hub-b", b.uri(), b.certs)));

        Await.until("the partition hub-b's live claim makes is recorded", WAIT,
                () -> governance(leader).partitions().size() == 1);
        assertThat(governance(leader).partitions().get(0).contestingHubs()).containsExactly("hub-b");
        assertThat(watch.fold().peer("hub-b").cursor()).as("only the first step was read").isEqualTo(10);
    }

    @Test
    void aMirrorThatOpensButCannotBeReadIsClosedBeforeTheNextTry() throws Exception { // review of the mesh watch, 4
        Pki pki = new Pki(dir);
        FedHub leader = keep(leaderHub(pki));
        FakePeer b = keep(new FakePeer(pki.hub("hub-b"), r -> page(r, 3, 0)));
        java.util.concurrent.atomic.AtomicInteger opened = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger closed = new java.util.concurrent.atomic.AtomicInteger();
        ClusterWatch.Mirrors unreadable = () -> {
            opened.incrementAndGet();
            Mirror inner = Mirror.memory();
            return new Mirror() {
                public List<dev.synapsehub.federation.follow.PeerView> load() throws MirrorException {
                    throw new MirrorException("unreadable mirror", null);
                }
                public String fingerprint(String peer) throws MirrorException {
                    return inner.fingerprint(peer);
                }
                public void commit(dev.synapsehub.federation.follow.PeerView view, String fingerprint,
                                   java.util.Collection<dev.synapsehub.federation.follow.ObservedClaim> upserts,
                                   java.util.Collection<String> releases) throws MirrorException {
                    inner.commit(view, fingerprint, upserts, releases);
                }
                public void reset(dev.synapsehub.federation.follow.PeerView view) throws MirrorException {
                    inner.reset(view);
                }
                public void close() {
                    closed.incrementAndGet();
                    inner.close();
                }
            };
        };
        keep(watch(pki, leader, 100, unreadable, () -> true, links(leader), Federation.peer("hub-b", b.uri(), b.certs)));

        Await.until("three tries to lead", WAIT, () -> opened.get() >= 3);
        Await.until("every mirror opened but the one being tried is closed", WAIT, () -> closed.get() >= opened.get() - 1);
        assertThat(b.requests.get()).as("never watched: nothing polled").isZero();
    }

    @Test
    void aNodeThatLosesTheLeadStopsPollingAtOnceAndHoldsNoLink() throws Exception { // review of the mesh watch, 3
        Pki pki = new Pki(dir);
        FedHub leader = keep(leaderHub(pki));
        FakePeer b = keep(new FakePeer(pki.hub("hub-b"), r -> page(r, 1_000_000, 0))); // always more to read
        AtomicBoolean decides = new AtomicBoolean(true);
        // the watch thread is held (as in a read of the replicated state behind a busy actor, or a proposal) from
        // the moment the lead is lost until the latch opens: the listener alone must stop the polls
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.function.BooleanSupplier decidesHeld = () -> {
            if (!decides.get() && Thread.currentThread().getName().equals("synapse-cluster-watch")) {
                try {
                    held.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return decides.get();
        };
        PeerLinks links = links(leader);
        ClusterWatch watch = keep(watch(pki, leader, 10, Mirror::memory, decidesHeld, links,
                Federation.peer("hub-b", b.uri(), b.certs)));
        Await.until("hub-b is polled", WAIT, () -> b.requests.get() >= 3);

        // the extension's listener tells the watch, then releases the links
        decides.set(false);
        watch.leadershipChanged();
        links.retain(java.util.Set.of());
        int polled = b.requests.get();
        Thread.sleep(2_500); // longer than the followers' 1 s interval: an unstopped follower polls (and relinks) again
        assertThat(b.requests.get()).as("no poll after the lead was lost").isLessThanOrEqualTo(polled + 1);
        held.countDown();
        Await.until("the watch stopped", WAIT, () -> watch.fold().peers().isEmpty());
        assertThat(links.held()).as("no link held by a node that does not decide").isEmpty();
        assertThat(b.requests.get()).isLessThanOrEqualTo(polled + 1);
    }

    private PeerLinks links(FedHub leader) {
        Pki.HubCerts self = leader.certs;
        return keep(new PeerLinks("hub-m", keep(ClientIdentity.watching(self.clientFiles().cert(),
                self.clientFiles().key(), m -> { }))));
    }

    /** A hub that decides everything, governing proj, that the watch proposes its records to. */
    private FedHub leaderHub(Pki pki) throws Exception {
        return new FedHub(pki.hub("hub-m"), dir.resolve("m.db"), new FederationSettings(ServingTrust.none(),
                WatchSettings.none(), OWNERS, ForwardSettings.none()));
    }

    private ClusterWatch watch(Pki pki, FedHub leader, int eventsPerPoll, WatchPeer... peers) throws Exception {
        return watch(pki, leader, eventsPerPoll, Mirror::memory, () -> true, links(leader), peers);
    }

    private ClusterWatch watch(Pki pki, FedHub leader, int eventsPerPoll, ClusterWatch.Mirrors mirrors,
                               java.util.function.BooleanSupplier decides, PeerLinks links, WatchPeer... peers) {
        Pki.HubCerts self = leader.certs;
        WatchSettings settings = new WatchSettings(List.of(peers), Duration.ofSeconds(1), null,
                self.clientFiles().cert(), self.clientFiles().key(),
                new PollBudget(100, eventsPerPoll, Duration.ofSeconds(20)), Duration.ofSeconds(10));
        ClusterWatch w = new ClusterWatch(leader.server.services(), settings, OWNERS, mirrors, decides, links);
        w.start();
        return w;
    }

    private static ObjectNode partition(String hub) {
        return PartitionTracker.partitionPayload(OWNERS, "proj", java.util.Set.of(hub), true);
    }

    private static void record(FedHub hub, String kind, ObjectNode payload) {
        assertThat(new AuditJournal(hub.server.services().actor(), "hub-m").record(kind, payload).join()).isTrue();
    }

    private static NamespaceGovernance.Image governance(FedHub hub) {
        try {
            return hub.server.services().actor().read(s -> s.governance().image()).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A log of {@code size} claims, each in namespace other except seq {@code projSeq} (0: none),
     * which claims in proj with a live lease; at most {@code limit} events per page.
     */
    private static ObjectNode page(ObjectNode request, int size, int projSeq) {
        long after = request.path("after_seq").asLong();
        int limit = request.path("limit").asInt();
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        ArrayNode events = out.putArray("events");
        long last = after;
        for (long seq = after + 1; seq <= size && events.size() < limit; seq++) {
            ObjectNode e = events.addObject();
            e.put("seq", seq);
            e.put("ts", 1_700_000_000.5 + seq);
            e.put("kind", "claim");
            ObjectNode p = e.putObject("payload");
            p.put("task_id", "T-" + seq);
            p.put("owner", seq == projSeq ? "proj/zed" : "other/x");
            p.put("lease_expires_at", LEASE_END);
            p.put("epoch", seq);
            p.put("status", "claimed");
            last = seq;
        }
        out.put("next_cursor", last);
        out.put("log_end_seq", size);
        return out;
    }
}
