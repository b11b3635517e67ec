package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.federation.AuditJournal;
import dev.synapsehub.federation.FederationMetrics;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.AdvisoryFold;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.net.extension.ClusterLeader;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A partitioned namespace on a mesh node, where the partition is a record the cluster committed
 * ({@code OwnershipResolver} reading the node's applied partitions, as {@code MeshFederationExtension}
 * builds it), not this node's own watch: the leader re-checks a follower's forward and refuses
 * it {@code partitioned} though the follower had not applied the record, and a peer's
 * {@code multihub_claim_request} and {@code operator_relay_request} get a single hub's refusals.
 */
class MeshPartitionRefusalTest {
    @TempDir
    Path dir;
    private FedHub m;
    private HubServices hub;
    private Pki.HubCerts aCerts;
    private final List<HubClient> clients = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        Pki pki = new Pki(dir);
        aCerts = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("m-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(aCerts.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        m = FedHub.serving(pki.hub("hub-m"), dir.resolve("m.db"), ServingTrust.load(policy, msg -> { }));
        hub = m.server.services();
    }

    @AfterEach
    void stop() throws Exception {
        clients.forEach(HubClient::close);
        if (m != null) {
            m.close();
        }
    }

    private ServingTrust trust() throws Exception {
        return ServingTrust.load(dir.resolve("m-trust").resolve("serving-policy.json"), msg -> { });
    }

    /** A mesh node's resolver: hub-m owns proj, hub-b owns lab, {@code applied} the partitions this node applied. */
    private static OwnershipResolver meshResolver(Set<String> applied) {
        return new OwnershipResolver(new NamespaceOwners("hub-m", Map.of("proj", "hub-m", "lab", "hub-b")),
                new AdvisoryFold(), () -> applied);
    }

    /** A single hub's resolver with {@code proj} partitioned by its own journaled record. */
    private static OwnershipResolver singleHubResolver() {
        OwnershipResolver r = new OwnershipResolver(new NamespaceOwners("hub-m", Map.of("proj", "hub-m",
                "lab", "hub-b")), new AdvisoryFold());
        r.journaledPartitions().add("proj");
        return r;
    }

    /** hub-a, bound with its client certificate (the serving policy grants it proj). */
    private HubClient peerA() throws Exception {
        HubClient c = m.connect(m.pinned().withClientCertificate(aCerts.clientFiles().cert(), aCerts.clientFiles().key()));
        c.register("hub-a", null, FedHub.WAIT);
        clients.add(c);
        Await.until("hub-a bound", Duration.ofSeconds(20), () -> hub.registry().session("hub-a") != null);
        return c;
    }

    private Request request(HubClient peer, String type, ObjectNode frame) {
        return new Request(hub.registry().session("hub-a"), "hub-a", type, "hub-m", frame);
    }

    /** The frame without what differs from one answer to the next (when it was written). */
    private static ObjectNode shape(ObjectNode f) {
        ObjectNode copy = f.deepCopy();
        copy.remove("timestamp");
        return copy;
    }

    @Test
    void theLeaderRefusesPartitionedAForwardOfAFollowerThatHasNotAppliedThePartition() throws Exception {
        // the leader applied lab's partition record; the follower has not yet, so lab is still remote to it
        List<Runnable> leaderSends = new CopyOnWriteArrayList<>();
        Executor leaderConnector = leaderSends::add; // what the leader would send to the owner: nothing must be
        ForwardSettings settings = new ForwardSettings(Map.of("hub-b",
                new ClaimRoute("hub-b", URI.create("wss://127.0.0.1:1/"), null)), null, null, null, ForwardSettings.BOUND);
        ClaimForwarder leader = new ClaimForwarder(hub, meshResolver(Set.of("lab")), settings, null,
                new FederationMetrics(), leaderConnector, RouteLookup.fixedClaims(settings), true, leading(null));
        FederationMetrics followerMetrics = new FederationMetrics();
        List<Runnable> followerSends = new CopyOnWriteArrayList<>();
        ClaimForwarder follower = new ClaimForwarder(hub, meshResolver(Set.of()), settings, null, followerMetrics,
                followerSends::add, RouteLookup.fixedClaims(settings), true, leading(leader::serveForward));

        HubClient alice = m.agent("lab/alice");
        clients.add(alice);
        Await.until("alice bound", Duration.ofSeconds(20), () -> hub.registry().session("lab/alice") != null);
        ObjectNode frame = alice.frame("lab/alice", "claim");
        frame.put("task_id", "L-1");
        frame.putArray("paths").add("src/l");
        assertThat(follower.claimIsLocal(new Request(hub.registry().session("lab/alice"), "lab/alice", "claim", null,
                frame))).isFalse();

        ObjectNode refused = alice.await(f -> "claim_denied".equals(f.path("type").asText())
                && "L-1".equals(f.path("task_id").asText()), FedHub.WAIT);
        assertThat(refused.path("ownership").asText()).isEqualTo("partitioned");
        assertThat(refused.path("namespace").asText()).isEqualTo("lab");
        assertThat(refused.path("owner_hub_id").asText()).isEqualTo("hub-b");
        assertThat(refused.has("reason_code")).isFalse();
        assertThat(refused.has("forward_error")).isFalse();
        assertThat(leaderSends).as("the leader sent nothing to the owner").isEmpty();
        assertThat(followerSends).as("a mesh node forwards through the leader only").isEmpty();
        assertThat(followerMetrics.forwardOutcomes.get("hub-b", "partitioned")).isEqualTo(1);
    }

