package dev.synapsehub.net;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The exact refusal and reply texts of wire contract A9 over a real loopback socket: command
 * line tools and agents match on these strings, so each is asserted verbatim.
 */
class ContractTextsWireTest {

    private static ObjectNode claimed(HubClient c, String taskId) throws Exception {
        ObjectNode claim = c.frame("claim");
        claim.put("task_id", taskId).put("worktree", "wt");
        claim.putArray("paths").add("src/" + taskId);
        c.send(claim);
        return c.await(f -> "claim_granted".equals(f.path("type").asText())
                && taskId.equals(f.path("task_id").asText()), WAIT);
    }

    private static String errorPayload(HubClient c) throws Exception {
        return c.awaitType("error", WAIT).path("payload").asText();
    }

    @Test
    void releaseRefusalsNameTheOwnerTheSenderAndTheCurrentEpoch() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alpha = hub.agent("p/alpha");
            HubClient beta = hub.agent("p/beta");
            long epoch = claimed(alpha, "T1").path("epoch").asLong();
            beta.clearPending();

            ObjectNode foreign = beta.frame("release");
            foreign.put("task_id", "T1");
            beta.send(foreign);
            assertThat(beta.awaitType("release_denied", WAIT).path("payload").asText())
                    .isEqualTo("Task 'T1' is owned by p/alpha, not p/beta.");

            ObjectNode stale = alpha.frame("release");
            stale.put("task_id", "T1").put("epoch", epoch + 7);
            alpha.send(stale);
            assertThat(alpha.awaitType("release_denied", WAIT).path("payload").asText())
                    .isEqualTo("Task 'T1' epoch is stale (current " + epoch + ").");

            ObjectNode unclaimed = alpha.frame("release");
            unclaimed.put("task_id", "T9");
            alpha.send(unclaimed);
            assertThat(alpha.awaitType("release_denied", WAIT).path("payload").asText())
                    .isEqualTo("Task 'T9' is not currently claimed.");

