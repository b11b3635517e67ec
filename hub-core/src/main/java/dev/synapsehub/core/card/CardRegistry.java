package dev.synapsehub.core.card;

import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.CardCommand;
import dev.synapsehub.core.command.CardRemoveCommand;
import dev.synapsehub.core.event.CapabilityCardRemovedEvent;
import dev.synapsehub.core.reply.CardRemovedReply;
import dev.synapsehub.core.event.CapabilityCardEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.CardReply;
import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Persistent capability cards (contract §5.15): one per identity, the latest registration
 * wins; at most {@link #MAX_CARDS}, the least recently registered dropped beyond that. Decided
 * and applied on the writer thread; every registration is a journaled {@link CapabilityCardEvent},
 * every removal a {@link CapabilityCardRemovedEvent}.
 */
public final class CardRegistry {
    /** Persistent cards kept at most (the live-card bound of §4.4). */
    public static final int MAX_CARDS = 4096;

    private final LinkedHashMap<String, PersistentCard> cards = new LinkedHashMap<>();
    private final UndoLog undo;

    /** A registry recording its changes in {@code undo}. */
    public CardRegistry(UndoLog undo) {
        this.undo = undo;
    }

    /** A registry with an undo log of its own. */
    public CardRegistry() {
        this(new UndoLog());
    }

    /** Decides a registration: always granted (the edge validated the card). */
    public Decision decide(CardCommand c, double t) {
        return new Decision(new CardReply(c.cardAgent(), t), List.of(new CapabilityCardEvent(t, c.cardAgent(), c.cardJson())));
    }

    /** Decides a removal: the event only when the identity has a persistent card (removing none changes nothing). */
    public Decision decide(CardRemoveCommand c, double t) {
        boolean held = cards.containsKey(c.cardAgent());
        return new Decision(new CardRemovedReply(c.cardAgent(), held, t),
                held ? List.of(new CapabilityCardRemovedEvent(t, c.cardAgent())) : List.of());
    }

    /** Applies a registration or a removal; other events are ignored. */
    public void apply(CoordinationEvent event) {
        if (event instanceof CapabilityCardEvent e) {
            put(new PersistentCard(e.agent(), e.cardJson(), e.ts()));
        } else if (event instanceof CapabilityCardRemovedEvent e) {
            remove(e.agent());
        }
    }

    private void remove(String agent) {
        PersistentCard gone = cards.get(agent);
        if (gone == null) {
            return;
        }
        List<Map.Entry<String, PersistentCard>> before = new ArrayList<>(cards.entrySet());
        cards.remove(agent);
        undo.record(() -> { // the eviction order is state too: put it back where it was
            cards.clear();
            before.forEach(e -> cards.put(e.getKey(), e.getValue()));
        });
    }

    /** The persistent card of {@code agent}, or null. */
    public PersistentCard find(String agent) {
        return cards.get(agent);
    }

    private void put(PersistentCard card) {
        List<Map.Entry<String, PersistentCard>> before = new ArrayList<>(cards.entrySet());
        cards.remove(card.agent());
        cards.put(card.agent(), card);
        while (cards.size() > MAX_CARDS) {
            Iterator<String> it = cards.keySet().iterator();
            it.next();
            it.remove();
        }
        undo.record(() -> {
            cards.clear();
            before.forEach(e -> cards.put(e.getKey(), e.getValue()));
        });
    }

    /** Every card, least recently registered first (the eviction order: state too). */
    public List<PersistentCard> image() {
        return new ArrayList<>(cards.values());
    }

    /** Loads an image into this empty registry. */
    public void restore(List<PersistentCard> image) {
        if (!cards.isEmpty()) {
            throw new IllegalStateException("restore needs an empty registry");
        }
        image.forEach(c -> cards.put(c.agent(), c));
        while (cards.size() > MAX_CARDS) {
            Iterator<String> it = cards.keySet().iterator();
            it.next();
            it.remove();
        }
    }

    /** Every card, sorted by agent. */
    public List<PersistentCard> all() {
        List<PersistentCard> out = new ArrayList<>(cards.values());
        out.sort(Comparator.comparing(PersistentCard::agent));
        return out;
    }
}