    /** A claim path the refusal must never reach; an unkeyed request is not in any ledger. */
    private static final dev.synapsehub.net.extension.ClaimService NEVER_CLAIMS = new dev.synapsehub.net.extension.ClaimService() {
        @Override
        public void claimOnBehalf(dev.synapsehub.net.protocol.Request claim, String principal, String ledgerScope,
                                  Answer answer) {
            throw new AssertionError("a partitioned namespace must be refused before the claim path");
        }

        @Override
        public boolean answerIfKeyed(dev.synapsehub.net.protocol.Request claim, String ledgerScope, Answer answer) {
            return false;
        }
    };

    @Test
    void aPeersClaimRequestInANamespaceTheMeshRecordedPartitionedGetsASingleHubsRefusal() throws Exception {
        HubClient a = peerA();
        ObjectNode frame = a.frame("hub-a", "multihub_claim_request");
        frame.put("namespace", "proj").put("claimant", "proj/alice").put("task_id", "P-1");
        ObjectNode claim = a.frame("proj/alice", "claim");
        claim.put("task_id", "P-1");
        claim.putArray("paths").add("src/p");
        frame.set("claim", claim);

        new ClaimServer(hub, trust(), meshResolver(Set.of("proj")), NEVER_CLAIMS, new FederationMetrics())
                .handle(request(a, "multihub_claim_request", frame));
        ObjectNode onMesh = a.await(f -> "multihub_claim_result".equals(f.path("type").asText()), FedHub.WAIT);
        new ClaimServer(hub, trust(), singleHubResolver(), NEVER_CLAIMS, new FederationMetrics())
                .handle(request(a, "multihub_claim_request", frame));
        ObjectNode onSingleHub = a.await(f -> "multihub_claim_result".equals(f.path("type").asText())
                && f != onMesh, FedHub.WAIT);

        assertThat(onMesh.path("granted").asBoolean(true)).isFalse();
        assertThat(onMesh.path("detail").asText()).isEqualTo("this hub does not own namespace 'proj' (partitioned)");
        assertThat(onMesh.path("grant").isNull()).isTrue();
        assertThat(shape(onMesh)).isEqualTo(shape(onSingleHub));
        assertThat(hub.actor().committedPartitions()).as("nothing was recorded here").isEmpty();
    }

    @Test
    void aPeersOperatorRelayInANamespaceTheMeshRecordedPartitionedGetsASingleHubsRefusal() throws Exception {
        HubClient a = peerA();
        ObjectNode frame = a.frame("hub-a", "operator_relay_request");
        frame.put("action", "release").put("namespace", "proj").put("task_id", "P-2").put("operator", "op")
                .put("origin_hub_id", "hub-a").put("reason", "stuck");

        RelayServer.replicated(hub, trust(), meshResolver(Set.of("proj")), FederationSettings.RelayPolicy.DEFAULT)
                .handle(request(a, "operator_relay_request", frame));
        ObjectNode onMesh = a.await(f -> "operator_relay_result".equals(f.path("type").asText()), FedHub.WAIT);
        RelayServer single = new RelayServer(hub, trust(), singleHubResolver(), FederationSettings.RelayPolicy.DEFAULT);
        single.handle(request(a, "operator_relay_request", frame));
        ObjectNode onSingleHub = a.await(f -> "operator_relay_result".equals(f.path("type").asText())
                && f != onMesh, FedHub.WAIT);

        assertThat(onMesh.path("applied").asBoolean(true)).isFalse();
        assertThat(onMesh.path("pending").asBoolean(true)).isFalse();
        assertThat(onMesh.path("detail").asText()).isEqualTo("namespace_not_owned");
        assertThat(onMesh.path("owner_hub_id").asText()).isEqualTo("hub-m");
        assertThat(shape(onMesh)).isEqualTo(shape(onSingleHub));
    }

