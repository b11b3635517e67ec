package dev.synapsehub.core.actor;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.HandoffCommand;
import dev.synapsehub.core.command.ReleaseCommand;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/** The actor's contract in brief: decide, journal, then publish; failures undo the batch. */
class CoordinationActorTest {
    private final CoordinationState state = new CoordinationState();
    private CoordinationActor actor;

    @AfterEach
    void stop() throws Exception {
        if (actor != null) {
            actor.close();
        }
    }

    private CoordinationActor start(Journal journal) {
        actor = new CoordinationActor(state, journal, () -> 1000.0, ActorSettings.DEFAULTS);
        actor.start();
        return actor;
    }

    /** An in-memory journal whose appends fail while {@code fail} is set. */
    private static Journal failing(AtomicBoolean fail) {
        return new TestJournal() {
            @Override
            public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
                if (fail.get()) {
                    throw new JournalException("disk full");
                }
                return super.append(batch);
            }
        };
    }

    private static ClaimCommand claim(String agent, String task) {
        return new ClaimCommand(agent, agent, task, null, null, task, List.of(), null);
    }

    @Test
    void grantIsDecidedCommittedAndVisibleToLaterReads() throws Exception {
        start(new InMemoryJournal());
        Outcome outcome = actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        assertThat(outcome).isInstanceOf(Outcome.Decided.class);
        Outcome.Decided decided = (Outcome.Decided) outcome;
        assertThat(decided.reply().granted()).isTrue();
        assertThat(decided.committed()).extracting(JournaledEvent::seq).containsExactly(1L);
        List<Claim> live = actor.read(s -> s.claims().snapshot(1000.0)).get(5, TimeUnit.SECONDS);
        assertThat(live).extracting(Claim::owner).containsExactly("A");
    }

    @Test
    void failedAppendRefusesTheBatchAndLeavesStateUntouched() throws Exception {
        AtomicBoolean fail = new AtomicBoolean(false);
        start(failing(fail));
        actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        fail.set(true);
        Outcome refused = actor.submit(Mutation.of(new ReleaseCommand("A", "T1", null))).get(5, TimeUnit.SECONDS);
        Outcome refused2 = actor.submit(Mutation.of(claim("B", "T2"))).get(5, TimeUnit.SECONDS);
        assertThat(refused).isEqualTo(new Outcome.Refused(Outcome.Reason.JOURNAL_FAILED,
                "The journal could not commit; nothing was applied."));
        assertThat(refused2).isInstanceOf(Outcome.Refused.class);
        List<Claim> live = actor.read(s -> s.claims().snapshot(1000.0)).get(5, TimeUnit.SECONDS);
        assertThat(live).extracting(Claim::taskId).containsExactly("T1");
        assertThat(actor.read(s -> s.claims().epochCounter()).get(5, TimeUnit.SECONDS)).isEqualTo(1L);
        fail.set(false);
        Outcome later = actor.submit(Mutation.of(claim("B", "T2"))).get(5, TimeUnit.SECONDS);
        assertThat(((Outcome.Decided) later).reply().granted()).isTrue();
    }

    @Test
    void keyedRetryReplaysAndChangedRequestConflicts() throws Exception {
        start(new InMemoryJournal());
        ResponseRenderer renderer = (reply, at) -> "{\"granted\":" + reply.granted() + ",\"task\":\"" + reply.taskId() + "\"}";
        String key = Idempotency.key("A", "claim", "k1");
        Outcome first = actor.submit(new Mutation(claim("A", "T1"), new Idempotency(key, "d1", renderer)))
                .get(5, TimeUnit.SECONDS);
        Outcome retry = actor.submit(new Mutation(claim("A", "T1"), new Idempotency(key, "d1", renderer)))
                .get(5, TimeUnit.SECONDS);
        Outcome changed = actor.submit(new Mutation(claim("A", "T9"), new Idempotency(key, "d2", renderer)))
                .get(5, TimeUnit.SECONDS);
        assertThat(((Outcome.Decided) first).storedResponse()).isEqualTo("{\"granted\":true,\"task\":\"T1\"}");
        assertThat(retry).isEqualTo(new Outcome.Replayed("{\"granted\":true,\"task\":\"T1\"}"));
        assertThat(changed).isEqualTo(new Outcome.IdempotencyConflict("{\"granted\":true,\"task\":\"T1\"}"));
        assertThat(actor.read(s -> s.claims().epochCounter()).get(5, TimeUnit.SECONDS)).isEqualTo(1L);
    }

    @Test
    void deniedKeyedRequestIsNotRemembered() throws Exception {
        start(new InMemoryJournal());
        actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        ResponseRenderer renderer = (reply, at) -> "r";
        String key = Idempotency.key("B", "claim", "k");
        Outcome denied = actor.submit(new Mutation(claim("B", "T1"), new Idempotency(key, "d", renderer)))
                .get(5, TimeUnit.SECONDS);
        assertThat(((Outcome.Decided) denied).reply()).isInstanceOf(Reply.Denied.class);
        assertThat(actor.read(s -> s.idempotency().find(key)).get(5, TimeUnit.SECONDS)).isEmpty();
    }

    @Test
    void aKeyedHandoffRetriedWhileTheRecipientIsOfflineReplaysTheFirstAnswer() throws Exception {
        start(new InMemoryJournal());
        actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        ResponseRenderer renderer = (reply, at) -> "{\"handed\":\"" + reply.taskId() + "\"}";
        Idempotency idem = new Idempotency(Idempotency.key("A", "handoff", "h1"), "d", renderer);
        Outcome first = actor.submit(new Mutation(new HandoffCommand("A", "T1", "B", true, "B", null, null), idem))
                .get(5, TimeUnit.SECONDS);
        assertThat(((Outcome.Decided) first).reply().granted()).isTrue();
        Outcome retry = actor.submit(new Mutation(new HandoffCommand("A", "T1", "B", false, null, null, null), idem))
                .get(5, TimeUnit.SECONDS);
        assertThat(retry).isEqualTo(new Outcome.Replayed("{\"handed\":\"T1\"}"));
        assertThat(actor.priorAnswer(idem.key(), "d")).contains(new Outcome.Replayed("{\"handed\":\"T1\"}"));
        assertThat(actor.priorAnswer(idem.key(), "other")).contains(new Outcome.IdempotencyConflict("{\"handed\":\"T1\"}"));

        // a new key is decided now: an offline recipient is refused and the key is not remembered
        actor.submit(Mutation.of(claim("A", "T2"))).get(5, TimeUnit.SECONDS);
        Idempotency fresh = new Idempotency(Idempotency.key("A", "handoff", "h2"), "d2", renderer);
        Outcome offline = actor.submit(new Mutation(new HandoffCommand("A", "T2", "C", false, null, null, null), fresh))
                .get(5, TimeUnit.SECONDS);
        Reply.Denied denied = (Reply.Denied) ((Outcome.Decided) offline).reply();
        assertThat(denied.refusal()).isEqualTo(Refusal.TARGET_OFFLINE);
        assertThat(denied.message()).isEqualTo("Handoff target 'C' is not online.");
        assertThat(actor.remembers(fresh.key())).isFalse();
    }

    @Test
    void theCommittedLedgerViewShowsOnlyCommittedKeys() throws Exception {
        AtomicBoolean fail = new AtomicBoolean(true);
        start(failing(fail));
        Idempotency idem = new Idempotency(Idempotency.key("A", "claim", "k"), "d", (reply, at) -> "r");
        Outcome refused = actor.submit(new Mutation(claim("A", "T1"), idem)).get(5, TimeUnit.SECONDS);
        assertThat(refused).isInstanceOf(Outcome.Refused.class);
        assertThat(actor.remembers(idem.key())).as("a rolled-back key is never visible").isFalse();
        fail.set(false);
        actor.submit(new Mutation(claim("A", "T1"), idem)).get(5, TimeUnit.SECONDS);
        assertThat(actor.remembers(idem.key())).isTrue();
    }

    @Test
    void afterCloseSubmissionsAreRefused() throws Exception {
        start(new InMemoryJournal());
        actor.close();
        Outcome outcome = actor.submit(Mutation.of(claim("A", "T1"))).get(5, TimeUnit.SECONDS);
        assertThat(outcome).isInstanceOf(Outcome.Refused.class);
        assertThat(((Outcome.Refused) outcome).reason()).isEqualTo(Outcome.Reason.SHUTTING_DOWN);
        actor = null;
    }
}
