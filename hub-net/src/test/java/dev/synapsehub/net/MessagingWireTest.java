package dev.synapsehub.net;

import dev.synapsehub.client.HubClient;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.board.BoardLimits;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.messaging.MessagingLimits;
import dev.synapsehub.core.resource.ResourceLimits;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** Chat, mailbox, receipts, dead letters, history, board, resources and cards over a real loopback socket. */
class MessagingWireTest {
    @TempDir
    Path dir;

    private static ObjectNode chat(HubClient c, String target, String payload) {
        ObjectNode f = c.frame("chat");
        f.put("target", target);
        f.put("payload", payload);
        return f;
    }

    private static HubClient mailboxAgent(TestHub hub, String name, long since) throws Exception {
        HubClient c = hub.connect();
        ObjectNode hb = c.frame(name, "heartbeat");
        hb.put("payload", "online");
        hb.put("mailbox", true);
        hb.put("since_seq", since);
        c.send(hb);
        c.awaitType("welcome", WAIT);
        // "joined": the "left" of this name's previous connection may reach the new socket first
        c.await(f -> "presence_update".equals(f.path("type").asText()) && name.equals(f.path("agent").asText())
                && "joined".equals(f.path("event").asText()), WAIT);
        return c;
    }

    private static void ack(HubClient c, String name, long seq) {
        ObjectNode a = c.frame(name, "ack");
        a.put("target", "all");
        a.put("seq", seq);
        a.put("mailbox_for", name);
        c.send(a);
    }

    private static JsonNode who(HubClient c) throws Exception {
        c.send(c.frame("who_request"));
        return c.awaitType("who_snapshot", WAIT);
    }