    @Test
    void theLeaderDoesNotSendARelayOfAFollowerThatHasNotAppliedThePartition() throws Exception {
        // the leader applied lab's partition record; the follower has not yet, so lab is still hub-b's to it
        ForwardSettings relayRoutes = new ForwardSettings(Map.of("hub-b",
                new ClaimRoute("hub-b", URI.create("wss://127.0.0.1:1/"), null)), null, null, null, ForwardSettings.BOUND);
        AuditJournal audit = new AuditJournal(hub.actor(), hub.hubId());
        ThreadPoolExecutor leaderConnector = idleConnector();
        ThreadPoolExecutor followerConnector = idleConnector();
        try {
            RelayForwarder leader = new RelayForwarder(hub, meshResolver(Set.of("lab")), trust(), relayRoutes, null,
                    leaderConnector, audit);
            RelayServer followerOwningSide = RelayServer.replicated(hub, trust(), meshResolver(Set.of()),
                    FederationSettings.RelayPolicy.DEFAULT);
            RelayForwarder follower = new RelayForwarder(hub, meshResolver(Set.of()), trust(), relayRoutes, null,
                    followerConnector, audit).viaLeader(leading(leader::serveRelay), followerOwningSide::handle);

            HubClient ops = m.agent("ops/alice");
            clients.add(ops);
            Await.until("ops bound", Duration.ofSeconds(20), () -> hub.registry().session("ops/alice") != null);
            ObjectNode frame = ops.frame("hub-m", "operator_relay_request");
            frame.put("action", "release").put("namespace", "lab").put("task_id", "L-2").put("operator", "alice")
                    .put("origin_hub_id", "hub-m").put("reason", "stuck");
            Request relay = new Request(hub.registry().session("ops/alice"), "ops/alice", "operator_relay_request",
                    "hub-m", frame);
            assertThat(follower.forwards(relay)).as("the follower still resolves lab as hub-b's").isTrue();
            ObjectNode onMesh = ops.await(f -> "operator_relay_result".equals(f.path("type").asText()), FedHub.WAIT);

            // a single hub that recorded lab partitioned does not relay it: its owning side answers
            OwnershipResolver single = new OwnershipResolver(new NamespaceOwners("hub-m", Map.of("proj", "hub-m",
                    "lab", "hub-b")), new AdvisoryFold());
            single.journaledPartitions().add("lab");
            RelayForwarder singleForwarder = new RelayForwarder(hub, single, trust(), relayRoutes, null,
                    followerConnector, audit);
            assertThat(singleForwarder.forwards(relay)).isFalse();
            new RelayServer(hub, trust(), single, FederationSettings.RelayPolicy.DEFAULT).handle(relay);
            ObjectNode onSingleHub = ops.await(f -> "operator_relay_result".equals(f.path("type").asText())
                    && f != onMesh, FedHub.WAIT);

            assertThat(onMesh.path("applied").asBoolean(true)).isFalse();
            assertThat(onMesh.has("forward_error")).as("refused, not a failed send").isFalse();
            assertThat(shape(onMesh)).isEqualTo(shape(onSingleHub));
            assertThat(leaderConnector.getTaskCount()).as("the leader queued no send to the owner").isZero();
            assertThat(followerConnector.getTaskCount()).as("a mesh node relays through the leader only").isZero();
            assertThat(follower.outcomes("hub-b", "decided_here")).isEqualTo(1);
        } finally {
            leaderConnector.shutdownNow();
            followerConnector.shutdownNow();
        }
    }

    /** A connector whose task count shows whether anything was queued on it. */
    private static ThreadPoolExecutor idleConnector() {
        return new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>());
    }

    /** A cluster leader that leads here and hands each ask to {@code serve} (null: asks nothing). */
    private static ClusterLeader leading(Function<ObjectNode, CompletableFuture<ObjectNode>> serve) {
        return new ClusterLeader() {
            @Override
            public boolean leadsHere() {
                return true;
            }

            @Override
            public void serve(String service, Function<ObjectNode, CompletableFuture<ObjectNode>> handler) {
            }

            @Override
            public void onLeadershipChange(Runnable listener) {
            }

            @Override
            public CompletableFuture<ObjectNode> ask(String service, ObjectNode body, Duration bound) {
                return serve.apply(body);
            }
        };
    }
}
