package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** The cockpit's HTTP face against a real hub: page and assets, JSON views, the event stream, the token. */
class CockpitApiTest {
    private static final Duration LIVE = Duration.ofSeconds(10);

    private static TestHub cockpitHub() throws InterruptedException {
        return new TestHub(HubConfig.builder().ui(true));
    }

    private static void claim(HubClient agent, String task, String worktree, String path) throws Exception {
        ObjectNode claim = agent.frame("claim");
        claim.put("task_id", task).put("worktree", worktree).put("ttl_seconds", 600.0);
        claim.putArray("paths").add(path);
        agent.send(claim);
        agent.await(f -> "claim_granted".equals(f.path("type").asText()) && task.equals(f.path("task_id").asText()), WAIT);
    }

    @Test
    void servesThePageAndItsAssetsFromTheJarWithAStrictPolicy() throws Exception {
        try (TestHub hub = cockpitHub(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            HttpResponse<String> page = http.get("/ui/");
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("content-type")).hasValue("text/html; charset=utf-8");
            assertThat(page.body()).contains("synapse-hub cockpit").contains("/ui/app.js").doesNotContain("http://")
                    .doesNotContain("https://");
            assertThat(page.headers().firstValue("content-security-policy").orElseThrow())
                    .contains("script-src 'self'").contains("connect-src 'self'");
            assertThat(http.get("/ui/app.js").headers().firstValue("content-type"))
                    .hasValue("text/javascript; charset=utf-8");
            assertThat(http.get("/ui/app.css").statusCode()).isEqualTo(200);
            HttpResponse<String> bare = http.get("/ui");
            assertThat(bare.statusCode()).isEqualTo(301);
            assertThat(bare.headers().firstValue("location")).hasValue("/ui/");
            HttpResponse<String> missing = http.get("/ui/nothing-here.js");
            assertThat(missing.statusCode()).isEqualTo(404);
            assertThat(CockpitHttp.JSON.readTree(missing.body()).path("error").asText()).isEqualTo("not_found");
            assertThat(http.get("/ui/api/no-such-view").statusCode()).isEqualTo(404);
        }
    }

