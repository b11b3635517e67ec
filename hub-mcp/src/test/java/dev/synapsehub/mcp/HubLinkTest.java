package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The link against a scripted hub on loopback: which frame answers which call when the wire's
 * {@code error} names no request (acks refused meanwhile, a call that timed out), and what an
 * ack round reports.
 */
class HubLinkTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final FakeHub hub = new FakeHub();
    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
        hub.close();
    }

    private HubLink link(Duration timeout) throws Exception {
        return link(timeout, new Inbox(10, null));
    }

    private HubLink link(Duration timeout, Inbox inbox) throws Exception {
        HubLink link = new HubLink(new McpSettings(hub.uri(), "proj/me", null, timeout, McpSettings.DEFAULT_HEARTBEAT,
                10, null), inbox);
        closing.add(0, inbox);
        closing.add(0, link);
        link.start();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!Boolean.TRUE.equals(link.status().get("connected")) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(link.status()).containsEntry("connected", true);
        return link;
    }

    private static ObjectNode claim(String task) {
        ObjectNode f = Frames.request("proj/me", "claim");
        f.put("task_id", task);
        return f;
    }

    private static boolean granted(ObjectNode f, String task) {
        return ("claim_granted".equals(Frames.type(f)) || "claim_denied".equals(Frames.type(f)))
                && task.equals(f.path("task_id").asText());
    }

    private static ObjectNode grant(String task) {
        ObjectNode g = FakeHub.frame("claim_granted");
        g.put("task_id", task);
        g.put("owner", "proj/me");
        return g;
    }

    @Test
    void acksRefusedWhileAClaimWaitsAreNotTakenAsItsAnswer() throws Exception {
        // a rate limit: the first ack of each seq above 3 is refused at once, a later one is taken
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        hub.script(f -> switch (f.path("type").asText()) {
            case "claim" -> List.of(FakeHub.after(300, grant(f.path("task_id").asText())));
            case "ack" -> seen.add(f.path("seq").longValue()) && f.path("seq").longValue() > 3
                    ? List.of(FakeHub.now(FakeHub.error("rate_limited"))) : List.of();
            default -> List.of();
        });
        HubLink link = link(WAIT);
        CompletableFuture<ObjectNode> claimed = CompletableFuture.supplyAsync(() -> {
            try {
                return link.request(claim("T-3"), f -> granted(f, "T-3"));
            } catch (ToolFailure e) {
                throw new IllegalStateException(e);
            }
        });
        hub.next("claim"); // the claim waits for its answer: the inbox acks now
        List<Long> acked = link.ack(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L));

        assertThat(Frames.type(claimed.get(WAIT.toSeconds(), TimeUnit.SECONDS))).isEqualTo("claim_granted");
        assertThat(acked).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L); // each refused one sent again and taken
        assertThat(link.status()).containsEntry("acks_failed", 0L);
    }

    @Test
    void anAckTheHubKeepsRefusingIsCountedAndNotListed() throws Exception {
        hub.script(f -> "ack".equals(f.path("type").asText()) && f.path("seq").longValue() == 5
                ? List.of(FakeHub.now(FakeHub.error("rate_limited"))) : List.of());
        HubLink link = link(Duration.ofMillis(1500));

        assertThat(link.ack(List.of(4L, 5L, 6L))).containsExactly(4L, 6L);
        assertThat(link.status()).containsEntry("acks_failed", 1L);
        // the link is still one call at a time and clean: the next call gets its own answer
        hub.script(f -> "claim".equals(f.path("type").asText()) ? List.of(FakeHub.now(grant("T-1"))) : List.of());
        assertThat(Frames.type(link.request(claim("T-1"), f -> granted(f, "T-1")))).isEqualTo("claim_granted");
    }

    @Test
    void aRefusedFenceIsNotCountedAsARefusedAck() throws Exception {
        AtomicInteger fences = new AtomicInteger();
        hub.script(f -> "resume_request".equals(f.path("type").asText()) && fences.incrementAndGet() == 1
                ? List.of(FakeHub.now(FakeHub.error("rate_limited"))) : List.of());
        HubLink link = link(WAIT);

        assertThat(link.ack(List.of(7L, 9L))).containsExactly(7L, 9L);
        assertThat(link.status()).containsEntry("acks_failed", 0L);
        assertThat(fences.get()).isEqualTo(2);
    }

    @Test
    void theLateAnswerOfACallThatTimedOutIsNotTheNextCallsAnswer() throws Exception {
        AtomicInteger states = new AtomicInteger();
        hub.script(f -> {
            if (!"state_request".equals(f.path("type").asText())) {
                return List.of();
            }
            int n = states.incrementAndGet();
            ObjectNode s = FakeHub.frame("state_snapshot");
            s.put("n", n);
            // the first comes after its call gave up, and before the second call's own answer
            return List.of(FakeHub.after(n == 1 ? 700 : 500, s));
        });
        HubLink link = link(Duration.ofMillis(600));
        ToolFailure first = org.assertj.core.api.Assertions.catchThrowableOfType(() -> link.request(
                Frames.request("proj/me", "state_request"), f -> "state_snapshot".equals(Frames.type(f))),
                ToolFailure.class);
        assertThat(first.type()).isEqualTo("no_answer");

        ObjectNode second = link.request(Frames.request("proj/me", "state_request"),
                f -> "state_snapshot".equals(Frames.type(f)));
        assertThat(second.path("n").asInt()).isEqualTo(2);
    }

    @Test
    void aLateErrorOfACallThatTimedOutIsNotTheNextCallsAnswer() throws Exception {
        AtomicInteger claims = new AtomicInteger();
        hub.script(f -> {
            if (!"claim".equals(f.path("type").asText())) {
                return List.of();
            }
            return claims.incrementAndGet() == 1 ? List.of(FakeHub.after(700, FakeHub.error("busy")))
                    : List.of(FakeHub.after(500, grant(f.path("task_id").asText())));
        });
        HubLink link = link(Duration.ofMillis(600));
        ToolFailure first = org.assertj.core.api.Assertions.catchThrowableOfType(() -> link.request(claim("T-1"),
                f -> granted(f, "T-1")), ToolFailure.class);
        assertThat(first.type()).isEqualTo("no_answer");

        assertThat(Frames.type(link.request(claim("T-2"), f -> granted(f, "T-2")))).isEqualTo("claim_granted");
    }

    @Test
    void aRegistrationTheHubRefusesIsNotRetriedAndSaysWhy() throws Exception {
        for (Object[] refusal : new Object[][] {{4010, "invalid name"}, {4013, "identity pin mismatch"},
                {4009, "name conflict"}, {4016, "name owned"}}) {
            try (FakeHub refusing = new FakeHub().refuse((Integer) refusal[0], (String) refusal[1]);
                 Inbox inbox = new Inbox(10, null);
                 HubLink link = new HubLink(new McpSettings(refusing.uri(), "proj/me", null, WAIT,
                         McpSettings.DEFAULT_HEARTBEAT, 10, null), inbox)) {
                link.start();
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (link.status().get("refused") == null && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertThat((String) link.status().get("refused")).as("%s", refusal[1])
                        .contains(String.valueOf(refusal[0])).contains((String) refusal[1]);
                ToolFailure f = org.assertj.core.api.Assertions.catchThrowableOfType(() -> link.request(
                        Frames.request("proj/me", "who_request"), x -> true), ToolFailure.class);
                assertThat(f.type()).isEqualTo("hub_unavailable");
                assertThat(f.getMessage()).contains("refused");
                assertThat(refusing.connections.get()).as("not retried").isEqualTo(1);
            }
        }
    }

    @Test
    void aHubAtCapacityIsRetried() throws Exception {
        assertRetried(4013, "hub at capacity");
    }

    @Test
    void anAddressInItsAuthBackOffIsRetriedNotTakenForABadToken() throws Exception {
        // the hub's refusal of a first frame while its address waits out --auth-fail-limit's back-off
        assertRetried(4014, "too many failed authentication attempts");
    }

    private void assertRetried(int code, String reason) throws Exception {
        hub.refuse(code, reason);
        Inbox inbox = new Inbox(10, null);
        HubLink link = new HubLink(new McpSettings(hub.uri(), "proj/me", null, WAIT, McpSettings.DEFAULT_HEARTBEAT,
                10, null), inbox);
        closing.add(0, inbox);
        closing.add(0, link);
        link.start();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (hub.connections.get() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(hub.connections.get()).isGreaterThanOrEqualTo(2);
        assertThat(link.status().get("refused")).isNull();
    }

    @Test
    void anAckRoundSendsTheAcksInOrderThenAFence() throws Exception {
        HubLink link = link(WAIT);
        assertThat(link.ack(List.of(3L, 4L))).containsExactly(3L, 4L);
        JsonNode a = hub.next("ack");
        JsonNode b = hub.next("ack");
        JsonNode fence = hub.next("resume_request");
        assertThat(List.of(a.path("seq").asLong(), b.path("seq").asLong())).containsExactly(3L, 4L);
        // above any message id, and exact as a double (a hub may read it as one)
        assertThat(fence.path("since").asLong()).isGreaterThan(HubLink.FENCE_BASE).isLessThan(1L << 53);
        assertThat(link.status()).containsEntry("acks_failed", 0L);
    }

    private static ObjectNode chat(long seq, boolean replayed) {
        ObjectNode c = FakeHub.frame("chat");
        c.put("sender", "proj/other");
        c.put("target", "proj/me");
        c.put("payload", "m" + seq);
        c.put("seq", seq);
        if (replayed) {
            c.put("replayed", true);
        }
        return c;
    }

    private static ObjectNode who(long pending) {
        ObjectNode w = FakeHub.frame("who_snapshot");
        w.putObject("mailbox_pending").put("proj/me", pending);
        return w;
    }

    @Test
    void aLiveChatReadBeforeTheReplayDoesNotMoveTheNextRegistrationPastTheReplayedOne(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path file = dir.resolve("cursor");
        java.nio.file.Files.writeString(file, "100\nhub_id hub-a\n");
        AtomicInteger whos = new AtomicInteger();
        // the first connection: live 150 comes (journaled after the who_request), the replay of 120 never does
        hub.script(f -> "who_request".equals(f.path("type").asText()) && whos.incrementAndGet() == 1
                ? List.of(FakeHub.now(who(1)), FakeHub.now(chat(150, false))) : List.of());
        Inbox inbox = new Inbox(10, file);
        HubLink link = link(WAIT, inbox);
        assertThat(hub.next("heartbeat").path("since_seq").asLong()).isEqualTo(100);
        Inbox.Batch read = inbox.take(10, WAIT.toMillis(), true);
        assertThat(read.items()).extracting(i -> i.path("seq").asLong()).containsExactly(150L);
        assertThat(link.ack(read.acks())).as("an ack of 150 would count 120 read").isEmpty();

        hub.dropConnections();
        JsonNode again = hub.next("heartbeat");
        assertThat(again.path("since_seq").asLong()).as("120 is replayed on the next connection").isEqualTo(100);
        assertThat(hub.received).noneMatch(f -> "ack".equals(f.path("type").asText()));
    }

    @Test
    void aBusyHubRefusingTheRegistrationsWhoRequestIsAskedAgainOnTheSameConnection() throws Exception {
        AtomicInteger whos = new AtomicInteger();
        hub.script(f -> "who_request".equals(f.path("type").asText()) && whos.incrementAndGet() == 1
                ? List.of(FakeHub.now(FakeHub.error("busy"))) : List.of());
        HubLink link = link(Duration.ofSeconds(3)); // connect timeout 3 s: a wait for who_snapshot alone ends there
        assertThat(link.status()).containsEntry("connected", true);
        assertThat(hub.connections.get()).as("bound on the first connection, not closed").isEqualTo(1);
        assertThat(whos.get()).isEqualTo(2);
        assertThat(link.status().get("refused")).isNull();
    }

    @Test
    void anErrorThatAnswersNothingIsNotTakenForAWaitingClaimsAnswer() throws Exception {
        // an error about something else (a refused keepalive, a replay's failure) comes just before the grant
        hub.script(f -> "claim".equals(f.path("type").asText())
                ? List.of(FakeHub.now(FakeHub.error("rate_limited")), FakeHub.now(grant(f.path("task_id").asText())))
                : List.of());
        Inbox inbox = new Inbox(10, null);
        HubLink link = link(WAIT, inbox);
        assertThat(Frames.type(link.request(claim("T-1"), f -> granted(f, "T-1")))).isEqualTo("claim_granted");
        assertThat(inbox.take(10, 0).items()).as("the stray error is kept for the agent")
                .extracting(i -> i.path("kind").asText()).containsExactly("error");
    }

    @Test
    void anErrorThatAnswersTheCallIsItsAnswerOnceTheFenceAfterItIsAnsweredOrRefused() throws Exception {
        hub.script(f -> "claim".equals(f.path("type").asText()) ? List.of(FakeHub.now(FakeHub.error("busy")))
                : List.of());
        HubLink link = link(WAIT);
        ObjectNode answer = link.request(claim("T-1"), f -> granted(f, "T-1"));
        assertThat(answer.path("error_code").asText()).isEqualTo("busy");

        // a hub refusing everything refuses the fence too: that ends the wait as well, long before the timeout
        hub.script(f -> "claim".equals(f.path("type").asText()) || "resume_request".equals(f.path("type").asText())
                ? List.of(FakeHub.now(FakeHub.error("busy"))) : List.of());
        long start = System.nanoTime();
        assertThat(link.request(claim("T-2"), f -> granted(f, "T-2")).path("error_code").asText()).isEqualTo("busy");
        assertThat(System.nanoTime() - start).isLessThan(WAIT.toNanos());
    }

    @Test
    void aSecondErrorThatIsNoFenceRefusalIsTheCallsOwnAnswerAndTheFirstIsFiled() throws Exception {
        // a refused keepalive heartbeat (answers nothing), then the claim's own refusal, both before the fence's snapshot
        hub.script(f -> {
            if (!"claim".equals(f.path("type").asText())) {
                return List.of();
            }
            ObjectNode keepalive = FakeHub.error("rate_limited");
            keepalive.put("payload", "heartbeat refused: rate_limited");
            return List.of(FakeHub.now(keepalive), FakeHub.now(FakeHub.error("invalid_task")));
        });
        Inbox inbox = new Inbox(10, null);
        HubLink link = link(WAIT, inbox);
        ObjectNode answer = link.request(claim("T-1"), f -> granted(f, "T-1"));
        assertThat(answer.path("error_code").asText()).as("the call's own answer").isEqualTo("invalid_task");
        assertThat(inbox.take(10, 0).items()).as("the keepalive's refusal is kept for the agent")
                .extracting(i -> i.path("error_code").asText()).containsExactly("rate_limited");
        // the fence's snapshot, still owed, is not the next call's answer
        hub.script(f -> "claim".equals(f.path("type").asText()) ? List.of(FakeHub.now(grant("T-2"))) : List.of());
        assertThat(Frames.type(link.request(claim("T-2"), f -> granted(f, "T-2")))).isEqualTo("claim_granted");
    }

    @Test
    void theGrantOfAClaimThatTimedOutIsFiledInTheInbox() throws Exception {
        hub.script(f -> "claim".equals(f.path("type").asText())
                ? List.of(FakeHub.after(700, grant(f.path("task_id").asText()))) : List.of());
        Inbox inbox = new Inbox(10, null);
        HubLink link = link(Duration.ofMillis(600), inbox);
        ToolFailure timedOut = org.assertj.core.api.Assertions.catchThrowableOfType(() -> link.request(claim("T-1"),
                f -> granted(f, "T-1")), ToolFailure.class);
        assertThat(timedOut.type()).isEqualTo("no_answer");
        List<ObjectNode> items = inbox.take(10, WAIT.toMillis()).items();
        assertThat(items).extracting(i -> i.path("kind").asText()).containsExactly("claim_granted");
        assertThat(items.get(0).path("task_id").asText()).isEqualTo("T-1");
    }
}
