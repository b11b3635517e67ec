package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.board.BoardStatus;
import dev.synapsehub.core.board.BoardTask;
import dev.synapsehub.core.board.NoteKind;
import dev.synapsehub.core.board.ProgressNote;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.GitContext;
import dev.synapsehub.core.command.AckCommand;
import dev.synapsehub.core.command.AgentActivityCommand;
import dev.synapsehub.core.command.ChatCommand;
import dev.synapsehub.core.command.CheckpointCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.LedgerProgressCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.LedgerTaskUpdateCommand;
import dev.synapsehub.core.command.MailboxCursorCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.command.ResourceOfferCommand;
import dev.synapsehub.core.command.TaskUpdateCommand;
import dev.synapsehub.core.event.DeadLetterEscalationEvent;
import dev.synapsehub.core.event.DeliveryReceiptDeferredEvent;
import dev.synapsehub.core.event.DeliveryReceiptExpiredEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.messaging.ChatStamp;
import dev.synapsehub.core.messaging.DirectedChat;
import dev.synapsehub.core.messaging.OnlineAgent;
import dev.synapsehub.core.messaging.ReceiptVerdict;
import dev.synapsehub.core.reply.ActivityReply;
import dev.synapsehub.core.reply.BoardTaskReply;
import dev.synapsehub.core.reply.ChatReply;
import dev.synapsehub.core.reply.MailboxReply;
import dev.synapsehub.core.reply.ProgressNoteReply;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.reply.ResourceOfferReply;
import dev.synapsehub.core.resource.ResourceOffer;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Forwarded mutations and outcomes survive the trip to the leader and back, for every type. */
class MeshCodecTest {
    private final TestEdge edge = new TestEdge();
    private final MutationCodec mutations = new MutationCodec(edge);
    private final OutcomeCodec outcomes = new OutcomeCodec();

    private static final Claim CLAIM = new Claim("T1", "ann", "ann", "note é", 1000.5, 1060.25, ClaimStatus.WORKING,
            "ref", "wt", List.of("a/b", "c"), 3, 2, "cp", new GitContext("feat", "main", "merge"));

    private Command roundTrip(Command c) {
        return mutations.read(MeshJson.tree(MeshJson.bytes(mutations.write(Mutation.of(c))))).command();
    }

    @Test
    void everyPlainCommandRoundTrips() {
        List<Command> commands = List.of(
                new ClaimCommand("ann", "p", "T1", "n", 30.5, "wt", List.of("x/y"), new GitContext("b", null, "manual")),
                new ClaimCommand("ann", "p", "T1", null, Double.NaN, "", List.of(), null),
                new ClaimCommand("ann", "p", "T1", null, null, "/w", List.of("a.txt"), null,
                        new dev.synapsehub.core.scope.PathIdentity("/w", "W", "ns", true,
                                List.of(new dev.synapsehub.core.scope.PathIdentity.Row("a.txt", "/w/a.txt", "ino-1", "")))),
                new dev.synapsehub.core.command.MemoryCommand("ann", dev.synapsehub.core.command.MemoryCommand.Kind.FINDING,
                        "{\"statement\":\"s\"}", 512),
                new dev.synapsehub.core.command.OperatorReleaseCommand("hub-a", "proj", "T1", "{\"applied\":true}"),
                new dev.synapsehub.core.command.OperatorReleaseCommand("hub-c", "proj", "T1", "{\"applied\":true}", "hub-c"),
                new dev.synapsehub.core.command.AuditRecordCommand("ann", "guard_denial", "{\"decision\":\"deny\"}"),
                new ReleaseCommand("ann", "T1", 4L, "assessed"), new ReleaseCommand("ann", "T1", null),
                new TaskUpdateCommand("ann", "T1", "working", "n", "d", 2L, 1L),
                new HandoffCommand("ann", "T1", "bob", true, "bob", "take it", 3L),
                new CheckpointCommand("ann", "T1", "tok", null),
                new LedgerTaskCommand("ann", "B1", "title", "desc", List.of("B0"), "bob", "proj", 1L, "cp"),
                new LedgerTaskUpdateCommand("ann", "B1", "done", null, null, null, null),
                new LedgerProgressCommand("ann", "B1", "note", "text"),
                new ResourceOfferCommand("ann", "gpu", "a100", 2, "{\"x\":1}"),
                new AckCommand("ann", null, List.of("r"), 12, new DirectedChat(12, 3, "bob", "ann", null, "m1")),
                new MailboxCursorCommand("ann", "ann", 7), new AgentActivityCommand("ann"),
                new dev.synapsehub.core.command.ChannelCommand("ann",
                        dev.synapsehub.core.command.ChannelCommand.Op.INVITE, "ops", "bob", null),
                new dev.synapsehub.core.command.ChannelCommand("ann",
                        dev.synapsehub.core.command.ChannelCommand.Op.CREATE, "ops", null, "label"));
        for (Command c : commands) {
            Command back = roundTrip(c);
            if (c instanceof ClaimCommand cc && cc.ttlSeconds() != null && cc.ttlSeconds().isNaN()) {
                assertThat(((ClaimCommand) back).ttlSeconds()).isNaN();
                continue;
            }
            assertThat(back).isEqualTo(c);
        }
    }