    @Test
    void aHubWithoutFederationOrMeshHasAnEmptyClusterViewAndNoStalenessLabel() throws Exception {
        try (TestHub hub = cockpitHub(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            JsonNode overview = http.view("/ui/api/overview");
            assertThat(overview.path("cluster").isArray()).isTrue();
            assertThat(overview.path("cluster")).isEmpty();
            assertThat(overview.has("staleness")).as("only a mesh node labels its reads").isFalse();
            assertThat(http.view("/ui/api/cluster").path("panels")).isEmpty();
            JsonNode observed = http.view("/ui/api/observed?q=x");
            assertThat(observed.path("advisory").asBoolean()).isTrue();
            assertThat(observed.path("claims")).isEmpty();
            assertThat(observed.path("total").asInt()).isZero();
            assertThat(http.get("/ui/api/observed?limit=0").statusCode()).isEqualTo(400);
        }
    }

    @Test
    void withoutTheFlagNothingIsServedAtUi() throws Exception {
        try (TestHub hub = TestHub.open(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            for (String path : new String[] {"/ui", "/ui/", "/ui/api/overview", "/ui/app.js", "/ui/api/events"}) {
                HttpResponse<String> r = http.get(path);
                assertThat(r.statusCode()).as(path).isEqualTo(404);
                assertThat(r.body()).as(path).isEqualTo("cockpit disabled (start the hub with --ui)\n");
            }
            String post = HttpGet.raw(hub.port, "POST /ui/api/claims HTTP/1.1\r\nHost: 127.0.0.1:" + hub.port
                    + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            assertThat(post).startsWith("HTTP/1.1 404").endsWith("\r\n\r\ncockpit disabled (start the hub with --ui)\n");
            assertThat(http.get("/elsewhere").statusCode()).as("other paths keep their 426").isEqualTo(426);
        }
    }

    @Test
    void claimsArePagedAndFilteredOnTheServer() throws Exception {
        try (TestHub hub = cockpitHub(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            HubClient alpha = hub.agent("p/alpha");
            HubClient beta = hub.agent("p/beta");
            claim(alpha, "T-1", "repo", "src/a");
            claim(alpha, "T-2", "repo", "src/b");
            claim(beta, "T-3", "other", "docs");

            JsonNode first = http.view("/ui/api/claims?limit=2");
            assertThat(first.path("total").asInt()).isEqualTo(3);
            assertThat(first.path("matched").asInt()).isEqualTo(3);
            assertThat(first.path("claims")).hasSize(2);
            assertThat(first.path("claims").get(0).path("task_id").asText()).isEqualTo("T-1");
            JsonNode c = first.path("claims").get(0);
            assertThat(c.path("owner").asText()).isEqualTo("p/alpha");
            assertThat(c.path("worktree").asText()).isEqualTo("repo");
            assertThat(c.path("paths").get(0).asText()).isEqualTo("src/a");
            assertThat(c.path("epoch").asLong()).isPositive();
            assertThat(c.path("version").asLong()).isZero();
            assertThat(c.path("lease_expires_at").asDouble()).isGreaterThan(first.path("now").asDouble());

            JsonNode second = http.view("/ui/api/claims?limit=2&offset=2");
            assertThat(second.path("claims")).hasSize(1);
            assertThat(second.path("claims").get(0).path("task_id").asText()).isEqualTo("T-3");

            JsonNode byPath = http.view("/ui/api/claims?q=SRC/B");
            assertThat(byPath.path("matched").asInt()).isEqualTo(1);
            assertThat(byPath.path("claims").get(0).path("task_id").asText()).isEqualTo("T-2");
            JsonNode byOwner = http.view("/ui/api/claims?q=p/beta");
            assertThat(byOwner.path("matched").asInt()).isEqualTo(1);
            assertThat(byOwner.path("total").asInt()).isEqualTo(3);
        }
    }

    @Test
    void claimsAndBoardTasksMadeOutOfOrderAreListedByTaskId() throws Exception {
        // the writer hands out unsorted references; the cockpit thread sorts them
        try (TestHub hub = cockpitHub(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            HubClient a = hub.agent("p/alpha");
            for (String task : new String[] {"T-c", "T-a", "T-d", "T-b"}) {
                claim(a, task, "repo", "src/" + task);
            }
            JsonNode claims = http.view("/ui/api/claims");
            List<String> ids = new java.util.ArrayList<>();
            claims.path("claims").forEach(c -> ids.add(c.path("task_id").asText()));
            assertThat(ids).containsExactly("T-a", "T-b", "T-c", "T-d");
            JsonNode page = http.view("/ui/api/claims?offset=1&limit=2");
            assertThat(page.path("claims").get(0).path("task_id").asText()).isEqualTo("T-b");
            assertThat(page.path("claims").get(1).path("task_id").asText()).isEqualTo("T-c");

            for (String[] t : new String[][] {{"B-3", "B-1"}, {"B-1", null}, {"B-2", "B-9"}}) {
                ObjectNode f = a.frame("ledger_task");
                f.put("task_id", t[0]).put("title", "task " + t[0]).put("project", "p");
                if (t[1] != null) {
                    f.putArray("depends_on").add(t[1]);
                }
                a.send(f);
                a.awaitType("ledger_task_posted", WAIT);
            }
            JsonNode open = http.view("/ui/api/board").path("columns").get(0);
            List<String> tasks = new java.util.ArrayList<>();
            List<Boolean> ready = new java.util.ArrayList<>();
            open.path("tasks").forEach(t -> {
                tasks.add(t.path("task_id").asText());
                ready.add(t.path("ready").asBoolean());
            });
            assertThat(tasks).containsExactly("B-1", "B-2", "B-3");
            assertThat(ready).containsExactly(true, false, false);
            assertThat(http.view("/ui/api/board").path("ready").asInt()).isEqualTo(1);
        }
    }

    @Test
    void badPageParametersAreRefusedNamingTheField() throws Exception {
        try (TestHub hub = cockpitHub(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            for (String bad : new String[] {"limit=0", "limit=501", "limit=ten", "offset=-1"}) {
                HttpResponse<String> r = http.get("/ui/api/claims?" + bad);
                assertThat(r.statusCode()).as(bad).isEqualTo(400);
                JsonNode body = CockpitHttp.JSON.readTree(r.body());
                assertThat(body.path("error").asText()).isEqualTo("bad_parameter");
                assertThat(body.path("field").asText()).isEqualTo(bad.substring(0, bad.indexOf('=')));
            }
            assertThat(http.get("/ui/api/claims?q=" + "x".repeat(201)).statusCode()).isEqualTo(400);
        }
    }

    @Test
    void anUnknownParameterOrAnUnusableValueIsRefusedNotIgnored() throws Exception {
        try (TestHub hub = cockpitHub(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            String[][] refused = {
                    {"/ui/api/presence?online=yes", "online"}, {"/ui/api/presence?online=ON", "online"},
                    {"/ui/api/events?kinds=bogus", "kinds"}, {"/ui/api/events?kinds=claim,bogus", "kinds"},
                    {"/ui/api/events?kinds=idempotency", "kinds"}, {"/ui/api/claims?foo=1", "foo"},
                    {"/ui/api/claims?online=1", "online"}, {"/ui/api/overview?q=x", "q"},
                    {"/ui/api/denials?offset=1", "offset"}, {"/ui/api/events?q=x", "q"}};
            for (String[] bad : refused) {
                HttpResponse<String> r = http.get(bad[0]);
                assertThat(r.statusCode()).as(bad[0]).isEqualTo(400);
                JsonNode body = CockpitHttp.JSON.readTree(r.body());
                assertThat(body.path("error").asText()).as(bad[0]).isEqualTo("bad_parameter");
                assertThat(body.path("field").asText()).as(bad[0]).isEqualTo(bad[1]);
            }
            hub.agent("team/one");
            HubClient two = hub.agent("team/two");
            two.close();
            waitFor(http, "/ui/api/presence?online=true", p -> p.path("matched").asInt() == 1);
            for (String all : new String[] {"0", "false"}) {
                assertThat(http.view("/ui/api/presence?online=" + all).path("matched").asInt()).as(all).isEqualTo(2);
            }
            BlockingQueue<JsonNode> events = http.events("?kinds=presence,claim,capability_card_removed");
            CockpitHttp.next(events, e -> e.path("event").asText().equals("hello"), LIVE);
        }
    }

    @Test
    void presenceShowsWhoIsOnlineWithLastSeen() throws Exception {
        try (TestHub hub = cockpitHub(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            hub.agent("team/one");
            HubClient two = hub.agent("team/two");
            two.close();
            JsonNode online = waitFor(http, "/ui/api/presence?online=1", p -> p.path("matched").asInt() == 1);
            assertThat(online.path("agents").get(0).path("name").asText()).isEqualTo("team/one");
            assertThat(online.path("agents").get(0).path("online").asBoolean()).isTrue();
            assertThat(online.path("agents").get(0).path("last_seen").asDouble()).isPositive();
            JsonNode all = http.view("/ui/api/presence?q=TEAM/");
            assertThat(all.path("matched").asInt()).isEqualTo(2);
            assertThat(all.path("agents").get(1).path("online").asBoolean()).isFalse();
            JsonNode overview = http.view("/ui/api/overview");
            assertThat(overview.path("agents_online").asInt()).isEqualTo(1);
            assertThat(overview.path("hub_id").asText()).isEqualTo(hub.server.config().hubId());
        }
    }

    @Test
    void theEventStreamCarriesCommittedChangesAndDenialsAreKept() throws Exception {
        try (TestHub hub = cockpitHub(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            HubClient alpha = hub.agent("p/alpha");
            HubClient beta = hub.agent("p/beta");
            BlockingQueue<JsonNode> events = http.events("");
            JsonNode hello = CockpitHttp.next(events, e -> e.path("event").asText().equals("hello"), LIVE);
            assertThat(hello.path("data").path("now").asDouble()).isPositive();
            // the presence baseline is taken as the stream opens, so it follows hello at once
            JsonNode baseline = events.poll(LIVE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            assertThat(baseline).as("the event after hello").isNotNull();
            assertThat(baseline.path("data").path("baseline").asBoolean()).as(baseline.toString()).isTrue();
            assertThat(baseline.path("data").path("online").asInt()).isEqualTo(2);

            claim(alpha, "T-live", "repo", "src");
            JsonNode granted = CockpitHttp.next(events, e -> e.path("data").path("kind").asText().equals("claim"), LIVE);
            assertThat(granted.path("event").asText()).isEqualTo("change");
            assertThat(granted.path("data").path("claim").path("task_id").asText()).isEqualTo("T-live");
            assertThat(granted.path("data").path("claim").path("owner").asText()).isEqualTo("p/alpha");
            assertThat(granted.path("data").path("seq").asLong()).isPositive();

            ObjectNode conflicting = beta.frame("claim");
            conflicting.put("task_id", "T-other").put("worktree", "repo");
            conflicting.putArray("paths").add("src/x");
            beta.send(conflicting);
            beta.awaitType("claim_denied", WAIT);
            JsonNode denial = CockpitHttp.next(events, e -> e.path("data").path("kind").asText().equals("claim_denial"),
                    LIVE);
            assertThat(denial.path("data").path("denial").path("claimant").asText()).isEqualTo("p/beta");
            assertThat(denial.path("data").path("denial").path("reason").asText()).isEqualTo("SCOPE_CONFLICT");
            assertThat(denial.toString()).as("a denial keeps the task only as a digest").doesNotContain("T-other");
            JsonNode kept = http.view("/ui/api/denials");
            assertThat(kept.path("denials").get(0).path("claimant").asText()).isEqualTo("p/beta");

            ObjectNode release = alpha.frame("release");
            release.put("task_id", "T-live");
            alpha.send(release);
            JsonNode released = CockpitHttp.next(events, e -> e.path("data").path("kind").asText().equals("release"),
                    LIVE);
            assertThat(released.path("data").path("task_id").asText()).isEqualTo("T-live");
            hub.agent("p/gamma");
            JsonNode joined = CockpitHttp.next(events, e -> e.path("event").asText().equals("presence"), LIVE);
            assertThat(joined.path("data").path("joined").get(0).path("name").asText()).isEqualTo("p/gamma");
            assertThat(joined.path("data").path("online").asInt()).isEqualTo(3);

            JsonNode recent = http.view("/ui/api/recent?q=t-live");
            assertThat(recent.path("changes")).hasSizeGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void afterARestartHelloAndTheOverviewGiveTheSeqTheJournalReached(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        long reached;
        try (TestHub hub = new TestHub(HubConfig.builder().ui(true), db, CoordinationState::new);
             CockpitHttp http = new CockpitHttp(hub.port, null)) {
            HubClient alpha = hub.agent("p/alpha");
            BlockingQueue<JsonNode> events = http.events("");
            CockpitHttp.next(events, e -> e.path("event").asText().equals("hello"), LIVE);
            claim(alpha, "T-1", "repo", "a");
            claim(alpha, "T-2", "repo", "b");
            JsonNode second = CockpitHttp.next(events, e -> e.path("data").path("kind").asText().equals("claim")
                    && e.path("data").path("claim").path("task_id").asText().equals("T-2"), LIVE);
            reached = second.path("data").path("seq").asLong();
            assertThat(reached).isGreaterThanOrEqualTo(2);
        }
        try (TestHub hub = new TestHub(HubConfig.builder().ui(true), db, CoordinationState::new);
             CockpitHttp http = new CockpitHttp(hub.port, null)) {
            // nothing is committed after the restart: the seq can only come from the journal
            JsonNode hello = CockpitHttp.next(http.events(""), e -> e.path("event").asText().equals("hello"), LIVE);
            assertThat(hello.path("data").path("seq").asLong()).isEqualTo(reached);
            assertThat(http.view("/ui/api/overview").path("feed").path("last_seq").asLong()).isEqualTo(reached);
        }
    }

    @Test
    void aStreamCanAskForSomeKindsOnly() throws Exception {
        try (TestHub hub = cockpitHub(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            BlockingQueue<JsonNode> events = http.events("?kinds=release");
            CockpitHttp.next(events, e -> e.path("event").asText().equals("hello"), LIVE);
            HubClient alpha = hub.agent("p/alpha");
            claim(alpha, "T-1", "repo", "src");
            ObjectNode release = alpha.frame("release");
            release.put("task_id", "T-1");
            alpha.send(release);
            JsonNode first = CockpitHttp.next(events, e -> e.path("event").asText().equals("change"), LIVE);
            assertThat(first.path("data").path("kind").asText()).as("the claim itself was filtered out").isEqualTo("release");
        }
    }

    @Test
    void boardColumnsAndMailboxes() throws Exception {
        try (TestHub hub = cockpitHub(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            HubClient a = hub.agent("p/alpha");
            ObjectNode t1 = a.frame("ledger_task");
            t1.put("task_id", "B-1").put("title", "Build the parser").put("project", "p");
            a.send(t1);
            a.awaitType("ledger_task_posted", WAIT);
            ObjectNode t2 = a.frame("ledger_task");
            t2.put("task_id", "B-2").put("title", "Test it").put("project", "p");
            t2.putArray("depends_on").add("B-1");
            a.send(t2);
            a.awaitType("ledger_task_posted", WAIT);
            JsonNode board = http.view("/ui/api/board");
            JsonNode open = board.path("columns").get(0);
            assertThat(open.path("status").asText()).isEqualTo("open");
            assertThat(open.path("matched").asInt()).isEqualTo(2);
            assertThat(open.path("tasks").get(0).path("ready").asBoolean()).isTrue();
            assertThat(open.path("tasks").get(1).path("ready").asBoolean()).as("waits for B-1").isFalse();
            assertThat(open.path("tasks").get(1).path("depends_on").get(0).asText()).isEqualTo("B-1");
            assertThat(http.view("/ui/api/board?q=parser").path("columns").get(0).path("matched").asInt()).isEqualTo(1);

            ObjectNode chat = a.frame("chat");
            chat.put("target", "p/away");
            chat.put("payload", "for someone who is not here");
            a.send(chat);
            a.awaitType("chat", WAIT);
            JsonNode mail = waitFor(http, "/ui/api/messaging", m -> m.path("dead_letters").size() == 1);
            assertThat(mail.path("dead_letters").get(0).path("target").asText()).isEqualTo("p/away");
            assertThat(mail.path("dead_letters").get(0).path("last_sender").asText()).isEqualTo("p/alpha");
            assertThat(mail.toString()).as("no message bodies in the cockpit").doesNotContain("not here");

            // a virtualised column pages through its own rows only; the lists page from an offset
            JsonNode column = http.view("/ui/api/board?status=open&offset=1&limit=1");
            assertThat(column.path("columns").get(0).path("matched").asInt()).isEqualTo(2);
            assertThat(column.path("columns").get(0).path("tasks")).hasSize(1);
            assertThat(column.path("columns").get(0).path("tasks").get(0).path("task_id").asText()).isEqualTo("B-2");
            HttpResponse<String> noColumn = http.get("/ui/api/board?status=claimed");
            assertThat(noColumn.statusCode()).isEqualTo(400);
            assertThat(CockpitHttp.JSON.readTree(noColumn.body()).path("field").asText()).isEqualTo("status");
            JsonNode past = http.view("/ui/api/messaging?offset=1");
            assertThat(past.path("dead_letters")).isEmpty();
            assertThat(past.path("dead_letters_matched").asInt()).isEqualTo(1);
            assertThat(past.path("dead_letters_total").asInt()).isEqualTo(1);
        }
    }

    @Test
    void aHubWithoutAJournalHasNoMailboxAsWhoSays() throws Exception {
        try (TestHub hub = cockpitHub(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            HubClient alice = hub.agent("proj/alice");
            HubClient bob = hub.agent("proj/bob");
            ObjectNode chat = alice.frame("chat");
            chat.put("target", "proj/bob").put("payload", "read live").put("receipt_requested", true);
            alice.send(chat);
            bob.awaitType("chat", WAIT);
            assertThat(alice.awaitType("delivery_receipt", WAIT).path("delivered").asBoolean()).isTrue();
            alice.send(alice.frame("who_request"));
            assertThat(alice.awaitType("who_snapshot", WAIT).path("mailbox_pending").isNull()).isTrue();

            JsonNode overview = http.view("/ui/api/overview");
            assertThat(overview.path("journaled").asBoolean()).isFalse();
            assertThat(overview.path("mailbox_backlog").isNull()).as(overview.toString()).isTrue();
            JsonNode bobRow = http.view("/ui/api/presence?q=proj/bob").path("agents").get(0);
            assertThat(bobRow.path("mailbox_pending").isNull()).as(bobRow.toString()).isTrue();
            JsonNode mail = http.view("/ui/api/messaging");
            assertThat(mail.path("backlogs")).isEmpty();
            assertThat(mail.path("backlogs_total").asInt()).isZero();
        }
    }

    @Test
    void aJournaledHubCountsTheMailboxOfAnAbsentSeat() throws Exception {
        InMemoryJournal journal = new InMemoryJournal();
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), journal, Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        try (TestHub hub = new TestHub(HubConfig.builder().ui(true), actor, Clock.system(), journal);
             CockpitHttp http = new CockpitHttp(hub.port, null)) {
            HubClient alice = hub.agent("proj/alice");
            ObjectNode chat = alice.frame("chat");
            chat.put("target", "proj/away").put("payload", "for later");
            alice.send(chat);
            alice.awaitType("chat", WAIT); // the sender's echo: committed
            assertThat(http.view("/ui/api/overview").path("mailbox_backlog").asInt()).isEqualTo(1);
            assertThat(http.view("/ui/api/presence?q=proj/alice").path("agents").get(0).path("mailbox_pending").asInt())
                    .isZero();
            JsonNode mail = http.view("/ui/api/messaging");
            assertThat(mail.path("backlogs").get(0).path("identity").asText()).isEqualTo("proj/away");
            assertThat(mail.path("backlogs").get(0).path("pending").asInt()).isEqualTo(1);
        }
    }

    @Test
    void persistentCardsAreListedAndTheirRegistrationAndRemovalAreStreamed() throws Exception {
        try (TestHub hub = cockpitHub(); CockpitHttp http = new CockpitHttp(hub.port, null)) {
            BlockingQueue<JsonNode> events = http.events("");
            CockpitHttp.next(events, e -> e.path("event").asText().equals("hello"), LIVE);
            HubClient seat = hub.agent("p/seat");
            ObjectNode ad = seat.frame("advertise");
            ad.put("description", "reviewer").put("model", "m-1").put("persist", true).put("dispatchable", false);
            ad.putArray("skills").add("review");
            ad.putObject("meta").put("note", "kept out of the cockpit");
            seat.send(ad);
            seat.awaitType("capability_advertised", WAIT);
            JsonNode added = CockpitHttp.next(events, e -> e.path("data").path("kind").asText().equals("capability_card"),
                    LIVE).path("data");
            assertThat(added.path("agent").asText()).isEqualTo("p/seat");
            assertThat(added.path("card").path("skills").get(0).asText()).isEqualTo("review");
            assertThat(added.path("card").path("signature_status").asText()).isEqualTo("missing_signature");
            assertThat(added.path("card").path("dispatchable").asBoolean()).isFalse();

            JsonNode cards = http.view("/ui/api/cards");
            assertThat(cards.path("total").asInt()).isEqualTo(1);
            assertThat(cards.path("cards").get(0).path("agent").asText()).isEqualTo("p/seat");
            assertThat(cards.path("cards").get(0).path("model").asText()).isEqualTo("m-1");
            assertThat(cards.toString()).as("only the card's summary").doesNotContain("kept out of the cockpit");
            assertThat(http.view("/ui/api/cards?q=review").path("matched").asInt()).isEqualTo(1);
            assertThat(http.view("/ui/api/cards?q=nobody").path("matched").asInt()).isZero();

            seat.send(seat.frame("card_remove"));
            seat.awaitType("card_removed", WAIT);
            JsonNode removed = CockpitHttp.next(events,
                    e -> e.path("data").path("kind").asText().equals("capability_card_removed"), LIVE).path("data");
            assertThat(removed.path("agent").asText()).as("the stream says whose card went").isEqualTo("p/seat");
            assertThat(http.view("/ui/api/cards").path("cards")).isEmpty();
        }
    }

    @Test
    void aTokenHubRefusesTheApiWithoutTheTokenAndNeverTakesItFromTheUrl() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().token("sekrit").ui(true));
             CockpitHttp none = new CockpitHttp(hub.port, null);
             CockpitHttp wrong = new CockpitHttp(hub.port, "guess");
             CockpitHttp right = new CockpitHttp(hub.port, "sekrit")) {
            assertThat(none.get("/ui/").statusCode()).as("the page carries no data").isEqualTo(200);
            long failuresBefore = hub.server.services().metrics().authFailures.get();
            for (String view : new String[] {"overview", "claims", "presence", "board", "messaging", "denials", "recent",
                    "events"}) {
                HttpResponse<String> refused = none.get("/ui/api/" + view);
                assertThat(refused.statusCode()).as(view).isEqualTo(401);
                assertThat(refused.headers().firstValue("www-authenticate").orElseThrow()).startsWith("Bearer");
                assertThat(CockpitHttp.JSON.readTree(refused.body()).path("error").asText()).isEqualTo("token_required");
            }
            HttpResponse<String> bad = wrong.get("/ui/api/overview");
            assertThat(bad.statusCode()).isEqualTo(401);
            assertThat(CockpitHttp.JSON.readTree(bad.body()).path("error").asText()).isEqualTo("invalid_token");
            assertThat(bad.body()).doesNotContain("sekrit");
            assertThat(hub.server.services().metrics().authFailures.get() - failuresBefore)
                    .as("each 401 counted as an auth failure").isEqualTo(9);
            HttpResponse<String> inUrl = none.get("/ui/api/overview?token=sekrit");
            assertThat(inUrl.statusCode()).isEqualTo(400);
            assertThat(CockpitHttp.JSON.readTree(inUrl.body()).path("error").asText()).isEqualTo("token_in_url");
            assertThat(right.view("/ui/api/overview").path("secured").asBoolean()).isTrue();
            BlockingQueue<JsonNode> events = right.events("");
            CockpitHttp.next(events, e -> e.path("event").asText().equals("hello"), LIVE);
        }
    }

    @Test
    void aTokenInTheUrlIsRefusedOnEveryPathNamingItsParameter() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().token("sekrit").ui(true));
             CockpitHttp none = new CockpitHttp(hub.port, null)) {
            for (String field : new String[] {"token", "access_token", "Token", "ACCESS_TOKEN", "Access_Token"}) {
                for (String path : new String[] {"/ui", "/ui/", "/ui/index.html", "/ui/app.js", "/ui/api/overview",
                        "/ui/api/events"}) {
                    String url = path + "?q=x&" + field + "=sekrit";
                    HttpResponse<String> r = none.get(url);
                    assertThat(r.statusCode()).as(url).isEqualTo(400);
                    JsonNode body = CockpitHttp.JSON.readTree(r.body());
                    assertThat(body.path("error").asText()).as(url).isEqualTo("token_in_url");
                    assertThat(body.path("field").asText()).as(url).isEqualTo(field);
                    assertThat(r.body()).doesNotContain("sekrit");
                }
            }
        }
    }

    @Test
    void aForeignOriginAndWritesAreRefused() throws Exception {
        try (TestHub hub = cockpitHub()) {
            String foreign = HttpGet.raw(hub.port, "GET /ui/api/overview HTTP/1.1\r\nHost: 127.0.0.1:" + hub.port
                    + "\r\nOrigin: http://evil.example\r\nConnection: close\r\n\r\n");
            assertThat(foreign).startsWith("HTTP/1.1 403");
            String same = HttpGet.raw(hub.port, "GET /ui/api/overview HTTP/1.1\r\nHost: 127.0.0.1:" + hub.port
                    + "\r\nOrigin: http://127.0.0.1:" + hub.port + "\r\nConnection: close\r\n\r\n");
            assertThat(same).startsWith("HTTP/1.1 200");
            String rebound = HttpGet.raw(hub.port, "GET /ui/api/overview HTTP/1.1\r\nHost: attacker.example\r\n"
                    + "Connection: close\r\n\r\n");
            assertThat(rebound).startsWith("HTTP/1.1 403");
            String post = HttpGet.raw(hub.port, "POST /ui/api/claims HTTP/1.1\r\nHost: 127.0.0.1:" + hub.port
                    + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            assertThat(post).startsWith("HTTP/1.1 405");
        }
    }

    static JsonNode waitFor(CockpitHttp http, String view, java.util.function.Predicate<JsonNode> done) throws Exception {
        long deadline = System.nanoTime() + LIVE.toNanos();
        JsonNode last = null;
        for (int i = 0; i < 1000 && System.nanoTime() < deadline; i++) {
            last = http.view(view);
            if (done.test(last)) {
                return last;
            }
            Thread.sleep(20);
        }
        throw new AssertionError(view + " never matched; last: " + last);
    }
}
