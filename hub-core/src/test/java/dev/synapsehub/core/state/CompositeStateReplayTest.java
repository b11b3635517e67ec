package dev.synapsehub.core.state;

import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.AckCommand;
import dev.synapsehub.core.command.ChatCommand;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.LedgerProgressCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.ResourceOfferCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.MailboxReply;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

class CompositeStateReplayTest {
    /** A journal that keeps everything, numbering from a configurable start (a log with earlier rows). */
    static final class KeepingJournal implements Journal {
        final List<JournaledEvent> rows = new ArrayList<>();
        long last;

        KeepingJournal(long start) {
            last = start;
        }

        @Override
        public List<JournaledEvent> append(List<CoordinationEvent> batch) {
            List<JournaledEvent> out = new ArrayList<>();
            for (CoordinationEvent e : batch) {
                out.add(new JournaledEvent(++last, e));
            }
            rows.addAll(out);
            return out;
        }

        @Override
        public void replay(Consumer<JournaledEvent> sink) {
            rows.forEach(sink);
        }

        @Override
        public long lastSeq() {
            return last;
        }

        @Override
        public void close() {
        }
    }

    @Test
    void actorCommitsChatUnderTheSeqTheStateExpectedAndReplayRebuildsEverything() throws Exception {
        KeepingJournal journal = new KeepingJournal(41);
        CoordinationState state = new CoordinationState();
        state.replay(journal, 0, n -> { });
        assertThat(state.lastSeq()).isEqualTo(41);
        double[] now = {1000};
        CoordinationActor actor = new CoordinationActor(state, journal, () -> now[0], ActorSettings.DEFAULTS);
        actor.start();
        try {
            actor.submit(Mutation.of(ClaimCommand.of("A", "T1"))).get();
            actor.submit(Mutation.of(LedgerTaskCommand.of("A", "B1", "board task"))).get();
            actor.submit(Mutation.of(new LedgerProgressCommand("A", "B1", "note", "started"))).get();
            actor.submit(Mutation.of(new ResourceOfferCommand("A", "gpu", "g1", 2, "{\"x\":1}"))).get();
            Outcome chat = actor.submit(Mutation.of(new ChatCommand("A", "BOB", null, null, null, true, List.of(),
                    s -> "{\"msg_id\":" + s.msgId() + "}"))).get();
            long chatSeq = ((Outcome.Decided) chat).committed().get(0).seq();
            Outcome acked = actor.submit(Mutation.of(new AckCommand("BOB", null, List.of(), chatSeq, null))).get();
            MailboxReply reply = (MailboxReply) ((Outcome.Decided) acked).reply();
            assertThat(reply.advanced()).isTrue();
            assertThat(reply.deferredReceipt()).isNotNull();
            assertThat(reply.deferredReceipt().messageSeq()).isEqualTo(chatSeq);
        } finally {
            actor.close();
        }
        assertThat(state.lastSeq()).isEqualTo(journal.lastSeq());

        CoordinationState replayed = new CoordinationState();
        replayed.replay(journal, 1000, n -> { });
        assertThat(replayed.lastSeq()).isEqualTo(state.lastSeq());
        assertThat(replayed.claims().snapshot(1000)).isEqualTo(state.claims().snapshot(1000));
        assertThat(replayed.board().snapshot()).isEqualTo(state.board().snapshot());
        assertThat(replayed.resources().snapshot(1000)).isEqualTo(state.resources().snapshot(1000));
        assertThat(replayed.messaging().history(null)).isEqualTo(state.messaging().history(null));
        assertThat(replayed.messaging().watermarks()).isEqualTo(state.messaging().watermarks());
        assertThat(replayed.messaging().mailboxPending()).isEqualTo(state.messaging().mailboxPending())
                .containsEntry("BOB", 0);
        assertThat(replayed.messaging().pendingReceipts()).isEmpty();
        assertThat(replayed.messaging().deadLetters(1000)).isEqualTo(state.messaging().deadLetters(1000));
        assertThat(replayed.messaging().msgCounter()).isEqualTo(1);
    }
}