    @Test
    void aChatIsForwardedWithoutItsRendererWhichTheEdgeRebuilds() {
        ChatCommand chat = new ChatCommand("ann", "bob", "ops", 12.5, "m1", true,
                List.of(new OnlineAgent("bob", List.of("dev"), true, "direct")), stamp -> "unused");
        ChatCommand back = (ChatCommand) roundTrip(chat);
        assertThat(back.agent()).isEqualTo("ann");
        assertThat(back.online()).isEqualTo(chat.online());
        assertThat(back.clientTimestamp().doubleValue()).isEqualTo(12.5);
        assertThat(back.renderer().render(new ChatStamp(9, 1.0, null, null))).contains("\"msg_id\":9");
    }

    @Test
    void aKeyedMutationKeepsKeyDigestAndContextAndGetsTheEdgesRenderer() {
        TestEdge.Verb verb = new TestEdge.Verb("release");
        Mutation m = new Mutation(new ReleaseCommand("ann", "T1", 1L), new Idempotency("k", "d", (r, at) -> "x"), verb);
        Mutation back = mutations.read(MeshJson.tree(MeshJson.bytes(mutations.write(m))));
        assertThat(back.idempotency().key()).isEqualTo("k");
        assertThat(back.idempotency().requestDigest()).isEqualTo("d");
        assertThat(back.context()).isEqualTo(verb);
        assertThat(back.idempotency().renderer().render(new Reply.Granted(CLAIM, null, "m"), 1.0))
                .contains("\"verb\":\"release\"");
    }

    @Test
    void everyReplyTypeRoundTripsInsideAnOutcome() {
        ProgressNote note = new ProgressNote("B1", "hub", NoteKind.ASSESSMENT, "ok", 10.0);
        List<Reply> replies = List.of(new Reply.Granted(CLAIM, "bob", "granted", note),
                new Reply.Denied("T1", Refusal.SCOPE_CONFLICT, "conflict", "bob", "T2"),
                new BoardTaskReply(new BoardTask("B1", "t", "d", List.of(), BoardStatus.OPEN, "", "", 1, "ann", 1, 2), true),
                new ProgressNoteReply(note),
                new ResourceOfferReply(new ResourceOffer("ann", "gpu", "a", 1, null, 3.0), false),
                new ChatReply(new ChatStamp(4, 5.5, 1.0, "m"), "ann", "bob", "{\"payload\":\"hi\"}", true, true,
                        new ReceiptVerdict(true, List.of("bob"), List.of("bob"), List.of(), "delivered", false,
                                Map.of("bob", "direct")),
                        new DeadLetterEscalationEvent(5.5, "bob", 3, "ann", 3),
                        List.of(new DeliveryReceiptExpiredEvent(5.5, "ann", "bob", 1, 2, "evicted", null))),
                new MailboxReply("ann", 7, true, new DeliveryReceiptDeferredEvent(1, "bob", "ann", 2, 3, List.of("ann"),
                        "ann", null)),
                new ActivityReply("ann", true),
                new dev.synapsehub.core.reply.ChannelReply("ops", true, "joined 'ops'", List.of("ann", "bob")),
                new dev.synapsehub.core.reply.AuditRecordedReply("guard_denial", 42));
        for (Reply r : replies) {
            Outcome o = new Outcome.Decided(r, List.of(new JournaledEvent(7, new ClaimSnapshotEvent(1000.5,
                    ClaimSnapshotEvent.Kind.CLAIM, CLAIM))), "{\"stored\":1}");
            assertThat(outcomes.read(MeshJson.tree(MeshJson.bytes(outcomes.write(o))))).isEqualTo(o);
        }
        for (Outcome o : List.of(new Outcome.Replayed("{}"), new Outcome.IdempotencyConflict("{\"a\":1}"),
                new Outcome.Refused(Outcome.Reason.BUSY, "busy"))) {
            assertThat(outcomes.read(MeshJson.tree(MeshJson.bytes(outcomes.write(o))))).isEqualTo(o);
        }
    }