    @Test
    void chatIsStampedByTheHubAndEchoesClientMembers() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            HubClient b = hub.agent("p/beta");
            a.clearPending();
            ObjectNode f = chat(a, "all", "hello");
            f.put("timestamp", 123.5);
            f.put("client_msg_id", "  m-1 ");
            f.put("client_timestamp", 9.0);
            f.put("seq", 77);
            f.put("priority", "high");
            f.putObject("metadata").put("k", 1.25);
            f.put("token", "secret");
            a.send(f);
            for (HubClient c : List.of(a, b)) {
                ObjectNode got = c.awaitType("chat", WAIT);
                assertThat(got.path("sender").asText()).isEqualTo("p/alpha");
                assertThat(got.path("timestamp").asDouble()).isGreaterThan(1_000_000_000.0);
                assertThat(got.path("client_timestamp").asDouble()).isEqualTo(123.5);
                assertThat(got.path("client_msg_id").asText()).isEqualTo("m-1");
                assertThat(got.path("priority").asText()).isEqualTo("high");
                assertThat(got.path("metadata").path("k").asDouble()).isEqualTo(1.25);
                assertThat(got.path("seq").asInt()).as("a client seq passes through without a journal (A6)").isEqualTo(77);
                assertThat(got.has("token")).isFalse();
                assertThat(got.path("msg_id").asLong()).isEqualTo(1);
                assertThat(got.path("hub_id").asText()).startsWith("syn-");
            }
            ObjectNode bad = chat(a, "all", "x");
            bad.put("timestamp", "soon");
            bad.put("client_msg_id", "bad\u0001id");
            a.send(bad);
            ObjectNode got = b.awaitType("chat", WAIT);
            assertThat(got.has("client_timestamp")).isFalse();
            assertThat(got.has("client_msg_id")).isFalse();
            assertThat(got.path("msg_id").asLong()).isEqualTo(2);
            ObjectNode noTarget = a.frame("chat");
            noTarget.remove("target");
            a.send(noTarget);
            assertThat(b.awaitType("chat", WAIT).has("target")).as("target echoed as sent").isFalse();
        }
    }

    @Test
    void directedChatReceiptsAndDeadLettersWithoutJournal() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            HubClient b = hub.agent("p/beta");
            a.clearPending();
            ObjectNode f = chat(a, "p/beta", "hi");
            f.put("receipt_requested", true);
            a.send(f);
            b.awaitType("chat", WAIT);
            ObjectNode r = a.awaitType("delivery_receipt", WAIT);
            assertThat(r.path("delivered").asBoolean()).isTrue();
            assertThat(r.path("recipients").toString()).isEqualTo("[\"p/beta\"]");
            assertThat(r.has("message_seq")).isFalse();
            assertThat(r.has("receipt_notification_id")).isFalse();
            ObjectNode g = chat(a, "p/gamma", "are you there");
            g.put("receipt_requested", 1);
            a.send(g);
            ObjectNode neg = a.awaitType("delivery_receipt", WAIT);
            assertThat(neg.path("delivered").asBoolean()).isFalse();
            assertThat(neg.path("reason").asText()).isEqualTo("no_online_recipient");
            assertThat(neg.path("dead_lettered").asBoolean()).isTrue();
            JsonNode dead = TestHub.state(a).path("snapshot").path("dead_letters");
            assertThat(dead).hasSize(1);
            assertThat(dead.get(0).path("target").asText()).isEqualTo("p/gamma");
            assertThat(dead.get(0).path("count").asLong()).isEqualTo(1);
            assertThat(dead.get(0).path("last_sender").asText()).isEqualTo("p/alpha");
            assertThat(who(a).path("mailbox_pending").isNull()).isTrue();
            hub.agent("p/gamma");
            assertThat(TestHub.state(a).path("snapshot").path("dead_letters")).as("cleared on bind").isEmpty();
        }
    }

    @Test
    void offlineAgentGetsExactlyItsBacklogOnceAndSendersGetDeferredReceiptsAlsoAfterRestart() throws Exception {
        Path db = dir.resolve("hub.db");
        long lastSeen;
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient a = hub.agent("p/alpha");
            HubClient other = hub.agent("p/other");
            a.clearPending();
            List<Long> sent = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                ObjectNode f = chat(a, "p/beta", "while away " + i);
                f.put("receipt_requested", true);
                a.send(f);
                ObjectNode echo = a.await(x -> "chat".equals(x.path("type").asText()), WAIT);
                sent.add(echo.path("seq").asLong());
                ObjectNode r = a.awaitType("delivery_receipt", WAIT);
                assertThat(r.path("receipt_notification_id").asText()).isEqualTo("delivery-receipt:" + sent.get(i) + ":pending");
                assertThat(r.path("message_seq").asLong()).isEqualTo(sent.get(i));
            }
            a.send(chat(a, "all", "broadcast is never replayed"));
            a.send(chat(a, "p/other", "not for beta"));
            JsonNode dead = TestHub.state(a).path("snapshot").path("dead_letters");
            assertThat(dead.get(0).path("target").asText()).isEqualTo("p/beta");
            assertThat(dead.get(0).path("count").asLong()).isEqualTo(3);

            HubClient b = mailboxAgent(hub, "p/beta", 0);
            List<Long> replayed = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                ObjectNode got = b.awaitType("chat", WAIT);
                assertThat(got.path("replayed").asBoolean()).isTrue();
                assertThat(got.path("payload").asText()).isEqualTo("while away " + i);
                assertThat(got.has("receipt_requested")).isFalse();
                replayed.add(got.path("seq").asLong());
            }
            assertThat(replayed).isEqualTo(sent);
            TestHub.assertQuiet(b);
            assertThat(who(a).path("mailbox_pending").path("p/beta").asInt()).isEqualTo(3);
            for (long seq : replayed) {
                ack(b, "p/beta", seq);
            }
            for (long seq : sent) {
                ObjectNode d = a.await(x -> "delivery_receipt".equals(x.path("type").asText())
                        && x.path("message_seq").asLong() == seq, WAIT);
                assertThat(d.path("deferred").asBoolean()).isTrue();
                assertThat(d.path("delivered").asBoolean()).isTrue();
                assertThat(d.path("recipients").toString()).isEqualTo("[\"p/beta\"]");
                assertThat(d.path("receipt_notification_id").asText()).isEqualTo("delivery-receipt:" + seq + ":deferred");
            }
            assertThat(who(a).path("mailbox_pending").path("p/beta").asInt()).isZero();
            b.close();
            // once a has the "left", every loop has queued it: a socket opened now is not sent it
            a.await(f -> "presence_update".equals(f.path("type").asText()) && "left".equals(f.path("event").asText())
                    && "p/beta".equals(f.path("agent").asText()), WAIT);
            lastSeen = sent.get(2);
            HubClient again = mailboxAgent(hub, "p/beta", lastSeen);
            TestHub.assertQuiet(again);
            again.close();
            other.close();
        }
        try (TestHub hub = TestHub.journaled(db)) {
            HubClient b = mailboxAgent(hub, "p/beta", lastSeen);
            TestHub.assertQuiet(b);
            HubClient a = hub.agent("p/alpha");
            assertThat(who(a).path("mailbox_pending").path("p/beta").asInt()).isZero();
            a.send(a.frame("history_request"));
            assertThat(a.awaitType("history_snapshot", WAIT).path("history")).hasSize(5);
            ObjectNode next = chat(a, "all", "after restart");
            a.send(next);
            assertThat(a.awaitType("chat", WAIT).path("msg_id").asLong()).as("msg_id resumes").isEqualTo(6);
        }
    }

    @Test
    void restartKeepsBoardVersionsResourcesDeadLettersAndBoundsHold() throws Exception {
        Path db = dir.resolve("restart.db");
        java.util.function.Supplier<CoordinationState> small = () -> new CoordinationState(RegistryLimits.DEFAULTS,
                1000, BoardLimits.DEFAULTS, ResourceLimits.DEFAULTS, MessagingLimits.DEFAULTS.withMaxHistory(5));
        try (TestHub hub = new TestHub(HubConfig.builder(), db, small)) {
            HubClient a = hub.agent("p/alpha");
            ObjectNode t = a.frame("ledger_task");
            t.put("task_id", "T1");
            t.put("title", "first");
            a.send(t);
            a.awaitType("ledger_task_posted", WAIT);
            a.send(t);
            assertThat(a.awaitType("ledger_task_posted", WAIT).path("task").path("version").asLong()).isEqualTo(2);
            ObjectNode res = a.frame("offer_resource");
            res.put("resource_kind", "gpu");
            res.put("resource_name", "a100");
            res.put("capacity", "3");
            a.send(res);
            a.awaitType("resource_offered", WAIT);
            for (int i = 0; i < 8; i++) {
                a.send(chat(a, "p/ghost", "m" + i));
                a.awaitType("chat", WAIT);
            }
        }
        try (TestHub hub = new TestHub(HubConfig.builder(), db, small)) {
            HubClient a = hub.agent("p/alpha");
            a.send(a.frame("board_request"));
            JsonNode task = a.awaitType("board_snapshot", WAIT).path("board").path("tasks").get(0);
            assertThat(task.path("version").asLong()).isEqualTo(2);
            JsonNode snap = TestHub.state(a).path("snapshot");
            assertThat(snap.path("resources").get(0).path("capacity").asInt()).isEqualTo(3);
            assertThat(snap.path("dead_letters").get(0).path("count").asLong()).isEqualTo(8);
            ObjectNode h = a.frame("history_request");
            h.put("limit", 100);
            a.send(h);
            ObjectNode history = a.awaitType("history_snapshot", WAIT);
            assertThat(history.path("history")).as("history bound re-applied on replay").hasSize(5);
            assertThat(history.path("requested_limit").asInt()).isEqualTo(100);
            assertThat(history.path("history").get(4).path("payload").asText()).isEqualTo("m7");
            ObjectNode r = a.frame("resume_request");
            r.put("since", 6);
            a.send(r);
            assertThat(a.awaitType("resume_snapshot", WAIT).path("messages")).hasSize(2);
        }
    }

    @Test
    void privateDirectedModeLimitsFanOutAndHistory() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().privateDirectedMessages(true))) {
            HubClient a = hub.agent("p/alpha");
            HubClient b = hub.agent("p/beta");
            HubClient c = hub.agent("p/gamma");
            a.send(chat(a, "p/beta", "secret"));
            assertThat(b.awaitType("chat", WAIT).path("payload").asText()).isEqualTo("secret");
            assertThat(a.awaitType("chat", WAIT).path("payload").asText()).isEqualTo("secret");
            a.send(chat(a, "all", "public"));
            assertThat(c.awaitType("chat", WAIT).path("payload").asText()).isEqualTo("public");
            c.send(c.frame("history_request"));
            assertThat(c.awaitType("history_snapshot", WAIT).path("history")).hasSize(1);
            b.send(b.frame("history_request"));
            assertThat(b.awaitType("history_snapshot", WAIT).path("history")).hasSize(2);
            c.send(c.frame("resume_request"));
            assertThat(c.awaitType("resume_snapshot", WAIT).path("messages")).hasSize(1);
        }
    }

    /**
     * Review F7: X's lease covered the exact name only, so any socket binding {@code X-rx} with
     * {@code mailbox_for: X} read X's directed (private) backlog. While X holds a lease, its
     * sidecar needs X's owner_lease (ours: the contract is silent); X's own sidecar still works.
     */
    @Test
    void theSidecarOfALeasedNameNeedsItsOwnerLeaseToReadItsMailbox() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().privateDirectedMessages(true).leaseOfflineTtlSeconds(3600),
                dir.resolve("hub.db"), CoordinationState::new)) {
            HubClient alice = hub.connect();
            ObjectNode hb = alice.frame("p/alice", "heartbeat");
            hb.put("lease", true);
            alice.send(hb);
            String lease = alice.awaitType("lease_granted", WAIT).path("owner_lease").asText();
            alice.close();
            HubClient bob = hub.agent("p/bob");
            bob.send(chat(bob, "p/alice", "the deploy key is hunter2"));
            who(bob); // the chat was handled before
            HubClient mallory = hub.connect();
            ObjectNode rx = mallory.frame("p/alice-rx", "heartbeat");
            rx.put("mailbox", true).put("mailbox_for", "p/alice");
            mallory.send(rx);
            ObjectNode refusal = mallory.awaitType("name_conflict", WAIT);
            assertThat(refusal.path("payload").asText()).isEqualTo("Name 'p/alice-rx' is the receive sidecar of"
                    + " 'p/alice', which is protected by an ownership lease. Reconnect presenting that name's owner_lease"
                    + " token, or choose a unique --name.");
            assertThat(mallory.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4016, "name owned"));
            assertThat(mallory.received().toString()).doesNotContain("hunter2");

            HubClient sidecar = hub.connect();
            ObjectNode own = sidecar.frame("p/alice-rx", "heartbeat");
            own.put("mailbox", true).put("mailbox_for", "p/alice").put("owner_lease", lease);
            sidecar.send(own);
            assertThat(sidecar.awaitType("chat", WAIT).path("payload").asText()).isEqualTo("the deploy key is hunter2");
        }
    }

    /**
     * Review F7b: a role is any string, so declaring another agent's name as a role intercepted
     * its directed (private) chats. A role naming a connected, leased or pinned agent is refused.
     */
    @Test
    void aRoleNamedAfterAnotherAgentIsRefusedAndGetsNoneOfItsChats() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().privateDirectedMessages(true))) {
            HubClient alice = hub.agent("p/alice");
            HubClient mallory = hub.connect();
            ObjectNode reg = mallory.frame("q/mallory", "heartbeat");
            reg.putArray("roles").add("p/alice").add("q/reviewer");
            mallory.send(reg);
            ObjectNode refused = mallory.awaitType("error", WAIT);
            assertThat(refused.path("error_code").asText()).isEqualTo("role_refused");
            assertThat(refused.path("payload").asText()).isEqualTo("Roles refused: 'p/alice' (the name of a connected"
                    + " agent). A role is an address of its own, never another agent's name; the other roles apply.");
            HubClient bob = hub.agent("p/bob");
            bob.send(chat(bob, "p/alice", "private: hunter2"));
            bob.send(chat(bob, "q/reviewer", "please review"));
            alice.awaitType("chat", WAIT);
            assertThat(mallory.awaitType("chat", WAIT).path("payload").asText()).as("the role it kept")
                    .isEqualTo("please review");
            assertThat(mallory.received().toString()).doesNotContain("hunter2");
            // the keepalive declaring the same roles gets no error again; its roles are still refused
            mallory.clearPending();
            ObjectNode keepalive = mallory.frame("q/mallory", "heartbeat");
            keepalive.putArray("roles").add("p/alice").add("q/reviewer");
            mallory.send(keepalive);
            mallory.send(mallory.frame("q/mallory", "who_request"));
            ObjectNode who = mallory.awaitType("who_snapshot", WAIT);
            assertThat(who.path("agent_roles").path("q/mallory").toString()).isEqualTo("[\"q/reviewer\"]");
            assertThat(mallory.received()).noneMatch(f -> "error".equals(f.path("type").asText()));
        }
    }

    @Test
    void boardVerbs() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            HubClient b = hub.agent("p/beta");
            ObjectNode t1 = a.frame("ledger_task");
            t1.put("task_id", " T1 ");
            t1.put("title", "Build");
            t1.put("project", "p");
            t1.put("idem_key", "k1");
            a.send(t1);
            ObjectNode posted = b.awaitType("ledger_task_posted", WAIT);
            assertThat(posted.path("task").path("task_id").asText()).isEqualTo("T1");
            assertThat(posted.path("task").path("status").asText()).isEqualTo("open");
            assertThat(posted.path("task").path("version").asLong()).isEqualTo(1);
            a.awaitType("ledger_task_posted", WAIT);
            a.send(t1);
            assertThat(a.awaitType("ledger_task_posted", WAIT)).as("idempotent replay, private").isEqualTo(posted);
            TestHub.assertQuiet(b);
            ObjectNode t2 = a.frame("ledger_task");
            t2.put("task_id", "T2");
            t2.put("title", "Test");
            t2.putArray("depends_on").add("T1").add("T2").add("");
            a.send(t2);
            assertThat(a.awaitType("ledger_task_posted", WAIT).path("task").path("depends_on").toString()).isEqualTo("[\"T1\"]");
            ObjectNode cycle = a.frame("ledger_task");
            cycle.put("task_id", "T1");
            cycle.put("title", "Build");
            cycle.putArray("depends_on").add("T2");
            a.send(cycle);
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("dependency_cycle");
            ObjectNode cas = a.frame("ledger_task_update");
            cas.put("task_id", "T1");
            cas.put("status", "done");
            cas.put("expected_version", 5);
            a.send(cas);
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("version_conflict");
            cas.put("expected_version", 1);
            a.send(cas);
            ObjectNode updated = a.awaitType("ledger_task_updated", WAIT);
            assertThat(updated.path("task").path("version").asLong()).isEqualTo(2);
            ObjectNode note = a.frame("ledger_progress");
            note.put("task_id", "T1");
            note.put("payload", "done and dusted");
            note.put("kind", "assessment");
            a.send(note);
            ObjectNode n = b.awaitType("ledger_progress_posted", WAIT);
            assertThat(n.path("note").path("text").asText()).isEqualTo("done and dusted");
            a.send(a.frame("board_request"));
            JsonNode board = a.awaitType("board_snapshot", WAIT).path("board");
            assertThat(board.path("tasks")).hasSize(2);
            assertThat(board.path("ready").toString()).isEqualTo("[\"T2\"]");
            assertThat(board.path("progress")).hasSize(1);
        }
    }

    @Test
    void resourcesAndCapabilityCards() throws Exception {
        try (TestHub hub = TestHub.open()) {
            HubClient a = hub.agent("p/alpha");
            HubClient b = hub.agent("p/beta");
            ObjectNode r = a.frame("resource");
            r.put("kind", "gpu");
            r.put("name", "a100");
            r.putObject("meta").put("region", "eu");
            a.send(r);
            ObjectNode offered = b.awaitType("resource_offered", WAIT);
            assertThat(offered.path("key").asText()).isEqualTo("p/alpha:gpu:a100");
            JsonNode res = TestHub.state(b).path("snapshot").path("resources").get(0);
            assertThat(res.path("capacity").asInt()).isEqualTo(1);
            assertThat(res.path("meta").path("region").asText()).isEqualTo("eu");
            ObjectNode ad = a.frame("advertise");
            ad.put("description", "builder");
            ad.putArray("skills").add(" java ").add("java").add("").add(3);
            ad.putArray("contracts").addObject().put("task", "build").putObject("inputs").put("x", 1);
            a.send(ad);
            ObjectNode card = b.awaitType("capability_advertised", WAIT);
            assertThat(card.path("card").path("skills").toString()).isEqualTo("[\"java\"]");
            assertThat(card.path("card").path("project").asText()).isEqualTo("p");
            assertThat(card.path("card").path("contracts").get(0).path("task_class").asText()).isEqualTo("build");
            assertThat(card.path("card").path("verification").path("result").asText()).isEqualTo("missing_signature");
            b.send(b.frame("manifest_request"));
            assertThat(b.awaitType("manifest_snapshot", WAIT).path("manifest")).hasSize(1);
            ObjectNode other = b.frame("advertise");
            other.put("agent", "p/alpha");
            b.send(other);
            assertThat(b.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("not_authorised");
            a.close();
            b.await(f -> "left".equals(f.path("event").asText()), WAIT);
            b.send(b.frame("manifest_request"));
            assertThat(b.awaitType("manifest_snapshot", WAIT).path("manifest")).as("dropped on disconnect").isEmpty();
        }
    }

    @Test
    void hostileInputGetsTypedErrorsAndChangesNothing() throws Exception {
        try (TestHub hub = TestHub.journaled(dir.resolve("hostile.db"))) {
            HubClient a = hub.agent("p/alpha");
            String[] frames = {
                "{\"type\":\"ledger_task\",\"task_id\":7,\"title\":\"x\"}",
                "{\"type\":\"ledger_task\",\"task_id\":\"T\",\"title\":[\"x\"]}",
                "{\"type\":\"ledger_task\",\"task_id\":\"T\",\"title\":\"x\",\"depends_on\":\"T0\"}",
                "{\"type\":\"ledger_task\",\"task_id\":\"T\",\"title\":\"x\",\"depends_on\":[1]}",
                "{\"type\":\"ledger_task\",\"task_id\":\"T\",\"title\":\"x\",\"expected_version\":true}",
                "{\"type\":\"ledger_task\",\"task_id\":\"T\",\"title\":\"x\",\"expected_version\":1.5}",
                "{\"type\":\"ledger_task\",\"task_id\":\"T\",\"title\":\"x\",\"expected_version\":\"1\"}",
                "{\"type\":\"ledger_task\",\"task_id\":\"T\",\"title\":\"x\",\"causal_parent\":{\"hub_id\":\"h\"}}",
                "{\"type\":\"ledger_task\",\"task_id\":\"T\",\"title\":\"x\",\"causal_parent\":{\"hub_id\":\"h\",\"seq\":0,\"event_fingerprint\":\"" + "a".repeat(64) + "\"}}",
                "{\"type\":\"ledger_task\",\"task_id\":\"T\",\"title\":\"\"}",
                "{\"type\":\"ledger_task\",\"task_id\":\"T\",\"title\":\"x\",\"idem_key\":5}",
                "{\"type\":\"ledger_task_update\",\"task_id\":\"nope\",\"status\":\"done\"}",
                "{\"type\":\"ledger_task_update\",\"task_id\":\"T\",\"status\":{}}",
                "{\"type\":\"ledger_progress\",\"kind\":\"gossip\",\"text\":\"x\"}",
                "{\"type\":\"ledger_progress\",\"text\":42}",
                "{\"type\":\"resource\",\"name\":\"n\"}",
                "{\"type\":\"resource\",\"kind\":\"k\",\"name\":[]}",
                "{\"type\":\"resource\",\"kind\":\"k\",\"name\":\"n\",\"meta\":[1]}",
                "{\"type\":\"advertise\",\"persist\":\"yes\"}",
                "{\"type\":\"advertise\",\"description\":{}}",
                "{\"type\":\"chat\",\"channel\":5}",
            };
            for (String raw : frames) {
                ObjectNode f = (ObjectNode) new com.fasterxml.jackson.databind.ObjectMapper().readTree(raw);
                f.put("sender", "p/alpha");
                a.send(f);
                ObjectNode e = a.awaitType("error", WAIT);
                assertThat(e.path("target").asText()).as(raw).isIn("p/alpha", "all");
            }
            // silently ignored: acks that are not integers, spoofed or unknown seqs, mailbox not literally true
            for (String raw : List.of("{\"type\":\"ack\",\"seq\":\"3\"}", "{\"type\":\"ack\",\"seq\":1.0}",
                    "{\"type\":\"ack\",\"seq\":true}", "{\"type\":\"ack\",\"seq\":999999}", "{\"type\":\"ack\",\"seq\":-1}",
                    "{\"type\":\"heartbeat\",\"mailbox\":\"true\",\"since_seq\":\"x\"}",
                    "{\"type\":\"heartbeat\",\"mailbox\":true,\"since_seq\":-5,\"mailbox_for\":\"p/root\"}")) {
                ObjectNode f = (ObjectNode) new com.fasterxml.jackson.databind.ObjectMapper().readTree(raw);
                f.put("sender", "p/alpha");
                a.send(f);
            }
            TestHub.assertQuiet(a);
            a.send(a.frame("board_request"));
            JsonNode board = a.awaitType("board_snapshot", WAIT).path("board");
            assertThat(board.path("tasks")).isEmpty();
            assertThat(board.path("progress")).isEmpty();
            JsonNode snap = TestHub.state(a).path("snapshot");
            assertThat(snap.path("resources")).isEmpty();
            assertThat(who(a).path("mailbox_pending").path("p/root").isMissingNode()).isTrue();
            a.send(a.frame("manifest_request"));
            assertThat(a.awaitType("manifest_snapshot", WAIT).path("manifest")).isEmpty();
        }
    }
}
