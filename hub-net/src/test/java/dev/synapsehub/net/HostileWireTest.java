package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import org.junit.jupiter.api.Test;


import java.util.List;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hostile inputs a fuzzing run of the live hub found (issue 11), each against a real hub on
 * loopback: refused with a typed error or the documented close code, nothing changed, nothing
 * logged as a hub fault.
 */
class HostileWireTest {

    private static JsonNode claims(HubClient c) throws Exception {
        return TestHub.state(c).path("snapshot").path("active_claims");
    }

    @Test
    void aLoneSurrogateInAnIdentifierIsRefusedNotFoldedIntoAnotherOne() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            a.sendText("{\"sender\":\"p/alpha\",\"type\":\"claim\",\"task_id\":\"s-\\ud800\",\"worktree\":\"w\"}");
            ObjectNode e = a.awaitType("error", WAIT);
            assertThat(e.path("error_code").asText()).isEqualTo("invalid_unicode");
            assertThat(e.path("field").asText()).isEqualTo("task_id");
            assertThat(claims(a)).isEmpty();
            // a low surrogate alone, and one in a member name, likewise
            a.sendText("{\"sender\":\"p/alpha\",\"type\":\"claim\",\"task_id\":\"s-\\udc00x\"}");
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("invalid_unicode");
            a.sendText("{\"sender\":\"p/alpha\",\"type\":\"chat\",\"x\\ud800\":1}");
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("invalid_unicode");