    @Test
    void aClaimWithoutKeepHeldEncodesByteForByteAsBeforeTheFlagExisted() {
        // the bytes a node of the previous version wrote for these two claims
        assertThat(encoded(new ClaimCommand("ann", "p", "T1", "n \u00e9", 30.5, "wt", List.of("x/y"),
                new GitContext("b", null, "manual"))))
                .isEqualTo("{\"type\":\"ClaimCommand\",\"value\":{\"agent\":\"ann\",\"principal\":\"p\","
                        + "\"taskId\":\"T1\",\"note\":\"n \\u00E9\",\"ttlSeconds\":30.5,\"worktree\":\"wt\","
                        + "\"paths\":[\"x/y\"],\"git\":{\"branch\":\"b\",\"base\":\"main\","
                        + "\"autoReleaseOn\":\"manual\"},\"pathIdentity\":null}}");
        assertThat(encoded(new ClaimCommand("ann", null, "T1", null, null, "", List.of(), null)))
                .isEqualTo("{\"type\":\"ClaimCommand\",\"value\":{\"agent\":\"ann\",\"principal\":null,"
                        + "\"taskId\":\"T1\",\"note\":null,\"ttlSeconds\":null,\"worktree\":\"\",\"paths\":[],"
                        + "\"git\":null,\"pathIdentity\":null}}");
    }

    private static String encoded(Command c) {
        return new String(MeshJson.bytes(new CommandCodec().write(c)), java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void keepHeldSurvivesTheHandOverToTheLeaderAndItsAbsenceStaysAbsent() {
        ClaimCommand plain = new ClaimCommand("proj/a", "federation-peer:hub-a", "T1", null, null, "", List.of("src"),
                null);
        ClaimCommand kept = plain.keepingHeld();
        var written = mutations.write(Mutation.of(kept));
        assertThat(written.toString()).contains("\"keepHeld\":true");
        ClaimCommand back = (ClaimCommand) mutations.read(MeshJson.tree(MeshJson.bytes(written))).command();
        assertThat(back).isEqualTo(kept);
        assertThat(back.answersHeld()).isTrue();

        assertThat(mutations.write(Mutation.of(plain)).toString()).doesNotContain("keepHeld");
        ClaimCommand plainBack = (ClaimCommand) roundTrip(plain);
        assertThat(plainBack).isEqualTo(plain);
        assertThat(plainBack.keepHeld()).isNull();
        assertThat(plainBack.answersHeld()).isFalse();
    }

    @Test
    void anAlreadyHeldAnswerRoundTripsInsideAnOutcomeWithoutEvents() {
        Outcome o = new Outcome.Decided(new Reply.AlreadyHeld(CLAIM, "Task 'T1' already claimed by ann."), List.of(),
                null);
        assertThat(outcomes.read(MeshJson.tree(MeshJson.bytes(outcomes.write(o))))).isEqualTo(o);
    }

    @Test
    void anUnknownTypeIsRefusedNotInstantiated() {
        var json = MeshJson.MAPPER.createObjectNode();
        json.putObject("command").put("type", "java.lang.Runtime");
        assertThatThrownBy(() -> mutations.read(json)).hasMessageContaining("unknown Command type");
    }
}
