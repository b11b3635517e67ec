package dev.synapsehub.federation;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.federation.follow.WatchPeer;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.route.ClaimRoute;
import dev.synapsehub.federation.route.ForwardSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FakePeer;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Federation;
import dev.synapsehub.federation.testing.Http;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Federation figures on {@code /metrics}, each a measured value: per peer the cursor, the peer's
 * log end and the lag between them (absent until a poll succeeded), observation errors by peer
 * and kind; forwarded claims by owning hub and outcome.
 */
class FederationMetricsTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final double LEASE_END = Math.floor(System.currentTimeMillis() / 1000.0) + 3600;
    @TempDir
    Path dir;
    Pki pki;
    Pki.HubCerts a;
    final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void pki() throws Exception {
        pki = new Pki(dir);
        a = pki.hub("hub-a");
    }

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

    /** {@code wss://} to a loopback port nothing listens on (bound, then released). */
    private static URI nobodyListens() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return URI.create("wss://127.0.0.1:" + s.getLocalPort() + "/");
        }
    }

    /** A snapshot with claim events {@code from..to} (after the request's cursor) and the given log end. */
    private static ObjectNode page(ObjectNode request, long upTo, long logEnd, boolean gap) {
        long after = request.path("after_seq").asLong();
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        ArrayNode events = out.putArray("events");
        long last = after;
        for (long seq = after + 1; seq <= upTo; seq++) {
            if (gap && seq == after + 2) {
                continue;
            }
            ObjectNode e = events.addObject();
            e.put("seq", seq);
            e.put("ts", 1_700_000_000.5 + seq);
            e.put("kind", "claim");
            ObjectNode p = e.putObject("payload");
            p.put("task_id", "T-" + seq);
            p.put("owner", "proj/x");
            p.put("lease_expires_at", LEASE_END);
            p.put("epoch", seq);
            last = seq;
        }
        out.put("next_cursor", last);
        out.put("log_end_seq", logEnd);
        return out;
    }

    /** The value of the sample {@code nameAndLabels} (exactly), if present. */
    static OptionalDouble sample(String metrics, String nameAndLabels) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(nameAndLabels + " ")) {
                return OptionalDouble.of(Double.parseDouble(line.substring(nameAndLabels.length() + 1).trim()));
            }
        }
        return OptionalDouble.empty();
    }

    /** True when every sample line of {@code family} is in one unbroken run (the text format's rule). */
    static boolean grouped(String metrics, String family) {
        List<String> lines = Arrays.asList(metrics.split("\n"));
        int first = -1;
        int last = -1;
        int count = 0;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(family + "{") || lines.get(i).startsWith(family + " ")) {
                first = first < 0 ? i : first;
                last = i;
                count++;
            }
        }
        return count > 0 && last - first + 1 == count;
    }

    @Test
    void perPeerLagAndObservationErrorsByKindAreMeasuredValues() throws Exception {
        // hub-l serves seq 1..4 but says its log ends at 10: lag 6; hub-g serves a gap; hub-x is not there
        FakePeer lagging = keep(new FakePeer(pki.hub("hub-l"), r -> page(r, 4, 10, false)));
        FakePeer gapped = keep(new FakePeer(pki.hub("hub-g"), r -> page(r, 3, 3, true)));
        URI gone = nobodyListens();
        List<WatchPeer> peers = List.of(Federation.peer("hub-l", lagging.uri(), lagging.certs),
                Federation.peer("hub-g", gapped.uri(), gapped.certs),
                new WatchPeer("hub-x", gone, TestCertificates.selfSigned("hub-x").pin()));
        FedHub follower = keep(new FedHub(a, dir.resolve("a.db"), Federation.follower(a, peers,
                Map.of("proj", "hub-l"))));
        Await.until("every peer polled", WAIT, () -> follower.federation.fold().peer("hub-l").cursor() == 4
                && follower.federation.fold().peer("hub-g").lastError() != null
                && follower.federation.fold().peer("hub-x").lastError() != null);

        String m = Http.get(follower, "/metrics");
        assertThat(sample(m, "synapse_multihub_peer_cursor{peer=\"hub-l\"}")).hasValue(4);
        assertThat(sample(m, "synapse_multihub_peer_log_end_seq{peer=\"hub-l\"}")).hasValue(10);
        assertThat(sample(m, "synapse_multihub_peer_lag_events{peer=\"hub-l\"}")).hasValue(6);
        assertThat(sample(m, "synapse_multihub_peer_last_success_timestamp_seconds{peer=\"hub-l\"}")).isPresent();
        // never polled successfully, never connected: nothing measured, nothing shown (no made-up zero)
        assertThat(sample(m, "synapse_multihub_peer_cursor{peer=\"hub-x\"}")).hasValue(0);
        assertThat(sample(m, "synapse_multihub_peer_lag_events{peer=\"hub-x\"}")).isEmpty();
        assertThat(sample(m, "synapse_multihub_peer_log_end_seq{peer=\"hub-x\"}")).isEmpty();
        assertThat(sample(m, "synapse_multihub_peer_clock_skew_seconds{peer=\"hub-x\"}")).isEmpty();
        assertThat(sample(m, "synapse_multihub_peer_last_success_timestamp_seconds{peer=\"hub-x\"}")).isEmpty();
        assertThat(sample(m, "synapse_multihub_peer_lag_events{peer=\"hub-g\"}")).isEmpty();
        // observation errors by peer and kind
        assertThat(sample(m, "synapse_multihub_peer_observation_errors_total{peer=\"hub-g\",kind=\"gap\"}").orElse(0))
                .isGreaterThanOrEqualTo(1);
        assertThat(sample(m, "synapse_multihub_peer_observation_errors_total{peer=\"hub-x\",kind=\"transport\"}")
                .orElse(0)).isGreaterThanOrEqualTo(1);
        assertThat(m).doesNotContain("synapse_multihub_peer_observation_errors_total{peer=\"hub-l\"");
        assertThat(m).contains("# TYPE synapse_multihub_peer_observation_errors_total counter");
        for (String family : List.of("synapse_multihub_peer_cursor", "synapse_multihub_peer_quarantined",
                "synapse_multihub_peer_live_claims", "synapse_multihub_peer_observation_errors_total")) {
            assertThat(grouped(m, family)).as(family + " samples together in\n" + m).isTrue();
        }
    }

    @Test
    void forwardedClaimsAreCountedByOwnerAndOutcome() throws Exception {
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(a.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        FedHub b = keep(new FedHub(pki.hub("hub-b"), dir.resolve("b.db"), new FederationSettings(
                ServingTrust.load(policy, m -> { }), WatchSettings.none(),
                new NamespaceOwners("hub-b", Map.of("proj", "hub-b")), ForwardSettings.none())));
        Map<String, String> owners = Map.of("proj", "hub-b", "gone", "hub-g", "slow", "hub-s");
        FedHub forwarder = keep(new FedHub(a, dir.resolve("a.db"), new FederationSettings(ServingTrust.none(),
                WatchSettings.none(), new NamespaceOwners("hub-a", owners), new ForwardSettings(ForwardSettings.byHub(
                List.of(new ClaimRoute("hub-b", b.uri(), b.certs.server().pin()),
                        new ClaimRoute("hub-g", nobodyListens(), TestCertificates.selfSigned("hub-g").pin()))),
                null, a.clientFiles().cert(), a.clientFiles().key(), ForwardSettings.BOUND))));
        assertThat(FedHub.claim(forwarder.agent("proj/a1"), "proj/a1", "T-1", "x").path("type").asText())
                .isEqualTo("claim_granted");
        assertThat(FedHub.claim(forwarder.agent("proj/a2"), "proj/a2", "T-1", "x").path("type").asText())
                .isEqualTo("claim_denied");
        assertThat(FedHub.claim(forwarder.agent("gone/g1"), "gone/g1", "G-1", "x").path("ownership").asText())
                .isEqualTo("remote");
        // an owner that never answers, behind a 1 s bound (a hub of its own: the bound is per hub)
        FakePeer silent = keep(new FakePeer(pki.hub("hub-s"), r -> null));
        FedHub impatient = keep(new FedHub(a, dir.resolve("a2.db"), new FederationSettings(ServingTrust.none(),
                WatchSettings.none(), new NamespaceOwners("hub-a", owners), new ForwardSettings(ForwardSettings.byHub(
                List.of(new ClaimRoute("hub-s", silent.uri(), silent.certs.server().pin()))),
                null, a.clientFiles().cert(), a.clientFiles().key(), Duration.ofSeconds(1)))));
        assertThat(FedHub.claim(impatient.agent("slow/s1"), "slow/s1", "S-1", "x").path("forward_error").asText())
                .isEqualTo("timeout");

        String m = Http.get(forwarder, "/metrics");
        String family = "synapse_forwarded_claim_outcomes_total";
        assertThat(sample(m, family + "{owner=\"hub-b\",outcome=\"granted\"}")).hasValue(1);
        assertThat(sample(m, family + "{owner=\"hub-b\",outcome=\"denied\"}")).hasValue(1);
        assertThat(sample(m, family + "{owner=\"hub-g\",outcome=\"transport_failure\"}")).hasValue(1);
        assertThat(sample(m, family + "{owner=\"hub-b\",outcome=\"timeout\"}")).isEmpty();
        assertThat(grouped(m, family)).isTrue();
        assertThat(sample(Http.get(impatient, "/metrics"), family + "{owner=\"hub-s\",outcome=\"timeout\"}")).hasValue(1);
    }
}
