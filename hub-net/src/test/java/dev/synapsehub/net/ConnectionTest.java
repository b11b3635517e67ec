package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** Contract §3: admission, close codes with exact reasons, handshake order, presence, HTTP. */
class ConnectionTest {

    private static boolean isType(ObjectNode f, String type) {
        return type.equals(f.path("type").asText());
    }

    @Test
    void openHubWelcomesAtConnectThenPresenceJoinedAndLeft() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alpha = hub.connect();
            ObjectNode welcome = alpha.awaitType("welcome", WAIT);
            assertThat(welcome.path("target").asText()).isEqualTo("self");
            assertThat(welcome.path("protocol_version").asInt()).isEqualTo(2);
            assertThat(welcome.path("connected_clients").asInt()).isEqualTo(1);
            assertThat(welcome.path("online_agents")).isEmpty();
            assertThat(welcome.path("hub_id").asText()).matches("syn-[0-9a-f]{8}");
            alpha.send(alpha.frame("p/alpha", "heartbeat"));
            ObjectNode joined = alpha.awaitType("presence_update", WAIT);
            assertThat(joined.path("event").asText()).isEqualTo("joined");
            assertThat(joined.path("agent").asText()).isEqualTo("p/alpha");

            HubClient beta = hub.connect();
            ObjectNode w2 = beta.awaitType("welcome", WAIT);
            assertThat(w2.path("online_agents").get(0).asText()).isEqualTo("p/alpha");
            assertThat(w2.path("connected_clients").asInt()).isEqualTo(2);
            beta.send(beta.frame("p/beta", "heartbeat"));
            alpha.await(f -> isType(f, "presence_update") && "p/beta".equals(f.path("agent").asText()), WAIT);
            // a keepalive heartbeat gets no reply
            alpha.send(alpha.frame("p/alpha", "heartbeat"));
            TestHub.assertQuiet(alpha);
            beta.close();
            ObjectNode left = alpha.await(f -> isType(f, "presence_update") && "left".equals(f.path("event").asText()),
                    WAIT);
            assertThat(left.path("agent").asText()).isEqualTo("p/beta");
            assertThat(left.path("online_agents").toString()).isEqualTo("[\"p/alpha\"]");
        }
    }

    @Test
    void nameConflictNameSwitchAndReservedIdentityClose4009() throws Exception {
        try (TestHub hub = TestHub.open()) {
            hub.agent("p/alpha");
            HubClient dup = hub.connect();
            dup.send(dup.frame("p/alpha", "heartbeat"));
            ObjectNode conflict = dup.awaitType("name_conflict", WAIT);
            assertThat(conflict.path("target").asText()).isEqualTo("p/alpha");
            assertThat(dup.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4009, "name conflict"));

            HubClient switcher = hub.agent("p/beta");
            switcher.send(switcher.frame("p/gamma", "who_request"));
            ObjectNode sw = switcher.awaitType("name_conflict", WAIT);
            assertThat(sw.path("target").asText()).isEqualTo("p/beta");
            assertThat(switcher.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4009, "name switch"));

            HubClient omits = hub.agent("p/delta");
            ObjectNode noSender = omits.frame("p/delta", "who_request");
            noSender.remove("sender");
            omits.send(noSender);
            assertThat(omits.awaitClose(WAIT).reason()).isEqualTo("name switch");

            HubClient reserved = hub.connect();
            reserved.send(reserved.frame("SYSTEM", "heartbeat"));
            reserved.awaitType("name_conflict", WAIT);
            assertThat(reserved.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4009, "reserved identity"));
        }
    }

    @Test
    void takeoverSupersedesTheOldSocketWithoutPresence() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient old = hub.agent("p/alpha");
            HubClient observer = hub.agent("p/obs");
            HubClient fresh = hub.connect();
            ObjectNode hb = fresh.frame("p/alpha", "heartbeat");
            hb.put("takeover", true);
            fresh.send(hb);
            assertThat(old.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4010, "superseded"));
            fresh.send(fresh.frame("p/alpha", "who_request"));
            ObjectNode who = fresh.awaitType("who_snapshot", WAIT);
            assertThat(who.path("online_agents").toString()).isEqualTo("[\"p/alpha\",\"p/obs\"]");
            Thread.sleep(200);
            assertThat(observer.pending()).noneMatch(f -> isType(f, "presence_update")
                    && "p/alpha".equals(f.path("agent").asText()));
        }
    }

    @Test
    void tokenHubAuthDeniedLeaseBeforeWelcomeAndNoBroadcastsBeforeAuth() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().token("sekrit"))) {
            HubClient lurker = hub.connect();
            HubClient alpha = hub.connect();
            ObjectNode hb = alpha.frame("p/alpha", "heartbeat");
            hb.put("token", "sekrit");
            hb.put("lease", true);
            alpha.send(hb);
            ObjectNode first = alpha.await(f -> true, WAIT);
            assertThat(first.path("type").asText()).isEqualTo("lease_granted");
            assertThat(first.path("lease_name").asText()).isEqualTo("p/alpha");
            assertThat(first.path("owner_lease").asText()).hasSizeGreaterThanOrEqualTo(40);
            ObjectNode welcome = alpha.await(f -> true, WAIT);
            assertThat(welcome.path("type").asText()).isEqualTo("welcome");
            alpha.awaitType("presence_update", WAIT);
            Thread.sleep(200);
            assertThat(lurker.received()).isEmpty();

            HubClient bad = hub.connect();
            ObjectNode wrong = bad.frame("p/bad", "heartbeat");
            wrong.put("token", "nope");
            bad.send(wrong);
            ObjectNode denied = bad.awaitType("auth_denied", WAIT);
            assertThat(denied.path("payload").asText()).isEqualTo("invalid token");
            assertThat(denied.toString()).doesNotContain("nope");
            assertThat(bad.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4010, "auth denied"));

            HubClient none = hub.connect();
            none.send(none.frame("p/none", "heartbeat"));
            assertThat(none.awaitType("auth_denied", WAIT).path("payload").asText()).isEqualTo("token required");
            assertThat(none.awaitClose(WAIT).code()).isEqualTo(4010);
        }
    }

    @Test
    void leasedNameRefusesBindsWithoutTheLease4016() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().leaseOfflineTtlSeconds(60))) {
            HubClient owner = hub.connect();
            ObjectNode hb = owner.frame("p/alpha", "heartbeat");
            hb.put("lease", true);
            owner.send(hb);
            String lease = owner.awaitType("lease_granted", WAIT).path("owner_lease").asText();
            owner.close();
            Thread.sleep(200);
            HubClient thief = hub.connect();
            ObjectNode steal = thief.frame("p/alpha", "heartbeat");
            steal.put("takeover", true);
            thief.send(steal);
            thief.awaitType("name_conflict", WAIT);
            assertThat(thief.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4016, "name owned"));
            HubClient back = hub.connect();
            ObjectNode again = back.frame("p/alpha", "heartbeat");
            again.put("owner_lease", lease);
            back.send(again);
            back.awaitType("presence_update", WAIT);
            assertThat(back.isOpen()).isTrue();
        }
    }

    /**
     * Review F3: any frame type binds (§3.4), so a client may present its lease on a chat first
     * frame, or on every frame. The lease token must reach no recipient and no history.
     */
    @Test
    void anOwnerLeaseOnAChatIsNeverEchoedToAnyoneNorKeptInHistory() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().leaseOfflineTtlSeconds(60))) {
            HubClient owner = hub.connect();
            ObjectNode hb = owner.frame("p/alpha", "heartbeat");
            hb.put("lease", true);
            owner.send(hb);
            String lease = owner.awaitType("lease_granted", WAIT).path("owner_lease").asText();
            owner.close();
            HubClient other = hub.agent("p/other");
            HubClient back = hub.connect();
            ObjectNode chat = back.frame("p/alpha", "chat");
            chat.put("owner_lease", lease).put("takeover", true).put("lease", true).put("payload", "back online");
            back.send(chat);
            ObjectNode seen = other.awaitType("chat", WAIT);
            assertThat(seen.toString()).as("the lease token reaches no other agent").doesNotContain(lease);
            assertThat(seen.has("owner_lease")).isFalse();
            assertThat(seen.path("takeover").asBoolean() && seen.path("lease").asBoolean())
                    .as("no secrets: echoed verbatim, as contract A6 says of every other member").isTrue();
            ObjectNode later = back.frame("p/alpha", "chat");
            later.put("owner_lease", lease).put("payload", "again");
            back.send(later);
            assertThat(other.awaitType("chat", WAIT).toString()).doesNotContain(lease);
            other.send(other.frame("p/other", "history_request"));
            assertThat(other.awaitType("history_snapshot", WAIT).toString()).contains("back online")
                    .doesNotContain(lease);
        }
    }

    @Test
    void authAndRegistrationTimeoutsClose4012() throws Exception {
        try (TestHub open = new TestHub(HubConfig.builder().authTimeout(Duration.ofMillis(300)))) {
            HubClient idle = open.connect();
            assertThat(idle.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4012, "registration timeout"));
        }
        try (TestHub secured = new TestHub(HubConfig.builder().token("t").authTimeout(Duration.ofMillis(300)))) {
            HubClient idle = secured.connect();
            assertThat(idle.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4012, "auth timeout"));
        }
    }

    @Test
    void capacityCapsClose4013_4014_4015() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().maxClients(2))) {
            hub.connect();
            hub.connect();
            awaitAdmitted(hub, 2);
            HubClient third = hub.connect();
            assertThat(third.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4013, "hub at capacity"));
        }
        try (TestHub hub = new TestHub(HubConfig.builder().maxConnectionsPerHost(1))) {
            hub.connect();
            awaitAdmitted(hub, 1);
            HubClient second = hub.connect();
            assertThat(second.awaitClose(WAIT))
                    .isEqualTo(new HubClient.CloseStatus(4015, "too many connections from host"));
        }
        try (TestHub hub = new TestHub(HubConfig.builder().token("t").maxUnauthClients(1))) {
            hub.connect();
            awaitAdmitted(hub, 1);
            HubClient second = hub.connect();
            assertThat(second.awaitClose(WAIT))
                    .isEqualTo(new HubClient.CloseStatus(4014, "too many unauthenticated connections"));
        }
    }

    /**
     * Review F5: sockets that never finish their HTTP upgrade were counted by no cap and lived
     * until two idle ping intervals. They now meet the caps at the TCP accept and are closed when
     * no complete request arrived within the auth timeout; both are counted.
     */
    @Test
    void socketsThatNeverFinishTheirUpgradeMeetTheCapsAndTheAuthTimeout() throws Exception {
        // an auth timeout well above the time to open seventy sockets on a loaded machine: none is reaped
        // (freeing its slot) before the last ones meet the cap
        try (TestHub hub = new TestHub(HubConfig.builder().maxClients(2).maxConnectionsPerHost(1)
                .authTimeout(Duration.ofSeconds(3)))) {
            List<java.net.Socket> held = new ArrayList<>();
            try {
                for (int i = 0; i < 70; i++) { // the pending cap from one host: at least 64 (room above the session caps)
                    java.net.Socket s = new java.net.Socket("127.0.0.1", hub.port);
                    s.getOutputStream().write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n".getBytes(StandardCharsets.US_ASCII));
                    s.setSoTimeout((int) WAIT.toMillis());
                    held.add(s);
                }
                for (java.net.Socket s : held) {
                    try {
                        assertThat(s.getInputStream().read()).as("closed by the hub, nothing sent").isEqualTo(-1);
                    } catch (java.net.SocketException reset) {
                        // closed by the hub
                    }
                }
            } finally {
                for (java.net.Socket s : held) {
                    s.close();
                }
            }
            var metrics = hub.server.services().metrics();
            // 64 pending sockets from the host at a time: the rest are refused at the accept (6 unless the
            // machine took longer than the auth timeout to open the seventy)
            assertThat(metrics.socketsRefusedBeforeUpgrade.get()).as("beyond 64 pending sockets from the host")
                    .isPositive();
            assertThat(metrics.upgradeTimeouts.get()).as("those within the caps, after the auth timeout").isPositive();
            assertThat(metrics.socketsRefusedBeforeUpgrade.get() + metrics.upgradeTimeouts.get()).isEqualTo(70);
            HubClient a = hub.agent("p/a");
            assertThat(a.isOpen()).as("the caps are free again for a real client").isTrue();
        }
    }

    /** A burst of connects past the session caps gets the contract's close codes, not resets at the accept. */
    @Test
    void aBurstPastTheSessionCapsIsRefusedWithTheContractsCloseCodes() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().maxClients(2))) {
            List<java.util.concurrent.CompletableFuture<HubClient>> connecting = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                connecting.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        return HubClient.connect(hub.uri(), WAIT);
                    } catch (Exception e) {
                        throw new IllegalStateException("the upgrade itself failed: " + e, e);
                    }
                }));
            }
            List<HubClient> clients = new ArrayList<>();
            for (var c : connecting) {
                clients.add(c.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS));
            }
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (clients.stream().filter(c -> !c.isOpen()).count() < 4 && System.nanoTime() - deadline < 0) {
                Thread.sleep(20);
            }
            List<HubClient> closed = clients.stream().filter(c -> !c.isOpen()).toList();
            assertThat(closed).as("four of six over --max-clients 2").hasSize(4);
            for (HubClient c : closed) {
                assertThat(c.awaitClose(WAIT).code()).isEqualTo(4013);
            }
            clients.forEach(HubClient::close);
            assertThat(hub.server.services().metrics().socketsRefusedBeforeUpgrade.get()).isZero();
        }
    }

    @Test
    void oversizeFrameCloses1009() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().maxFrameBytes(4096))) {
            HubClient c = hub.agent("p/alpha");
            c.sendText("{\"sender\":\"p/alpha\",\"payload\":\"" + "x".repeat(8000) + "\"}");
            assertThat(c.awaitClose(WAIT).code()).isEqualTo(1009);
        }
    }

    @Test
    void untrustedHostOrOriginIsRefused403AndHttpEndpointsFollowTheMetricsFlag() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true))) {
            assertThat(http(hub.port, "GET / HTTP/1.1\r\nHost: evil.example\r\nUpgrade: websocket\r\n"
                    + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n")).startsWith("HTTP/1.1 403");
            assertThat(http(hub.port, "GET / HTTP/1.1\r\nHost: 127.0.0.1:" + hub.port + "\r\nOrigin: http://evil\r\n"
                    + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n")).startsWith("HTTP/1.1 403");
            String health = http(hub.port, "GET /health HTTP/1.1\r\nHost: whatever\r\nConnection: close\r\n\r\n");
            assertThat(health).startsWith("HTTP/1.1 200").contains("application/json");
            for (String field : List.of("\"status\":\"ok\"", "\"journal_corrupt_rows\":0", "\"version\":",
                    "\"protocol_version\":2", "\"hub_id\":\"syn-", "\"config_epoch\":", "\"uptime_seconds\":",
                    "\"online_agents\":0", "\"active_claims\":0", "\"operation_outbox_pending\":0")) {
                assertThat(health).contains(field);
            }
            String metrics = http(hub.port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            assertThat(metrics).startsWith("HTTP/1.1 200").contains("text/plain; version=0.0.4")
                    .contains("synapse_connected_clients 0\n").contains("synapse_claims_granted_total 0\n")
                    .contains("synapse_actor_queue_depth").contains("synapse_commit_batch_size")
                    .contains("synapse_commit_latency_seconds").contains("synapse_active_claims 0\n")
                    .contains("synapse_fanout_backlog_bytes 0\n");
        }
        try (TestHub hub = TestHub.open()) {
            assertThat(http(hub.port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
                    .startsWith("HTTP/1.1 403");
        }
    }

    /**
     * Waits until the hub has admitted {@code n} sockets: a client's handshake can complete
     * before the hub's admission of it has run, and a cap counts admitted sockets only.
     */
    private static void awaitAdmitted(TestHub hub, int n) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (hub.server.services().registry().connectedClients() < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(n + " sockets not admitted within " + WAIT);
            }
            Thread.sleep(1);
        }
    }

    private static String http(int port, String request) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[16384];
            StringBuilder sb = new StringBuilder();
            long deadline = System.currentTimeMillis() + 5000;
            while (System.currentTimeMillis() < deadline) {
                int n;
                try {
                    n = in.read(buf);
                } catch (java.net.SocketTimeoutException e) {
                    break;
                }
                if (n < 0) {
                    break;
                }
                sb.append(new String(buf, 0, n, StandardCharsets.UTF_8));
                if (sb.indexOf("\r\n\r\n") > 0 && (sb.indexOf("403") > 0 || sb.toString().contains("}")
                        || sb.toString().contains("synapse_operation_outbox_pending"))) {
                    break;
                }
            }
            return sb.toString();
        }
    }

    /** The load tool's 10,000 idle clients each kept a welcome listing every online agent. */
    @Test
    void clearPendingAlsoForgetsTheReceivedHistory() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alpha = hub.agent("p/alpha");
            assertThat(alpha.received()).anyMatch(f -> isType(f, "welcome"));
            alpha.clearPending();
            assertThat(alpha.received()).isEmpty();
            assertThat(alpha.pending()).isEmpty();
        }
    }
}