            ObjectNode empty = alpha.frame("release");
            empty.put("task_id", "  ");
            alpha.send(empty);
            assertThat(alpha.awaitType("release_denied", WAIT).path("payload").asText())
                    .isEqualTo("Task ID is required.");
        }
    }

    /**
     * The recorded reference words a non-owner's checkpoint ({@code checkpoint_denied}) and
     * task_update ({@code error}) without "is" (shared/transcripts/reference-v2.jsonl), unlike
     * A9's release text; tools match on each.
     */
    @Test
    void checkpointAndTaskUpdateByANonOwnerUseTheRecordedTexts() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alpha = hub.agent("p/alpha");
            HubClient beta = hub.agent("p/beta");
            claimed(alpha, "T1");
            beta.clearPending();

            ObjectNode checkpoint = beta.frame("checkpoint");
            checkpoint.put("task_id", "T1");
            beta.send(checkpoint);
            assertThat(beta.awaitType("checkpoint_denied", WAIT).path("payload").asText())
                    .isEqualTo("Task 'T1' owned by p/alpha, not p/beta.");

            ObjectNode update = beta.frame("task_update");
            update.put("payload", "T1").put("task_id", "T1").put("status", "done");
            beta.send(update);
            assertThat(errorPayload(beta)).isEqualTo("Task 'T1' owned by p/alpha, not p/beta.");
        }
    }

    @Test
    void waitRequestOutcomesUseTheContractTexts() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alpha = hub.agent("p/alpha");
            HubClient beta = hub.agent("p/beta");
            claimed(alpha, "TA");
            claimed(beta, "TB");
            alpha.clearPending();
            beta.clearPending();

            ObjectNode unheld = alpha.frame("wait_request");
            unheld.put("task_id", "NOPE");
            alpha.send(unheld);
            assertThat(alpha.awaitType("wait_denied", WAIT).path("payload").asText())
                    .isEqualTo("Task 'NOPE' is not claimed; nothing to wait for.");

            ObjectNode own = alpha.frame("wait_request");
            own.put("task_id", "TA");
            alpha.send(own);
            assertThat(alpha.awaitType("wait_denied", WAIT).path("payload").asText())
                    .isEqualTo("You already hold 'TA'.");

            ObjectNode waits = alpha.frame("wait_request");
            waits.put("task_id", "TB");
            alpha.send(waits);
            assertThat(alpha.awaitType("wait_granted", WAIT).path("payload").asText())
                    .isEqualTo("Waiting for 'TB' held by p/beta.");

            ObjectNode cycle = beta.frame("wait_request");
            cycle.put("task_id", "TA");
            beta.send(cycle);
            assertThat(beta.awaitType("wait_denied", WAIT).path("payload").asText())
                    .isEqualTo("Waiting for 'TA' held by p/alpha would deadlock.");
        }
    }

    @Test
    void taskUpdateBoardAndResourceErrorsUseTheContractTexts() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alpha = hub.agent("p/alpha");
            alpha.clearPending();

            ObjectNode update = alpha.frame("task_update");
            update.put("task_id", "GHOST").put("status", "done");
            alpha.send(update);
            assertThat(errorPayload(alpha)).isEqualTo("Task 'GHOST' not found.");

            ObjectNode noTitle = alpha.frame("ledger_task");
            noTitle.put("task_id", "B1");
            alpha.send(noTitle);
            assertThat(errorPayload(alpha)).isEqualTo("Task title is required.");

            ObjectNode noId = alpha.frame("ledger_task");
            noId.put("title", "a title");
            alpha.send(noId);
            assertThat(errorPayload(alpha)).isEqualTo("Task ID is required.");

            ObjectNode unknown = alpha.frame("ledger_task_update");
            unknown.put("task_id", "B2").put("status", "done");
            alpha.send(unknown);
            assertThat(errorPayload(alpha)).isEqualTo("Task 'B2' is not on the board.");

            ObjectNode declare = alpha.frame("ledger_task");
            declare.put("task_id", "B3").put("title", "board task");
            alpha.send(declare);
            alpha.awaitType("ledger_task_posted", WAIT);
            ObjectNode badStatus = alpha.frame("ledger_task_update");
            badStatus.put("task_id", "B3").put("status", "finished");
            alpha.send(badStatus);
            assertThat(errorPayload(alpha)).isEqualTo("Unknown ledger status 'finished'.");

            for (String alias : new String[] {"resource", "resource_offer", "offer_resource"}) {
                ObjectNode offer = alpha.frame(alias);
                offer.put("kind", "gpu");
                alpha.send(offer);
                assertThat(errorPayload(alpha)).as(alias).isEqualTo("resource offer requires kind+name");
            }
            ObjectNode neither = alpha.frame("resource");
            alpha.send(neither);
            assertThat(errorPayload(alpha)).isEqualTo("resource offer requires kind+name");

            ObjectNode strange = alpha.frame("no_such_verb");
            alpha.send(strange);
            assertThat(errorPayload(alpha)).isEqualTo("Unknown message type 'no_such_verb'.");
        }
    }

    @Test
    void malformedFramesGetTheContractTexts() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alpha = hub.agent("p/alpha");
            alpha.clearPending();
            for (String raw : new String[] {"[1,2]", "42", "null"}) {
                alpha.sendText(raw);
                ObjectNode e = alpha.awaitType("error", WAIT);
                assertThat(e.path("payload").asText()).as(raw).isEqualTo("Malformed frame: expected a JSON object.");
                assertThat(e.path("target").asText()).isEqualTo("all");
            }
            alpha.sendText("{\"sender\":\"p/alpha\",\"target\":7,\"type\":\"chat\"}");
            assertThat(errorPayload(alpha)).isEqualTo("Malformed frame: 'target' must be a string.");
            alpha.sendText("{\"sender\":\"p/alpha\",");
            assertThat(errorPayload(alpha)).isEqualTo("Malformed JSON.");
            assertThat(alpha.isOpen()).isTrue();
        }
    }

    @Test
    void nameRefusalsUseTheContractTextsAndCloseCodes() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alpha = hub.agent("p/alpha");

            ObjectNode switched = alpha.frame("p/other", "chat");
            switched.put("payload", "hi");
            alpha.send(switched);
            ObjectNode conflict = alpha.awaitType("name_conflict", WAIT);
            assertThat(conflict.path("payload").asText()).isEqualTo(
                    "Sender name switch denied: 'p/alpha' -> 'p/other'. Reconnect with a new --name.");
            assertThat(conflict.path("target").asText()).isEqualTo("p/alpha");
            assertThat(alpha.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4009, "name switch"));

            HubClient beta = hub.agent("p/beta");
            HubClient twin = hub.connect();
            twin.send(twin.frame("p/beta", "heartbeat"));
            assertThat(twin.awaitType("name_conflict", WAIT).path("payload").asText()).isEqualTo(
                    "Name 'p/beta' is already online from another session. Use a unique --name.");
            assertThat(twin.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4009, "name conflict"));
            assertThat(beta.isOpen()).isTrue();

            for (String reserved : new String[] {"SynapseHub", " synapse ", "SYSTEM"}) {
                HubClient impostor = hub.connect();
                impostor.send(impostor.frame(reserved, "heartbeat"));
                ObjectNode refused = impostor.awaitType("name_conflict", WAIT);
                assertThat(refused.path("payload").asText()).isEqualTo("Name '" + reserved.strip()
                        + "' is reserved for hub protocol provenance. Choose a non-reserved agent name.");
                assertThat(refused.path("target").asText()).isEqualTo(reserved.strip());
                assertThat(impostor.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4009, "reserved identity"));
            }
        }
    }

    @Test
    void leaseGrantAndOwnedNameUseTheContractTexts() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient watcher = hub.agent("p/watcher");
            HubClient owner = hub.connect();
            ObjectNode hb = owner.frame("p/leased", "heartbeat");
            hb.put("lease", true);
            owner.send(hb);
            assertThat(owner.awaitType("lease_granted", WAIT).path("payload").asText()).isEqualTo(
                    "Ownership lease granted for 'p/leased'. Persist the token and present it as owner_lease on every"
                            + " reconnect.");
            owner.close();
            watcher.await(f -> "presence_update".equals(f.path("type").asText())
                    && "p/leased".equals(f.path("agent").asText()) && "left".equals(f.path("event").asText()), WAIT);

            HubClient thief = hub.connect();
            ObjectNode steal = thief.frame("p/leased", "heartbeat");
            steal.put("takeover", true);
            thief.send(steal);
            assertThat(thief.awaitType("name_conflict", WAIT).path("payload").asText()).isEqualTo(
                    "Name 'p/leased' is protected by an ownership lease. Reconnect presenting its owner_lease token,"
                            + " wait 3600s after its holder disconnects for the lease to lapse, or choose a unique"
                            + " --name.");
            assertThat(thief.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4016, "name owned"));
        }
    }

    @Test
    void directedChatWithNobodyOnlineNamesTheTarget() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alpha = hub.agent("p/alpha");
            for (String target : new String[] {"p/nobody", "Z/*"}) {
                ObjectNode chat = alpha.frame("chat");
                chat.put("target", target).put("payload", "anyone?").put("receipt_requested", true);
                alpha.send(chat);
                ObjectNode receipt = alpha.awaitType("delivery_receipt", WAIT);
                assertThat(receipt.path("payload").asText())
                        .isEqualTo("delivery failed: no online recipient matched " + target);
                assertThat(receipt.path("reason").asText()).isEqualTo("no_online_recipient");
            }
        }
    }

    @Test
    void deliveredReceiptLabelsEachRecipientByItsWakeCapability() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient alpha = hub.agent("p/alpha");
            HubClient bob = hub.agent("p/bob");
            HubClient carol = hub.agent("p/carol");
            ObjectNode declare = bob.frame("heartbeat");
            declare.put("wake_capability", "Direct");
            bob.send(declare);
            ObjectNode passive = carol.frame("heartbeat");
            passive.put("wake_capability", "passive");
            carol.send(passive);
            // both declarations are in once who_snapshot shows them
            alpha.clearPending();
            long deadline = System.nanoTime() + WAIT.toNanos();
            for (int i = 0; i < 100_000; i++) {
                alpha.send(alpha.frame("who_request"));
                ObjectNode who = alpha.awaitType("who_snapshot", WAIT);
                if ("direct".equals(who.path("wake_capabilities").path("p/bob").asText())
                        && "passive".equals(who.path("wake_capabilities").path("p/carol").asText())) {
                    break;
                }
                assertThat(System.nanoTime()).as("both declarations applied in time").isLessThan(deadline);
            }
            ObjectNode chat = alpha.frame("chat");
            chat.put("target", "p/bob,p/carol").put("payload", "hi").put("receipt_requested", true);
            alpha.send(chat);
            assertThat(alpha.awaitType("delivery_receipt", WAIT).path("payload").asText())
                    .isEqualTo("delivered to p/bob (direct agent), p/carol (passive receiver)");
        }
    }

    @Test
    void aPlainGetOnAnyOtherPathIs426UpgradeRequired() throws Exception {
        try (TestHub hub = TestHub.open()) {
            for (String path : new String[] {"/", "/other", "/?x=1"}) {
                String response = HttpGet.body(hub.port, path);
                assertThat(response).as(path).startsWith("HTTP/1.1 426 Upgrade Required\r\n");
                assertThat(response.toLowerCase(java.util.Locale.ROOT)).contains("upgrade: websocket\r\n");
            }
            HubClient still = hub.agent("p/alpha"); // a real handshake on the same port is unaffected
            assertThat(still.isOpen()).isTrue();
        }
    }

    @Test
    void metricsDisabledAnswers403WithTheContractBody() throws Exception {
        try (TestHub hub = TestHub.open()) {
            for (String path : new String[] {"/metrics", "/health", "/metrics?format=json"}) {
                String response = HttpGet.body(hub.port, path);
                assertThat(response).as(path).startsWith("HTTP/1.1 403 Forbidden\r\n");
                assertThat(response.toLowerCase(java.util.Locale.ROOT))
                        .contains("content-type: text/plain; charset=utf-8\r\n")
                        .contains("content-length: 17\r\n");
                assertThat(response).endsWith("\r\n\r\nmetrics disabled\n");
                assertThat("metrics disabled\n".getBytes(StandardCharsets.UTF_8)).hasSize(17);
            }
        }
    }

    private static String get(int port, String path, String authorization) throws Exception {
        return HttpGet.raw(port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + (authorization == null ? "" : "Authorization: " + authorization + "\r\n")
                + "Connection: close\r\n\r\n");
    }

    @Test
    void aMetricsTokenIsAskedAsABearerTokenAndRefused401WithTheChallenge() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true)
                .metricsAuth(new dev.synapsehub.net.auth.MetricsAuth("s3cret-metrics", false)))) {
            for (String path : new String[] {"/metrics", "/health"}) {
                for (String refused : new String[] {null, "Bearer wrong", "Basic czNjcmV0LW1ldHJpY3M=", "Bearer "}) {
                    String response = get(hub.port, path, refused);
                    assertThat(response).as(path + " with " + refused).startsWith("HTTP/1.1 401 Unauthorized\r\n");
                    assertThat(response.toLowerCase(java.util.Locale.ROOT))
                            .contains("www-authenticate: bearer realm=\"synapse-metrics\"\r\n")
                            .contains("content-type: text/plain; charset=utf-8\r\n");
                    assertThat(response).doesNotContain("synapse_up").doesNotContain("\"status\"");
                }
                assertThat(get(hub.port, path + "?token=s3cret-metrics", null)).as("?token= without the opt-in")
                        .startsWith("HTTP/1.1 401 Unauthorized\r\n");
                String served = get(hub.port, path, "Bearer s3cret-metrics");
                assertThat(served).as(path).startsWith("HTTP/1.1 200 OK\r\n");
                assertThat(get(hub.port, path, "bearer s3cret-metrics")).as("the scheme is case-insensitive")
                        .startsWith("HTTP/1.1 200 OK\r\n");
            }
            assertThat(get(hub.port, "/metrics", "Bearer s3cret-metrics")).contains("synapse_up 1");
            HubClient agent = hub.agent("p/alpha"); // the WebSocket side asks for no metrics token
            assertThat(agent.isOpen()).isTrue();
        }
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true)
                .metricsAuth(new dev.synapsehub.net.auth.MetricsAuth("s3cret-metrics", true)))) {
            assertThat(get(hub.port, "/metrics?token=s3cret-metrics", null)).as("the deprecated opt-in")
                    .startsWith("HTTP/1.1 200 OK\r\n");
            assertThat(get(hub.port, "/metrics?token=wrong", null)).startsWith("HTTP/1.1 401 Unauthorized\r\n");
            assertThat(get(hub.port, "/metrics?token=%zz", null)).as("an undecodable query carries no token")
                    .startsWith("HTTP/1.1 401 Unauthorized\r\n");
        }
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true))) {
            long faults = hub.server.services().metrics().faults.get();
            assertThat(get(hub.port, "/metrics?x=%zz", null)).as("the query is not read without the opt-in")
                    .startsWith("HTTP/1.1 200 OK\r\n");
            assertThat(get(hub.port, "/%zz", null)).startsWith("HTTP/1.1 400 Bad Request\r\n");
            assertThat(hub.server.services().metrics().faults.get()).as("a client's bad escape is no fault of the hub")
                    .isEqualTo(faults);
        }
        try (TestHub hub = new TestHub(HubConfig.builder()
                .metricsAuth(new dev.synapsehub.net.auth.MetricsAuth("s3cret-metrics", false)))) {
            assertThat(get(hub.port, "/metrics", "Bearer s3cret-metrics")).as("without --metrics: 403 as before")
                    .startsWith("HTTP/1.1 403 Forbidden\r\n");
        }
    }
}