            HubClient b = hub.agent("p/beta");
            ObjectNode claim = b.frame("claim");
            claim.put("task_id", "s-?");
            b.send(claim);
            b.awaitType("claim_granted", WAIT);
            assertThat(claims(b)).hasSize(1);
            // a well-formed pair (an emoji) is an ordinary identifier
            a.sendText("{\"sender\":\"p/alpha\",\"type\":\"claim\",\"task_id\":\"s-\\ud83d\\ude00\",\"worktree\":\"e\"}");
            ObjectNode mine = a.await(f -> "claim_granted".equals(f.path("type").asText())
                    && "p/alpha".equals(f.path("owner").asText()), WAIT);
            assertThat(mine.path("task_id").asText()).isEqualTo("s-\ud83d\ude00");
        }
    }

    @Test
    void aBoundSocketSwitchingToAnInvalidNameIsClosedAsAnyNameSwitch() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient ann = hub.agent("ann");
            ann.sendText("{\"sender\":\"bad\\u0000\",\"type\":\"heartbeat\"}");
            assertThat(ann.awaitType("name_conflict", WAIT).path("target").asText()).isEqualTo("ann");
            var closed = ann.awaitClose(WAIT);
            assertThat(closed.code()).isEqualTo(4009); // contract §3.4: a later frame under another name
            assertThat(closed.reason()).isEqualTo("name switch");
        }
    }

    @Test
    void aNameWithALoneSurrogateIsRefusedAndNothingBinds() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient c = hub.connect();
            c.sendText("{\"sender\":\"p/\\ud800\",\"type\":\"heartbeat\"}");
            assertThat(c.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("invalid_unicode");
            assertThat(c.awaitClose(WAIT).code()).isEqualTo(4010);
            assertThat(hub.server.services().registry().online()).isEmpty();
        }
    }

    @Test
    void namesThatOnlyLookReservedOrHideCharactersAreRefused() throws Exception {
        try (TestHub hub = TestHub.open()) {
            record Case(String json, int close, String errorCode) {
            }
            List<Case> cases = List.of(
                    new Case("SynapseHub\\u0000", 4010, "invalid_name"),
                    new Case("Synapse\\u200bHub", 4010, "invalid_name"),
                    new Case("Synapse\\u00adHub", 4010, "invalid_name"), // soft hyphen (format)
                    new Case("Syst\\u0435m", 4010, "invalid_name"), // Cyrillic e among Latin letters
                    new Case("\\uff33\\uff59\\uff4e\\uff41\\uff50\\uff53\\uff45\\uff28\\uff55\\uff42", 4009, null), // full width
                    new Case("\\u0455\\u0443\\u0455\\u0442\\u0435\\u043c", 4009, null), // all Cyrillic look-alikes
                    new Case("SYSTEM", 4009, null), // plain upper case
                    new Case("\\u017fynapse", 4009, null), // long s folds to s
                    new Case("x".repeat(100_000), 4010, "invalid_name"));
            for (Case k : cases) {
                HubClient c = hub.connect();
                c.sendText("{\"sender\":\"" + k.json() + "\",\"type\":\"heartbeat\"}");
                if (k.errorCode() != null) {
                    ObjectNode e = c.awaitType("error", WAIT);
                    assertThat(e.path("error_code").asText()).as(k.json()).isEqualTo(k.errorCode());
                    assertThat(e.path("field").asText()).isEqualTo("sender");
                } else {
                    assertThat(c.awaitType("name_conflict", WAIT)).isNotNull();
                }
                assertThat(c.awaitClose(WAIT).code()).as(k.json().substring(0, Math.min(40, k.json().length())))
                        .isEqualTo(k.close());
            }
            assertThat(hub.server.services().registry().online()).isEmpty();
            // names in other scripts are names; a project-scoped "system" is an ordinary one
            hub.agent("\u0430\u0433\u0435\u043d\u0442-1");
            hub.agent("\u30a8\u30fc\u30b8\u30a7\u30f3\u30c8");
            hub.agent("proj/system");
            assertThat(hub.server.services().registry().online()).hasSize(3);
        }
    }

    @Test
    void aVerbSpelledWithTheKelvinSignIsNoVerb() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            ObjectNode claim = a.frame("claim");
            claim.put("task_id", "T1");
            a.send(claim);
            long epoch = a.awaitType("claim_granted", WAIT).path("epoch").asLong();
            a.sendText("{\"sender\":\"p/alpha\",\"type\":\"chec\\u212apoint\",\"task_id\":\"T1\",\"checkpoint\":\"c1\","
                    + "\"epoch\":" + epoch + "}");
            ObjectNode e = a.awaitType("error", WAIT);
            assertThat(e.path("payload").asText()).startsWith("Unknown message type");
            TestHub.assertQuiet(a); // no checkpoint_saved
        }
    }

    @Test
    void anIntegerLiteralTooLargeForADoubleIsMalformed() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            a.sendText("{\"sender\":\"p/alpha\",\"type\":\"claim\",\"task_id\":\"T1\",\"ttl_seconds\":" + "9".repeat(309)
                    + "}");
            assertThat(a.awaitType("error", WAIT).path("payload").asText()).isEqualTo("Malformed JSON.");
            assertThat(claims(a)).isEmpty();
            // 308 digits still fit a double, and are clamped like any long TTL
            a.sendText("{\"sender\":\"p/alpha\",\"type\":\"claim\",\"task_id\":\"T1\",\"ttl_seconds\":" + "9".repeat(308)
                    + "}");
            a.awaitType("claim_granted", WAIT);
        }
    }

    @Test
    void anOpenFragmentFollowedByACloseIsAnOrdinaryDisconnect() throws Exception {
        try (TestHub hub = TestHub.open(); RawWebSocket ws = new RawWebSocket(hub.port)) {
            ws.sendText(true, "{\"sender\":\"p/raw\",\"type\":\"heartbeat\"}");
            ws.sendText(false, "{\"sender\":\"p/raw\",\"type\":\"chat\",\"payload\":\"half");
            ws.sendClose(1000);
            RawWebSocket.Frame close = ws.awaitClose();
            assertThat(close).isNotNull();
            assertThat(close.closeCode()).isEqualTo(1000); // echoed, not 1011
            awaitNoConnections(hub);
            assertThat(hub.server.services().metrics().faults.get()).isZero();
        }
    }

    @Test
    void anOpenFragmentFollowedByAResetIsAnOrdinaryDisconnect() throws Exception {
        try (TestHub hub = TestHub.open(); RawWebSocket ws = new RawWebSocket(hub.port)) {
            ws.sendText(true, "{\"sender\":\"p/raw\",\"type\":\"heartbeat\"}");
            ws.sendText(false, "{\"sender\":\"p/raw\",\"type\":\"chat\",\"payload\":\"half");
            awaitOnline(hub, 1);
            ws.reset();
            awaitNoConnections(hub);
            assertThat(hub.server.services().metrics().faults.get()).isZero();
        }
    }

    @Test
    void anOpenFragmentFollowedByANewMessageIsAProtocolError() throws Exception {
        try (TestHub hub = TestHub.open(); RawWebSocket ws = new RawWebSocket(hub.port)) {
            ws.sendText(true, "{\"sender\":\"p/raw\",\"type\":\"heartbeat\"}");
            ws.sendText(false, "{\"sender\":\"p/raw\",\"type\":\"chat\",\"payload\":\"half");
            ws.sendText(true, "{\"sender\":\"p/raw\",\"type\":\"chat\"}");
            RawWebSocket.Frame close = ws.awaitClose();
            assertThat(close).isNotNull();
            assertThat(close.closeCode()).isEqualTo(1002);
            awaitNoConnections(hub);
            assertThat(hub.server.services().metrics().faults.get()).isZero();
        }
    }

    @Test
    void closeCodesNoPeerMaySendAreAnswered1002AndValidOnesEchoed() throws Exception {
        try (TestHub hub = TestHub.open()) {
            for (int code : new int[] {5000, 5001, 65535}) {
                try (RawWebSocket ws = new RawWebSocket(hub.port)) {
                    ws.sendClose(code);
                    RawWebSocket.Frame close = ws.awaitClose();
                    assertThat(close).as("close %d", code).isNotNull();
                    assertThat(close.closeCode()).as("answer to close %d", code).isEqualTo(1002);
                }
            }
            for (int code : new int[] {1000, 1001, 3000, 4999}) {
                try (RawWebSocket ws = new RawWebSocket(hub.port)) {
                    ws.sendClose(code);
                    assertThat(ws.awaitClose().closeCode()).as("answer to close %d", code).isEqualTo(code);
                }
            }
            // codes Netty's frame decoder refuses itself: the connection is closed (with 1000, see
            // docs/protocol.md), never echoed, and it is no hub fault
            for (int code : new int[] {999, 1005, 1006, 1015, 2999}) {
                try (RawWebSocket ws = new RawWebSocket(hub.port)) {
                    ws.sendClose(code);
                    RawWebSocket.Frame close = ws.awaitClose();
                    assertThat(close == null ? -1 : close.closeCode()).as("answer to close %d", code).isNotEqualTo(code);
                }
            }
            awaitNoConnections(hub);
            assertThat(hub.server.services().metrics().faults.get()).isZero();
        }
    }

    @Test
    void aRequestTargetThatIsNotAPathIsAnswered400AtOnce() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true))) {
            assertThat(HttpGet.raw(hub.port, "GET http://127.0.0.1:" + hub.port + "/health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "\r\n")).startsWith("HTTP/1.1 400");
            assertThat(HttpGet.raw(hub.port, "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")).startsWith("HTTP/1.1 400");
            assertThat(HttpGet.body(hub.port, "/health")).startsWith("HTTP/1.1 200"); // origin form still works
        }
    }

    @Test
    void aSlowReaderIsCountedOnceWhenItIsDropped() throws Exception {
        // a short grace: the writability timer and the hard limit both find the same reader
        try (TestHub hub = new TestHub(HubConfig.builder().outboundHighWaterBytes(16 * 1024)
                .slowReaderGrace(java.time.Duration.ofMillis(50)))) {
            HubClient slow = hub.agent("p/slow");
            HubClient talker = hub.agent("p/talker");
            slow.pauseReading();
            String payload = "x".repeat(8 * 1024);
            for (int i = 0; i < 4000 && slow.isOpen(); i++) {
                ObjectNode chat = talker.frame("chat");
                chat.put("payload", payload);
                talker.send(chat);
                if (i % 50 == 49) {
                    talker.awaitType("chat", WAIT); // stay in step with the hub (its own echo)
                    talker.clearPending();
                }
            }
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (hub.server.services().registry().online().contains("p/slow") && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(hub.server.services().registry().online()).doesNotContain("p/slow");
            hub.awaitBroadcastsHandedOut();
            assertThat(hub.server.services().metrics().slowReadersDisconnected.get()).isEqualTo(1);
        }
    }

    @Test
    void aHistoryOfThreeByteCharactersIsCutByBytesNotCharacters() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().maxFrameBytes(4096))) {
            HubClient a = hub.agent("p/alpha");
            for (int i = 1; i <= 5; i++) {
                ObjectNode chat = a.frame("chat");
                chat.put("payload", i + "-" + "\u6f22".repeat(500)); // 500 characters, 1,500 bytes in UTF-8
                a.send(chat);
                a.await(f -> "chat".equals(f.path("type").asText()) && "p/alpha".equals(f.path("sender").asText()), WAIT);
            }
            a.send(a.frame("history_request"));
            ObjectNode history = a.awaitType("history_snapshot", WAIT);
            assertThat(history.path("truncated").asBoolean()).isTrue();
            assertThat(history.path("history")).as("two frames of about 1.7 KB fit in 4 KB; counted in characters, all five did")
                    .hasSize(2);
            assertThat(history.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length).isLessThanOrEqualTo(4096);
        }
    }

    @Test
    void historyAndResumeRepliesStayWithinOneFrameAndSaySoWhenCut() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().maxFrameBytes(4096))) {
            HubClient a = hub.agent("p/alpha");
            for (int i = 1; i <= 5; i++) {
                ObjectNode chat = a.frame("chat");
                chat.put("payload", i + "-" + "z".repeat(1500));
                a.send(chat);
                a.await(f -> "chat".equals(f.path("type").asText()) && "p/alpha".equals(f.path("sender").asText()), WAIT);
            }
            a.send(a.frame("history_request"));
            ObjectNode history = a.awaitType("history_snapshot", WAIT);
            assertThat(history.path("truncated").asBoolean()).isTrue();
            assertThat(history.path("history")).hasSize(2);
            assertThat(history.path("history").get(1).path("payload").asText()).startsWith("5-"); // the newest
            ObjectNode resume = a.frame("resume_request");
            resume.put("since", 0);
            a.send(resume);
            ObjectNode resumed = a.awaitType("resume_snapshot", WAIT);
            assertThat(resumed.path("truncated").asBoolean()).isTrue();
            assertThat(resumed.path("messages")).hasSize(2);
            assertThat(resumed.path("messages").get(0).path("payload").asText()).startsWith("1-"); // the oldest
            assertThat(hub.server.services().frames().write(history).length()).isLessThan(4096);
        }
    }

    private static void awaitNoConnections(TestHub hub) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (hub.server.services().registry().connectedClients() > 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("connections still open after " + WAIT);
            }
            Thread.sleep(2);
        }
    }

    private static void awaitOnline(TestHub hub, int n) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (hub.server.services().registry().online().size() < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not bound after " + WAIT);
            }
            Thread.sleep(2);
        }
    }

}
