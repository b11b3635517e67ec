package dev.synapsehub.core.actor;

import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.IdempotencyRecordedEvent;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.IdempotencyLedger;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Decides one submitted mutation against the state without changing it (beyond time-driven
 * expiry). A keyed request is answered from the idempotency ledger before anything else is
 * looked at, so nothing that depends on the present moment (who is online, quota, the clock)
 * can override a first answer (INV-CR-1). Shared by the actor and the spec model.
 */
public final class MutationDecider {
    private MutationDecider() {
    }

    /** What deciding a mutation produced. */
    public sealed interface Result permits Settled, Fresh {
    }

    /** A keyed retry answered from the ledger (replayed or conflicting); nothing to apply. */
    public record Settled(Outcome outcome) implements Result {
    }

    /**
     * A fresh decision: apply {@code events} (which include the idempotency record of a granted
     * keyed mutation) and journal them before publishing {@code reply}.
     *
     * @param storedResponse the first response stored for a keyed grant, else null
     */
    public record Fresh(Reply reply, List<CoordinationEvent> events, String storedResponse) implements Result {
        public Fresh {
            events = List.copyOf(events);
        }
    }

    /** Decides {@code mutation} at hub time {@code now}. */
    public static Result decide(CoordinationState state, Mutation mutation, double now) {
        Idempotency idem = mutation.idempotency();
        if (idem != null) {
            Optional<IdempotencyLedger.Entry> prior = state.idempotency().find(idem.key());
            if (prior.isPresent()) {
                return new Settled(answer(prior.get(), idem.requestDigest()));
            }
        }
        Decision decision = state.decide(mutation.command(), now);
        if (idem == null || !decision.reply().granted()) {
            return new Fresh(decision.reply(), decision.events(), null);
        }
        double decidedAt = state.claims().now();
        String stored = idem.renderer().render(decision.reply(), decidedAt);
        List<CoordinationEvent> events = new ArrayList<>(decision.events());
        events.add(new IdempotencyRecordedEvent(decidedAt, idem.key(), idem.requestDigest(), stored));
        return new Fresh(decision.reply(), events, stored);
    }

    /** The answer to a retry under a remembered key: the same request replays, another conflicts. */
    public static Outcome answer(IdempotencyLedger.Entry prior, String requestDigest) {
        return prior.requestDigest().equals(requestDigest)
                ? new Outcome.Replayed(prior.response())
                : new Outcome.IdempotencyConflict(prior.response());
    }
}
