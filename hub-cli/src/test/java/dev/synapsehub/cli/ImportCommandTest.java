package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.net.wire.CanonicalJson;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

import static dev.synapsehub.cli.CliTest.run;
import static dev.synapsehub.cli.ReferenceDb.JSON;
import static dev.synapsehub.cli.ReferenceDb.claim;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code synapse-hub import}: a database written as another v2 hub writes it (§12), imported, served, checked over the wire. */
class ImportCommandTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    /** The digest a hub computes for a keyed request (§4.6): what an idempotency record must hold to be replayed. */
    private static String digest(ObjectNode request) throws Exception {
        ObjectNode copy = request.deepCopy();
        for (String volatileMember : List.of("timestamp", "client_timestamp", "auth", "signature", "token")) {
            copy.remove(volatileMember);
        }
        byte[] d = MessageDigest.getInstance("SHA-256").digest(CanonicalJson.write(copy, true)
                .getBytes(StandardCharsets.US_ASCII));
        return HexFormat.of().formatHex(d);
    }

    private static ObjectNode request(String sender, String type) {
        return HubClient.requestFrame(sender, type);
    }

    /** The source: every kind of §12.4 with the odd rows a real log has. Returns the keyed claim request. */
    private static ObjectNode buildSource(Path file, double t) throws Exception {
        ObjectNode keyedClaim = request("proj/alice", "claim");
        keyedClaim.put("task_id", "parser");
        keyedClaim.put("idem_key", "k-parser");
        try (ReferenceDb db = new ReferenceDb(file)) {
            // a kind this hub does not keep comes first: every later event keeps its seq all the same
            db.event(t - 3100, "operator_relay", "{\"action\":\"x\"}");                    // 1
            ObjectNode kickoff = JSON.createObjectNode(); // a broadcast the client sent without a target
            kickoff.put("type", "chat").put("sender", "proj/lead").put("payload", "kickoff, caf\u00e9 \u2615")
                    .put("timestamp", t - 3000).put("hub_id", "syn-old00001").put("msg_id", 1).put("priority", "high");
            db.event(t - 3000, "chat", kickoff);                                             // 2
            ObjectNode parser = claim("parser", "proj/alice", 5, 0, t - 2900, t + 3000, "", "src/parser");
            parser.remove("quota_principal"); // an older log: no principal
            parser.putNull("note");
            db.event(t - 2900, "claim", parser);                                             // 3
            ObjectNode checkpoint = claim("parser", "proj/alice", 5, 1, t - 2900, t + 3000, "step-2", "src/parser");
            db.event(t - 2800, "checkpoint", checkpoint);                                    // 4
            ObjectNode lexer = claim("lexer", "proj/bob", 6, 0, t - 2700, t + 3000, "", "src/lexer");
            lexer.putObject("path_identity").put("version", 1).put("root", "dev:ino");
            lexer.putObject("git").put("branch", "lex").put("base", "").put("auto_release_on", "commit");
            db.event(t - 2700, "claim", lexer);                                              // 5
            db.event(t - 2600, "claim", claim("old", "proj/carol", 9, 1, t - 9000, t - 100, "half-done"));  // 6
            db.event(t - 2500, "claim", claim("gone", "proj/lead", 11, 0, t - 2500, t + 3000, ""));      // 7
            db.event(t - 2400, "release", "{\"task_id\":\"gone\"}");                          // 8
            ObjectNode gpu = JSON.createObjectNode();
            gpu.put("agent", "proj/alice").put("kind", "gpu").put("name", "a100").put("capacity", 2);
            gpu.putObject("meta").put("mem", "80G");
            gpu.put("offered_at", t - 10);
            db.event(t - 10, "resource", gpu);                                               // 9
            ObjectNode design = JSON.createObjectNode();
            design.put("task_id", "design").put("title", "Design").put("description", "").putArray("depends_on");
            design.put("status", "done").put("suggested_owner", "").put("project", "proj").put("version", 2)
                    .put("created_by", "proj/lead").put("created_at", t - 2300).put("updated_at", t - 2200);
            design.putObject("_causal_parent").put("hub_id", "syn-peer").put("seq", 7).put("event_fingerprint",
                    "a".repeat(64));
            db.event(t - 2200, "ledger_task", design);                                       // 10
            ObjectNode build = JSON.createObjectNode();
            build.put("task_id", "build").put("title", "Build").put("description", "").putArray("depends_on").add("design");
            build.put("status", "open").put("suggested_owner", "proj/alice").put("project", "proj").put("version", 1)
                    .put("created_by", "proj/lead").put("created_at", t - 2100).put("updated_at", t - 2100);
            db.event(t - 2100, "ledger_task", build);                                        // 11
            ObjectNode note = JSON.createObjectNode();
            note.put("task_id", "build").put("author", "proj/alice").put("kind", "note").put("text", "started")
                    .put("posted_at", t - 2000);
            db.event(t - 2000, "ledger_progress", note);                                     // 12
            ObjectNode review = JSON.createObjectNode();
            review.put("type", "chat").put("sender", "proj/alice").put("target", "proj/bob").put("payload", "please review")
                    .put("timestamp", t - 1900).put("hub_id", "syn-old00001").put("msg_id", 2).put("client_msg_id", "c-1")
                    .put("receipt_requested", true);
            db.event(t - 1900, "chat", review);                                              // 13
            db.event(t - 1900, "delivery_receipt_requested", "{\"sender\":\"proj/alice\",\"target\":\"proj/bob\","
                    + "\"message_id\":2,\"message_seq\":13,\"client_msg_id\":\"c-1\"}");       // 14
            db.event(t - 1900, "delivery_receipt_immediate", "{\"sender\":\"proj/alice\",\"target\":\"proj/bob\","
                    + "\"message_id\":2,\"message_seq\":13,\"delivered\":false,\"deferred\":false,\"recipients\":[],"
                    + "\"matched_recipients\":[],\"stale_recipients\":[],\"reason\":\"no_online_recipient\","
                    + "\"dead_lettered\":true,\"recipient_wake_capabilities\":{},\"client_msg_id\":\"c-1\"}"); // 15
            ObjectNode status = JSON.createObjectNode();
            status.put("type", "chat").put("sender", "proj/lead").put("target", "proj/carol").put("payload", "status?")
                    .put("timestamp", t - 1800).put("hub_id", "syn-old00001").put("msg_id", 3);
            db.event(t - 1800, "chat", status);                                              // 16
            db.event(t - 1700, "mailbox_watermark", "{\"identity\":\"proj/erin\",\"through_seq\":999,\"source\":\"cursor\"}"); // 17
            ObjectNode stored = JSON.createObjectNode();
            stored.put("sender", "SynapseHub").put("target", "all").put("type", "claim_granted").put("payload", "granted")
                    .put("timestamp", t - 2900).put("hub_id", "syn-old00001").put("task_id", "parser")
                    .put("owner", "proj/alice").put("epoch", 5).put("version", 0);
            ObjectNode idem = JSON.createObjectNode();
            idem.put("key", "proj/alice\u0000claim\u0000k-parser").set("response", stored);
            idem.put("request_digest", digest(keyedClaim)).put("response_sha256", "0".repeat(64))
                    .put("first_event_seq", 3).put("commit_seq", 3);
            db.event(t - 2900, "idempotency", idem);                                         // 18
            db.event(t - 1600, "guard_denial", "{\"digest\":\"x\"}");                        // 19
            db.event(t - 1500, "multihub_partition", "{\"namespace\":\"proj\"}");            // 20
            db.event(t - 1400, "recall", "{\"text\":\"x\"}");                                // 21
            db.event(t - 1300, "claim_denial", "{\"claimant\":\"proj/eve\",\"claimant_sha256\":\"e\","
                    + "\"claimant_truncated\":false,\"decision\":\"deny\",\"path_count\":1,\"reason_code\":\"LEASE_LIVE\","
                    + "\"scope_sha256\":\"s\",\"task_id_sha256\":\"t\"}");                      // 22
            db.event(t - 1200, "some_future_kind", "{}");                                    // 23
            ObjectNode channel = JSON.createObjectNode();
            channel.put("type", "chat").put("sender", "proj/lead").put("target", "proj/bob").put("channel", "ops")
                    .put("payload", "channel only").put("timestamp", t - 1100).put("hub_id", "syn-old00001").put("msg_id", 4);
            db.event(t - 1100, "chat", channel);                                             // 24
            db.sql("INSERT INTO operations VALUES ('proj/alice' || char(0) || 'claim' || char(0) || 'k-parser', '"
                    + digest(keyedClaim) + "', '{}', 'x', 2, 2, " + (t - 2900) + ")");
            db.sql("INSERT INTO operations VALUES ('proj/bob' || char(0) || 'ledger_progress' || char(0) || 'k-note',"
                    + " 'feedface', '{\"type\":\"ledger_progress_posted\"}', 'y', 11, 11, " + (t - 2000) + ")");
            db.sql("INSERT INTO delivery_receipts VALUES (13, 'proj/alice', 'proj/bob', 2, 'c-1', 'pending', NULL, 1,"
                    + " NULL, 15)");
            db.sql("INSERT INTO delivery_receipt_outbox VALUES ('delivery-receipt:13:pending', 13, 'immediate',"
                    + " 'proj/alice', '{}', 1, NULL)");
        }
        Files.writeString(file.resolveSibling(file.getFileName() + ".message-auth.db"), "");
        return keyedClaim;
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }

    private static ObjectNode ask(HubClient c, String type, String answer) throws Exception {
        c.send(c.frame(type));
        return c.awaitType(answer, WAIT);
    }

    /** Registers with {@code mailbox: true} and {@code since_seq}, as a mailbox client does. */
    private HubClient mailboxClient(String name, long since) throws Exception {
        HubClient c = HubClient.connect(URI.create(hub.url()), WAIT);
        ObjectNode hb = c.frame(name, "heartbeat");
        hb.put("payload", "online").put("mailbox", true).put("since_seq", since);
        c.send(hb);
        c.awaitType("welcome", WAIT);
        c.send(c.frame(name, "who_request"));
        c.awaitType("who_snapshot", WAIT); // the registration was read
        return c;
    }

    @Test
    void anotherHubsDatabaseComesAcrossAndIsServedAsItWas(@TempDir Path dir) throws Exception {
        double t = System.currentTimeMillis() / 1000.0;
        Path source = dir.resolve("other.db");
        Path target = dir.resolve("hub.db");
        ObjectNode keyedClaim = buildSource(source, t);
        String before = sha256(source);

        CliTest.Run dry = run("import", "--from", source.toString(), "--db", target.toString(), "--dry-run");
        assertThat(dry.code()).as(dry.err()).isEqualTo(ExitCodes.OK);
        assertThat(dry.out()).startsWith("dry run: nothing written.").contains("would carry 21 events");
        assertThat(Files.exists(target)).isFalse();

        CliTest.Run imported = run("import", "--from", source.toString(), "--db", target.toString());
        assertThat(imported.code()).as(imported.err()).isEqualTo(ExitCodes.OK);
        assertThat(imported.out())
                .contains("carried  21 events with their seq numbers")
                .containsPattern("claim +4\\b").containsPattern("chat +4\\b").containsPattern("checkpoint +1\\b")
                .containsPattern("idempotency +1 +\\(from the operations table")
                .containsPattern("guard_denial +1\\b").doesNotContainPattern("guard_denial +1 +audit record") // carried (A3)
                .containsPattern("operator_relay +1 +audit record")
                .contains("24 events (seq 1..24)")
                .containsPattern("recall +1\\b").doesNotContain("participant memory") // carried since issue 14
                .containsPattern("some_future_kind +1 +unknown kind")
                .contains("delivery_receipt_outbox: 1 receipt notification(s) still owed")
                .contains("other.db.message-auth.db: HMAC nonce ledger")
                .contains("1 claim snapshot(s) carried without their path_identity")
                .contains("1 dead letter(s) from receipt verdicts")
                .contains("replays to live claims 2, epoch counter 11");
        assertThat(sha256(source)).as("the source is never modified").isEqualTo(before);
        assertThat(Files.exists(dir.resolve("other.db-wal"))).isFalse();
        assertThat(Files.exists(dir.resolve("other.db-shm"))).isFalse();
        try (Stream<Path> left = Files.list(dir)) {
            assertThat(left.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith(".synapse-import-"));
        }

        hub.start("--port", "0", "--db", target.toString());
        try (HubClient obs = HubClient.connect(URI.create(hub.url()), WAIT);
             HubClient alice = HubClient.connect(URI.create(hub.url()), WAIT)) {
            obs.register("proj/obs", null, WAIT);
            JsonNode snapshot = ask(obs, "state_request", "state_snapshot").path("snapshot");
            JsonNode claims = snapshot.path("active_claims");
            assertThat(claims).hasSize(2);
            assertThat(claims.get(0).path("task_id").asText()).isEqualTo("lexer");
            assertThat(claims.get(0).path("epoch").asLong()).isEqualTo(6);
            assertThat(claims.get(0).path("git").path("branch").asText()).isEqualTo("lex");
            assertThat(claims.get(1).path("task_id").asText()).isEqualTo("parser");
            assertThat(claims.get(1).path("owner").asText()).isEqualTo("proj/alice");
            assertThat(claims.get(1).path("epoch").asLong()).isEqualTo(5);
            assertThat(claims.get(1).path("version").asLong()).isEqualTo(1);
            assertThat(claims.get(1).path("checkpoint").asText()).isEqualTo("step-2");
            assertThat(claims.get(1).path("note").asText()).isEmpty();
            assertThat(snapshot.path("resources").toString()).contains("\"name\":\"a100\"").contains("\"capacity\":2")
                    .contains("80G");
            JsonNode dead = snapshot.path("dead_letters");
            assertThat(dead).hasSize(1);
            assertThat(dead.get(0).path("target").asText()).isEqualTo("proj/bob");
            assertThat(dead.get(0).path("last_sender").asText()).isEqualTo("proj/alice");

            JsonNode board = ask(obs, "board_request", "board_snapshot").path("board");
            assertThat(board.path("ready").toString()).isEqualTo("[\"build\"]");
            assertThat(board.path("tasks").toString()).contains("\"task_id\":\"design\"").contains("\"status\":\"done\"");
            assertThat(board.path("progress").toString()).contains("started");
            JsonNode pending = ask(obs, "who_request", "who_snapshot").path("mailbox_pending");
            assertThat(pending.path("proj/bob").asInt()).isEqualTo(1);
            assertThat(pending.path("proj/carol").asInt()).isEqualTo(1);
            assertThat(ask(obs, "history_request", "history_snapshot").path("history").toString())
                    .contains("kickoff, caf\u00e9 \u2615").contains("\"priority\":\"high\"");

            // counters continue above what was imported: epochs above the largest (11, a released task), msg_ids above 4
            ObjectNode fresh = obs.frame("claim");
            fresh.put("task_id", "fresh").put("worktree", "elsewhere");
            obs.send(fresh);
            assertThat(obs.awaitType("claim_granted", WAIT).path("epoch").asLong()).isEqualTo(12);
            ObjectNode old = obs.frame("claim");
            old.put("task_id", "old").put("worktree", "old-tree");
            obs.send(old);
            JsonNode inherited = obs.await(f -> "claim_granted".equals(f.path("type").asText())
                    && "old".equals(f.path("task_id").asText()), WAIT);
            assertThat(inherited.path("checkpoint").asText()).as("an expired claim's checkpoint passes on").isEqualTo("half-done");
            ObjectNode hello = obs.frame("chat");
            hello.put("target", "all").put("payload", "hello");
            obs.send(hello);
            assertThat(obs.awaitType("chat", WAIT).path("msg_id").asLong()).isEqualTo(5);

            // an idempotency record survives with its digest: the same keyed request is answered from it
            alice.register("proj/alice", null, WAIT);
            alice.clearPending(); // the broadcasts it saw before registering
            alice.send(keyedClaim);
            JsonNode replayed = alice.await(f -> (f.path("type").asText().startsWith("claim_")
                    && "parser".equals(f.path("task_id").asText())) || "error".equals(f.path("type").asText()), WAIT);
            assertThat(replayed.path("type").asText()).as(replayed.toString()).isEqualTo("claim_granted");
            assertThat(replayed.path("hub_id").asText()).isEqualTo("syn-old00001");
            ObjectNode changed = keyedClaim.deepCopy();
            changed.put("note", "something else");
            alice.send(changed);
            assertThat(alice.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("idempotency_conflict");

            // mailboxes: the directed backlog is replayed with its original seqs; the ack settles the pending receipt
            try (HubClient bob = mailboxClient("proj/bob", 0)) {
                JsonNode review = bob.await(f -> "chat".equals(f.path("type").asText())
                        && f.path("replayed").asBoolean(), WAIT);
                assertThat(review.path("seq").asLong()).isEqualTo(13);
                assertThat(review.path("payload").asText()).isEqualTo("please review");
                ObjectNode ack = bob.frame("proj/bob", "ack");
                ack.put("seq", 13);
                bob.send(ack);
                JsonNode receipt = alice.awaitType("delivery_receipt", WAIT);
                assertThat(receipt.path("message_seq").asLong()).isEqualTo(13);
                assertThat(receipt.path("deferred").asBoolean()).isTrue();
                assertThat(receipt.path("delivered").asBoolean()).isTrue();
                assertThat(bob.pending()).noneMatch(f -> "channel only".equals(f.path("payload").asText()));
                // the operations row without an event came across too
                ObjectNode note = bob.frame("proj/bob", "ledger_progress");
                note.put("text", "x").put("idem_key", "k-note");
                bob.send(note);
                assertThat(bob.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("idempotency_conflict");
            }
            try (HubClient carol = mailboxClient("proj/carol", 0)) {
                JsonNode statusChat = carol.await(f -> "chat".equals(f.path("type").asText())
                        && f.path("replayed").asBoolean(), WAIT);
                assertThat(statusChat.path("seq").asLong()).isEqualTo(16);
            }
        }
    }

    @Test
    void aSourceThatIsNotAnotherHubsDatabaseIsRefusedAndNothingIsWritten(@TempDir Path dir) throws Exception {
        Path target = dir.resolve("hub.db");
        Path text = dir.resolve("notes.txt");
        Files.writeString(text, "not a database");
        CliTest.Run notSqlite = run("import", "--from", text.toString(), "--db", target.toString());
        assertThat(notSqlite.code()).isEqualTo(ExitCodes.DATA_ERROR);
        assertThat(notSqlite.err()).contains("not an SQLite database");

        Path foreign = dir.resolve("foreign.db");
        try (var c = DriverManager.getConnection("jdbc:sqlite:" + foreign); var s = c.createStatement()) {
            s.execute("CREATE TABLE notes (id INTEGER, body TEXT)");
        }
        CliTest.Run unknown = run("import", "--from", foreign.toString(), "--db", target.toString());
        assertThat(unknown.code()).isEqualTo(ExitCodes.DATA_ERROR);
        assertThat(unknown.err()).contains("not a v2 hub database");

        Path ours = dir.resolve("ours.db");
        SqliteJournal.open(ours).close();
        CliTest.Run own = run("import", "--from", ours.toString(), "--db", target.toString());
        assertThat(own.code()).isEqualTo(ExitCodes.DATA_ERROR);
        assertThat(own.err()).contains("already a synapse-hub journal");

        Path corrupt = dir.resolve("corrupt.db");
        double t = System.currentTimeMillis() / 1000.0;
        try (ReferenceDb db = new ReferenceDb(corrupt)) {
            db.event(t, "claim", claim("a", "proj/x", 1, 0, t, t + 600, ""));
            db.event(t, "claim", "{\"task_id\": \"b\", \"owner\": ");
            db.event(t, "ledger_progress", "{\"author\":\"proj/x\",\"kind\":\"gossip\",\"text\":\"?\"}");
        }
        CliTest.Run damaged = run("import", "--from", corrupt.toString(), "--db", target.toString());
        assertThat(damaged.code()).isEqualTo(ExitCodes.DATA_ERROR);
        assertThat(damaged.err()).contains("2 event row(s) cannot be decoded").contains("seq 2 (claim)")
                .contains("seq 3 (ledger_progress)").contains("--skip-corrupt");
        assertThat(Files.exists(target)).as("a refusal writes nothing").isFalse();
        try (Stream<Path> left = Files.list(dir)) {
            assertThat(left.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith(".synapse-import-"));
        }

        CliTest.Run skipping = run("import", "--from", corrupt.toString(), "--db", target.toString(), "--skip-corrupt");
        assertThat(skipping.code()).as(skipping.err()).isEqualTo(ExitCodes.OK);
        assertThat(skipping.out()).contains("carried  1 events").containsPattern("claim +1 +cannot be decoded")
                .contains("live claims 1");
    }

    /** The reference trims a chat's target with Python's strip, which takes U+00A0 where Java's does not. */
    @Test
    void aDeadLetterWhoseTargetCarriesPythonWhitespaceIsClearedWhenTheTargetActsAfterwards(@TempDir Path dir)
            throws Exception {
        double t = System.currentTimeMillis() / 1000.0;
        Path source = dir.resolve("other.db");
        try (ReferenceDb db = new ReferenceDb(source)) {
            ObjectNode chat = JSON.createObjectNode();
            chat.put("type", "chat").put("sender", "proj/alice").put("target", "proj/bob\u00a0").put("payload", "hi")
                    .put("timestamp", t - 200).put("hub_id", "syn-old00001").put("msg_id", 1).put("client_msg_id", "c-1")
                    .put("receipt_requested", true);
            db.event(t - 200, "chat", chat);                                                  // 1
            db.event(t - 200, "delivery_receipt_immediate", "{\"sender\":\"proj/alice\",\"target\":\"proj/bob\u00a0\","
                    + "\"message_id\":1,\"message_seq\":1,\"delivered\":false,\"deferred\":false,\"recipients\":[],"
                    + "\"matched_recipients\":[],\"stale_recipients\":[],\"reason\":\"no_online_recipient\","
                    + "\"dead_lettered\":true,\"recipient_wake_capabilities\":{},\"client_msg_id\":\"c-1\"}"); // 2
            db.event(t - 100, "mailbox_watermark", "{\"identity\":\"proj/bob\",\"through_seq\":0,\"source\":\"cursor\"}"); // 3
        }
        CliTest.Run dry = run("import", "--from", source.toString(), "--db", dir.resolve("hub.db").toString(), "--dry-run");
        assertThat(dry.code()).as(dry.err()).isEqualTo(ExitCodes.OK);
        assertThat(dry.out()).as("bob acted after the chat to 'proj/bob' + U+00A0: no dead letter")
                .contains("0 dead letter(s) from receipt verdicts");
    }

    @Test
    void aTargetWithHistoryIsKeptUnlessItsReplacementIsAskedFor(@TempDir Path dir) throws Exception {
        Path source = oneClaimSource(dir);
        Path target = dir.resolve("hub.db");
        hub.start("--port", "0", "--db", target.toString());
        try (HubClient c = HubClient.connect(URI.create(hub.url()), WAIT)) {
            c.register("proj/y", null, WAIT);
            ObjectNode claim = c.frame("claim");
            claim.put("task_id", "mine");
            c.send(claim);
            c.awaitType("claim_granted", WAIT);
        }
        hub.close();
        String history = sha256(target);

        CliTest.Run refused = run("import", "--from", source.toString(), "--db", target.toString());
        assertThat(refused.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(refused.err()).contains("already holds a journal with 1 events").contains("--replace-existing");
        assertThat(sha256(target)).isEqualTo(history);

        CliTest.Run replaced = run("import", "--from", source.toString(), "--db", target.toString(), "--replace-existing");
        assertThat(replaced.code()).as(replaced.err()).isEqualTo(ExitCodes.OK);
        assertThat(replaced.out()).contains("moved aside to");
        Path aside;
        try (Stream<Path> files = Files.list(dir)) {
            aside = files.filter(p -> p.getFileName().toString().startsWith("hub.db.replaced-")).findFirst().orElseThrow();
        }
        assertThat(sha256(aside)).as("the old journal is kept, unchanged").isEqualTo(history);
        hub.start("--port", "0", "--db", target.toString());
        try (HubClient c = HubClient.connect(URI.create(hub.url()), WAIT)) {
            c.register("proj/y", null, WAIT);
            JsonNode claims = ask(c, "state_request", "state_snapshot").path("snapshot").path("active_claims");
            assertThat(claims).hasSize(1);
            assertThat(claims.get(0).path("task_id").asText()).isEqualTo("a");
            assertThat(claims.get(0).path("epoch").asLong()).isEqualTo(3);
        }
    }

    @Test
    void aTargetWithASecondNameIsRefusedForThatNotTakenForOneAHubServes(@TempDir Path dir) throws Exception {
        Path source = oneClaimSource(dir);
        Path target = dir.resolve("hub.db");
        hub.start("--port", "0", "--db", target.toString());
        hub.close();
        Files.createLink(dir.resolve("second.db"), target);
        for (String[] args : List.of(new String[] {"--replace-existing"}, new String[] {"--replace-existing",
                "--dry-run"})) {
            CliTest.Run refused = run(Stream.concat(Stream.of("import", "--from", source.toString(), "--db",
                    target.toString()), Stream.of(args)).toArray(String[]::new));
            assertThat(refused.code()).as(refused.out() + refused.err()).isEqualTo(ExitCodes.USAGE);
            assertThat(refused.err()).contains("has 2 names (hard links)").doesNotContain("running hub");
        }
    }

    @Test
    void aTargetARunningHubServesIsRefusedAndTheHubKeepsItsJournal(@TempDir Path dir) throws Exception {
        Path source = oneClaimSource(dir);
        Path target = dir.resolve("hub.db");
        hub.start("--port", "0", "--db", target.toString());
        try (HubClient c = HubClient.connect(URI.create(hub.url()), WAIT)) {
            c.register("proj/y", null, WAIT);
            ObjectNode claim = c.frame("claim");
            claim.put("task_id", "before");
            c.send(claim);
            c.awaitType("claim_granted", WAIT);

            for (String[] args : List.of(new String[] {"--replace-existing"}, new String[] {"--replace-existing",
                    "--dry-run"})) {
                CliTest.Run refused = run(Stream.concat(Stream.of("import", "--from", source.toString(), "--db",
                        target.toString()), Stream.of(args)).toArray(String[]::new));
                assertThat(refused.code()).as(refused.out() + refused.err()).isEqualTo(ExitCodes.USAGE);
                assertThat(refused.err()).contains("a running hub holds its writer lock").contains("Stop that hub first");
            }
            try (Stream<Path> files = Files.list(dir)) {
                assertThat(files.map(p -> p.getFileName().toString()))
                        .as("nothing moved aside").noneMatch(n -> n.startsWith("hub.db.replaced-"));
            }

            ObjectNode after = c.frame("claim"); // granted after the import attempt: must survive a restart
            after.put("task_id", "after");
            c.send(after);
            c.awaitType("claim_granted", WAIT);
        }
        hub.close();
        hub.start("--port", "0", "--db", target.toString());
        try (HubClient c = HubClient.connect(URI.create(hub.url()), WAIT)) {
            c.register("proj/y", null, WAIT);
            JsonNode claims = ask(c, "state_request", "state_snapshot").path("snapshot").path("active_claims");
            assertThat(claims).extracting(n -> n.path("task_id").asText()).containsExactlyInAnyOrder("before", "after");
        }
    }

    /** Another hub's database holding one live claim (task a, proj/x, epoch 3), in {@code dir}. */
    private static Path oneClaimSource(Path dir) throws Exception {
        double t = System.currentTimeMillis() / 1000.0;
        Path source = dir.resolve("other.db");
        try (ReferenceDb db = new ReferenceDb(source)) {
            db.event(t, "claim", claim("a", "proj/x", 3, 0, t, t + 600, ""));
        }
        return source;
    }
}
