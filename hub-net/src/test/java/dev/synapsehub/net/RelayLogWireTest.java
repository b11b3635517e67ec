package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.relay.RelayLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --relay-log} (contract A5.2) over real loopback sockets: one line per fanned-out frame
 * (broadcasts, private directed chats, channel chats), never a private frame, mode 0600 in
 * created folders, and the file cut to its last N lines after every N appends.
 */
class RelayLogWireTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final ObjectMapper MAPPER = new ObjectMapper();
    @TempDir
    Path dir;
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private record Hub(HubServer server, URI uri, RelayLog log) {
    }

    private Hub hub(HubConfig.Builder config, Path file, int maxLines) throws Exception {
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        open.add(actor);
        RelayLog log = RelayLog.open(file, maxLines);
        HubServer server = new HubServer(config.host("127.0.0.1").port(0).build(), actor, Clock.system())
                .relayLog(log);
        int port = server.start();
        open.add(server);
        return new Hub(server, URI.create("ws://127.0.0.1:" + port + "/"), log);
    }

    private HubClient agent(Hub hub, String name) throws Exception {
        HubClient c = HubClient.connect(hub.uri(), WAIT);
        open.add(c::close);
        c.register(name, null, WAIT); // welcome comes at connect on an open hub: wait for the binding too
        c.await(f -> "presence_update".equals(f.path("type").asText()) && name.equals(f.path("agent").asText()), WAIT);
        return c;
    }

    /** The file's lines once one matches {@code until} (polled: the log is written off the hub's threads). */
    private static List<JsonNode> linesUntil(Path file, Predicate<JsonNode> until) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            List<JsonNode> lines = new ArrayList<>();
            if (Files.exists(file)) {
                for (String l : Files.readAllLines(file)) {
                    if (!l.isEmpty()) {
                        lines.add(MAPPER.readTree(l));
                    }
                }
            }
            if (lines.stream().anyMatch(until)) {
                return lines;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no matching relay line within " + WAIT + ": " + lines);
            }
            Thread.sleep(20);
        }
    }

    private static Predicate<JsonNode> payload(String text) {
        return l -> text.equals(l.path("p").asText());
    }

    @Test
    void broadcastsAreMirroredPrivateFramesAreNot() throws Exception {
        Path file = dir.resolve("logs/deeper/relay.ndjson");
        Hub hub = hub(HubConfig.builder(), file, RelayLog.DEFAULT_MAX_LINES);
        HubClient alice = agent(hub, "p/alice");
        HubClient bob = agent(hub, "p/bob");
        alice.send(alice.frame("state_request")); // private: never mirrored
        alice.awaitType("state_snapshot", WAIT);
        ObjectNode claim = alice.frame("claim");
        claim.put("task_id", "T1");
        alice.send(claim);
        alice.awaitType("claim_granted", WAIT);
        ObjectNode chat = alice.frame("chat");
        chat.put("target", "all").put("payload", "h\u00e9llo").put("client_msg_id", "c1").put("timestamp", 5.5)
                .put("seq", 1).put("kind", "note");
        alice.send(chat);
        ObjectNode seen = bob.await(f -> "chat".equals(f.path("type").asText()), WAIT);

        List<JsonNode> lines = linesUntil(file, payload("h\u00e9llo"));
        String raw = Files.readString(file);
        assertThat(raw).contains("\"p\":\"h\\u00e9llo\"").doesNotContain("\u00e9"); // ASCII-escaped
        JsonNode line = lines.stream().filter(payload("h\u00e9llo")).findFirst().orElseThrow();
        assertThat(line.path("v").asInt()).isEqualTo(2);
        assertThat(line.path("i").asLong()).isEqualTo(seen.path("msg_id").asLong()).isPositive();
        assertThat(line.path("ty").asText()).isEqualTo("chat");
        assertThat(line.path("s").asText()).isEqualTo("p/alice");
        assertThat(line.path("to").asText()).isEqualTo("all");
        assertThat(line.path("t").asLong()).isEqualTo((long) (seen.path("timestamp").asDouble() * 1000.0));
        assertThat(line.path("h").asText()).isEqualTo(hub.server().config().hubId());
        assertThat(line.path("c").asText()).isEmpty();
        assertThat(line.path("x").path("client_msg_id").asText()).isEqualTo("c1");
        assertThat(line.path("x").path("client_timestamp").asDouble()).isEqualTo(5.5);
        assertThat(line.path("x").path("seq").asInt()).isEqualTo(1);
        assertThat(line.path("x").path("kind").asText()).isEqualTo("note");
        JsonNode granted = lines.stream().filter(l -> "claim_granted".equals(l.path("ty").asText())).findFirst()
                .orElseThrow();
        assertThat(granted.path("i").asLong()).isZero();
        assertThat(granted.path("x").path("task_id").asText()).isEqualTo("T1");
        assertThat(lines).anyMatch(l -> "presence_update".equals(l.path("ty").asText())
                && "p/bob".equals(l.path("x").path("agent").asText()));
        assertThat(lines).noneMatch(l -> List.of("welcome", "state_snapshot").contains(l.path("ty").asText()));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    }

    @Test
    void privateDirectedAndChannelChatsAreMirroredOncePerChat() throws Exception {
        Path file = dir.resolve("relay.ndjson");
        Hub hub = hub(HubConfig.builder().privateDirectedMessages(true), file, RelayLog.DEFAULT_MAX_LINES);
        HubClient alice = agent(hub, "p/alice");
        HubClient bob = agent(hub, "p/bob");
        ObjectNode dm = alice.frame("chat");
        dm.put("target", "p/bob").put("payload", "just you");
        alice.send(dm);
        bob.await(f -> "just you".equals(f.path("payload").asText()), WAIT);
        for (String[] v : new String[][] {{"p/alice", "channel_create", null}, {"p/alice", "channel_invite", "p/bob"},
                {"p/bob", "channel_join", null}}) {
            HubClient c = v[0].equals("p/alice") ? alice : bob;
            ObjectNode f = c.frame(v[1]);
            f.put("channel", "room");
            if (v[2] != null) {
                f.put("invitee", v[2]);
            }
            c.send(f);
            assertThat(c.awaitType("channel_result", WAIT).path("ok").asBoolean()).isTrue();
        }
        ObjectNode inRoom = alice.frame("chat");
        inRoom.put("channel", " room ").put("payload", "members only");
        alice.send(inRoom);
        bob.await(f -> "members only".equals(f.path("payload").asText()), WAIT);

        List<JsonNode> lines = linesUntil(file, payload("members only"));
        assertThat(lines.stream().filter(payload("just you")).toList()).singleElement()
                .satisfies(l -> assertThat(l.path("to").asText()).isEqualTo("p/bob"));
        assertThat(lines.stream().filter(payload("members only")).toList()).singleElement()
                .satisfies(l -> assertThat(l.path("c").asText()).isEqualTo("room"));
        assertThat(lines).noneMatch(l -> "channel_result".equals(l.path("ty").asText()));
    }

    @Test
    void theFileIsCutToItsLastNLinesAfterEveryNAppends() throws Exception {
        Path file = dir.resolve("relay.ndjson");
        Hub hub = hub(HubConfig.builder(), file, 3);
        HubClient alice = agent(hub, "p/alice");
        for (int i = 0; i < 10; i++) {
            ObjectNode chat = alice.frame("chat");
            chat.put("target", "all").put("payload", "m" + i);
            alice.send(chat);
            int n = i;
            alice.await(f -> ("m" + n).equals(f.path("payload").asText()), WAIT);
        }
        List<JsonNode> lines = linesUntil(file, payload("m9"));
        long written = hub.log().written();
        assertThat(written).isGreaterThanOrEqualTo(11); // alice's presence and ten chats
        assertThat(lines).hasSize((int) (3 + written % 3)).hasSizeLessThanOrEqualTo(6);
        List<String> tail = lines.stream().map(l -> l.path("p").asText()).toList();
        assertThat(tail.subList(tail.size() - 3, tail.size())).containsExactly("m7", "m8", "m9");
        assertThat(hub.log().dropped()).isZero();
        assertThat(hub.log().failures()).isZero();
    }
}
