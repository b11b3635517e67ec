package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.actor.ResponseRenderer;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.reply.Reply;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Submission and outcome publishing shared by the board, resource and messaging verbs: the
 * same rules as the claim family (keyed apply-once §4.6, stored response replayed privately,
 * refusals as typed errors), published from the outbox thread in commit order.
 */
final class VerbSupport {
    private final HubContext hub;

    VerbSupport(HubContext hub) {
        this.hub = hub;
    }

    /** Publishes a decided reply from the outbox thread. */
    @FunctionalInterface
    interface Publisher {
        void publish(Request request, Reply reply, String storedResponse, List<JournaledEvent> committed, double at);
    }

    /** Renders the success frame of a reply (stored for keyed requests). */
    @FunctionalInterface
    interface GrantRenderer {
        ObjectNode render(Reply reply, double decidedAt);
    }

    /** The verbs that honour {@code idem_key} (contract §4.6), by normalised type. */
    static final Set<String> KEYED_VERBS = Set.of("claim", "release", "task_update", "handoff", "checkpoint",
            "ledger_task", "ledger_task_update", "ledger_progress", "resource", "resource_offer", "offer_resource");

    /**
     * The committed first answer to a keyed retry, read without the actor: the stored response
     * for the same request, {@code idempotency_conflict} for another. Empty when the frame is not
     * a keyed request of a keyed verb or the key is not (or no longer) remembered. Only for a
     * request about to be refused for a reason of the present moment: otherwise the actor
     * answers it, in order with the requester's other replies.
     */
    Optional<Outcome> priorAnswer(Request r) {
        if (!KEYED_VERBS.contains(r.type())) {
            return Optional.empty();
        }
        JsonNode key = r.get("idem_key");
        if (key == null || !key.isTextual() || key.textValue().isEmpty()) {
            return Optional.empty();
        }
        String ledgerKey = Idempotency.key(r.sender(), r.type(), key.textValue());
        if (!hub.actor().remembers(ledgerKey)) {
            return Optional.empty(); // the common case costs one map lookup, no digest
        }
        return hub.actor().priorAnswer(ledgerKey, ClaimVerbs.digest(r));
    }

    /** Publishes a ledger answer from the outbox thread, after everything published before it. */
    void answerLater(Request r, Outcome prior) {
        hub.outbox().executor().execute(() -> {
            try {
                publish(r, prior, null);
            } catch (RuntimeException fault) {
                hub.metrics().faults.incrementAndGet();
                hub.outbox().close(r.session(), null, 1011, "unexpected fault");
            }
        });
    }

    /** Submits {@code command}; keyed when {@code keyed} and the frame carries an {@code idem_key}. */
    void submit(Request r, Command command, boolean keyed, GrantRenderer renderer, Publisher publisher) {
        Idempotency idem = null;
        JsonNode key = keyed ? r.get("idem_key") : null;
        if (key != null && !key.isNull()) {
            if (!key.isTextual() || key.textValue().isEmpty()) {
                ObjectNode e = hub.frames().error(r.sender(), "Field 'idem_key' must be a non-empty string.", now());
                e.put("error_code", "invalid_idempotency_request");
                hub.outbox().send(r.session(), e);
                return;
            }
            ResponseRenderer store = (reply, at) -> hub.frames().write(renderer.render(reply, at));
            idem = new Idempotency(Idempotency.key(r.sender(), r.type(), key.textValue()), ClaimVerbs.digest(r), store);
        }
        Idempotency keyedAs = idem;
        RequestContext context = new RequestContext(r.type(), r.sender(), r.target(), r.frame());
        hub.actor().submit(new Mutation(command, idem, context)).thenAcceptAsync(outcome -> {
            try {
                if (keyedAs != null && outcome instanceof Outcome.Refused refused
                        && refused.reason() == Outcome.Reason.BUSY) {
                    // a full queue must not override a first answer already committed (INV-CR-1)
                    outcome = hub.actor().priorAnswer(keyedAs.key(), keyedAs.requestDigest()).orElse(outcome);
                }
                publish(r, outcome, publisher);
            } catch (RuntimeException fault) {
                hub.metrics().faults.incrementAndGet();
                hub.outbox().close(r.session(), null, 1011, "unexpected fault");
            }
        }, hub.outbox().executor());
    }

    private void publish(Request r, Outcome outcome, Publisher publisher) {
        double at = now();
        if (outcome instanceof Outcome.Decided decided) {
            publisher.publish(r, decided.reply(), decided.storedResponse(), decided.committed(), at);
        } else if (outcome instanceof Outcome.Replayed replayed) {
            hub.metrics().idempotentReplays.incrementAndGet();
            hub.outbox().send(r.session(), replayed.response());
        } else if (outcome instanceof Outcome.IdempotencyConflict conflict) {
            hub.metrics().idempotencyConflicts.incrementAndGet();
            ObjectNode e = hub.frames().error(r.sender(),
                    "idem_key was already used for a different request; nothing was applied.", at);
            JsonNode original = hub.json().parse(conflict.originalResponse());
            if (original != null && original.isObject()) {
                if (original.has("timestamp")) {
                    e.set("timestamp", original.get("timestamp"));
                }
                if (original.has("hub_id")) {
                    e.set("hub_id", original.get("hub_id"));
                }
            }
            e.put("error_code", "idempotency_conflict");
            hub.outbox().send(r.session(), e);
        } else if (outcome instanceof Outcome.Refused refused) {
            ObjectNode e = hub.frames().error(r.sender(), refused.message(), at);
            e.put("error_code", refused.reason().name().toLowerCase(Locale.ROOT));
            if (refused.reason() == Outcome.Reason.INTERNAL_FAULT) {
                hub.metrics().faults.incrementAndGet();
                hub.outbox().close(r.session(), e, 1011, "unexpected fault");
            } else {
                hub.outbox().send(r.session(), e);
            }
        }
    }

    /** A private typed error naming the offending field. */
    void malformed(Request r, String field, String message) {
        ObjectNode e = hub.frames().error(r.sender(), message, now());
        e.put("error_code", "malformed_request");
        e.put("field", field);
        hub.outbox().send(r.session(), e);
    }

    /** A private typed error sent from the outbox thread (keeps order behind earlier publishes). */
    void errorLater(Request r, String message, String code) {
        ObjectNode e = hub.frames().error(r.sender(), message, now());
        e.put("error_code", code);
        String text = hub.frames().write(e);
        hub.outbox().sendInOrder(r.session(), text);
    }

    /** True (after the typed error) when the member is present, non-null and not a string. */
    boolean rejectNonText(Request r, String field) {
        if (dev.synapsehub.net.wire.FieldCoercion.notText(r.get(field))) {
            malformed(r, field, "Field '" + field + "' must be a string.");
            return true;
        }
        return false;
    }

    double now() {
        return hub.clock().nowSeconds();
    }
}
