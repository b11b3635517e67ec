package dev.synapsehub.core.card;

import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.CardCommand;
import dev.synapsehub.core.command.CardRemoveCommand;
import dev.synapsehub.core.event.CapabilityCardRemovedEvent;
import dev.synapsehub.core.reply.CardRemovedReply;
import dev.synapsehub.core.event.CapabilityCardEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.CardReply;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Persistent capability cards in the core (contract §5.15): journaled, latest wins, bounded, undoable. */
class CardRegistryTest {
    private final List<CoordinationEvent> journal = new ArrayList<>();

    private Decision run(CoordinationState s, String agent, String json, double t) {
        Decision d = s.decide(new CardCommand(agent + "-rx", agent, json), t);
        d.events().forEach(e -> {
            s.apply(e);
            journal.add(e);
        });
        return d;
    }

    @Test
    void aRegistrationIsAnEventAndTheLatestCardPerIdentityWins() {
        CoordinationState s = new CoordinationState();
        Decision d = run(s, "p/seat", "{\"v\":1}", 10);
        assertThat(d.reply()).isEqualTo(new CardReply("p/seat", 10));
        assertThat(d.events()).containsExactly(new CapabilityCardEvent(10, "p/seat", "{\"v\":1}"));
        run(s, "p/other", "{\"v\":2}", 11);
        run(s, "p/seat", "{\"v\":3}", 12);
        assertThat(s.cards().all()).containsExactly(new PersistentCard("p/other", "{\"v\":2}", 11),
                new PersistentCard("p/seat", "{\"v\":3}", 12));
        assertThat(s.cards().image()).extracting(PersistentCard::agent).containsExactly("p/other", "p/seat");

        CoordinationState replayed = new CoordinationState();
        journal.forEach(replayed::apply);
        assertThat(replayed.cards().image()).isEqualTo(s.cards().image());
        CoordinationState restored = new CoordinationState();
        restored.restore(s.image());
        assertThat(restored.cards().image()).isEqualTo(s.cards().image());
    }

    @Test
    void aRolledBackRegistrationLeavesNothingAndTheBoundDropsTheOldest() {
        CoordinationState s = new CoordinationState();
        run(s, "p/seat", "{\"v\":1}", 1);
        s.beginBatch();
        s.decide(new CardCommand("p/seat", "p/seat", "{\"v\":2}"), 2).events().forEach(s::apply);
        s.rollbackBatch();
        assertThat(s.cards().all()).containsExactly(new PersistentCard("p/seat", "{\"v\":1}", 1));
        for (int i = 0; i < CardRegistry.MAX_CARDS; i++) {
            run(s, "p/a" + i, "{}", 3 + i);
        }
        assertThat(s.cards().all()).hasSize(CardRegistry.MAX_CARDS);
        assertThat(s.cards().all()).extracting(PersistentCard::agent).doesNotContain("p/seat");
    }

    @Test
    void aRemovalIsAnEventThatReplaysAndRollsBackAndRemovingNoCardChangesNothing() {
        CoordinationState s = new CoordinationState();
        run(s, "p/seat", "{\"v\":1}", 1);
        run(s, "p/other", "{\"v\":2}", 2);
        run(s, "p/last", "{\"v\":3}", 3);

        s.beginBatch();
        s.decide(new CardRemoveCommand("p/other", "p/other"), 4).events().forEach(s::apply);
        s.rollbackBatch();
        assertThat(s.cards().image()).as("rolled back, in its old eviction place").extracting(PersistentCard::agent)
                .containsExactly("p/seat", "p/other", "p/last");

        Decision d = s.decide(new CardRemoveCommand("p/other-rx", "p/other"), 5);
        assertThat(d.reply()).isEqualTo(new CardRemovedReply("p/other", true, 5));
        assertThat(d.events()).containsExactly(new CapabilityCardRemovedEvent(5, "p/other"));
        d.events().forEach(e -> {
            s.apply(e);
            journal.add(e);
        });
        assertThat(s.cards().find("p/other")).isNull();
        assertThat(s.cards().image()).extracting(PersistentCard::agent).containsExactly("p/seat", "p/last");

        Decision none = s.decide(new CardRemoveCommand("p/other", "p/other"), 6);
        assertThat(none.reply()).isEqualTo(new CardRemovedReply("p/other", false, 6));
        assertThat(none.events()).isEmpty();

        CoordinationState replayed = new CoordinationState();
        journal.forEach(replayed::apply);
        assertThat(replayed.cards().image()).isEqualTo(s.cards().image());
    }
}
