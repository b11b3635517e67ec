package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorRefusedException;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.actor.ResponseRenderer;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * Submission and outcome publishing shared by the board, resource and messaging verbs: the
 * same rules as the claim family (keyed apply-once §4.6, stored response replayed privately,
 * refusals as typed errors), published from the outbox thread in commit order.
 *
 * <p>Every asynchronous continuation goes through {@link #submit} or {@link #afterRead}, which
 * account for every way it can fail: a refused read is answered with its reason, and a fault
 * (in the read, in rendering the reply, or an outbox that would not take the continuation) is
 * logged once, counted in {@code synapse_faults_total} and answered, so no request is left
 * without a reply.
 */
final class VerbSupport {
    private static final Logger LOG = LoggerFactory.getLogger(VerbSupport.class);

    private final CoordinationActor actor;
    private final Outbox outbox;
    private final HubFrames frames;
    private final WireJson json;
    private final HubMetrics metrics;
    private final Clock clock;

    VerbSupport(CoordinationActor actor, Outbox outbox, HubFrames frames, WireJson json, HubMetrics metrics,
            Clock clock) {
        this.actor = actor;
        this.outbox = outbox;
        this.frames = frames;
        this.json = json;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Renders the success frame of a reply (stored for keyed requests). */
    @FunctionalInterface
    interface GrantRenderer {
        ObjectNode render(Reply reply, double decidedAt);

        /** Renders a verb's success reply, already of its own type. */
        @FunctionalInterface
        interface OfType<R extends Reply> {
            ObjectNode render(R reply, double decidedAt);
        }

        /**
         * A renderer of {@code success} replies, the only ones the core renders (a refusal is never
         * stored); any other reply is a fault (the verb and the core disagree about its answers),
         * answered as every fault on this path is.
         */
        static <R extends Reply> GrantRenderer typed(Class<R> success, OfType<R> render) {
            return (reply, decidedAt) -> {
                if (!success.isInstance(reply)) {
                    throw new IllegalStateException("a " + success.getSimpleName() + " was expected, not a "
                            + reply.getClass().getSimpleName());
                }
                return render.render(success.cast(reply), decidedAt);
            };
        }
    }

    /** The verbs that honour {@code idem_key} (contract §4.6), by normalised type. */
    static final Set<String> KEYED_VERBS = Set.of("claim", "release", "task_update", "handoff", "checkpoint",
            "ledger_task", "ledger_task_update", "ledger_progress", "resource", "resource_offer", "offer_resource",
            "recall_log", "finding", // the memory verbs are keyed only on a journaled hub (A12 PM6)
            "guard_denial"); // only a token hub with a journal takes it (A3)

    /**
     * The committed first answer to a keyed retry, read without the actor: the stored response
     * for the same request, {@code idempotency_conflict} for another. Empty when the frame is not
     * a keyed request of a keyed verb or the key is not (or no longer) remembered. Only for a
     * request about to be refused for a reason of the present moment: otherwise the actor
     * answers it, in order with the requester's other replies.
     */
    Optional<Outcome> priorAnswer(Request r) {
        return KEYED_VERBS.contains(r.type()) ? priorAnswer(r, r.type()) : Optional.empty();
    }

    /** As {@link #priorAnswer(Request)} for a request keyed under {@code ledgerType} (a ledger scope of its own). */
    Optional<Outcome> priorAnswer(Request r, String ledgerType) {
        JsonNode key = r.get("idem_key");
        if (key == null || !key.isTextual() || key.textValue().isEmpty()) {
            return Optional.empty();
        }
        String ledgerKey = Idempotency.key(r.sender(), ledgerType, key.textValue());
        if (!actor.remembers(ledgerKey)) {
            return Optional.empty(); // the common case costs one map lookup, no digest
        }
        return actor.priorAnswer(ledgerKey, ClaimVerbs.digest(r));
    }

    /** Publishes a ledger answer from the outbox thread, after everything published before it. */
    void answerLater(Request r, Outcome prior) {
        afterRead(r, "answering a keyed retry from the ledger", CompletableFuture.completedFuture(prior),
                outcome -> publish(r, outcome, null));
    }

    /**
     * Continues with {@code read}'s value on the outbox thread (in order with everything published
     * before). A read the actor refused is answered with its reason ({@code busy},
     * {@code shutting_down}, {@code writer_failed}); a journal that could not be read is answered
     * {@code journal_failed}; any other failure, and a fault in {@code then}, is a fault.
     *
     * @param what what the continuation does, for the log line
     */
    <T> void afterRead(Request r, String what, CompletableFuture<T> read, Consumer<T> then) {
        afterRead(r, what, read, then, null);
    }

    /**
     * Like {@link #afterRead(Request, String, CompletableFuture, Consumer)}, except that a read the
     * hub could not serve for now (refused {@code busy}, or a journal read that failed) is not
     * answered, nor logged or counted here: its cause is handed to {@code unserved}, which retries
     * it and reports the failure once per episode of retries (see {@link #reportUnserved}). For
     * reads no client would retry on an error (a mailbox replay: its client sends no second
     * {@code mailbox: true}).
     *
     * @return completes once the attempt settled: served, answered, or handed to {@code unserved}
     */
    <T> CompletableFuture<Void> afterReadOrRetry(Request r, String what, CompletableFuture<T> read,
            Consumer<T> then, Consumer<Throwable> unserved) {
        return afterRead(r, what, read, then, unserved);
    }

    private <T> CompletableFuture<Void> afterRead(Request r, String what, CompletableFuture<T> read,
            Consumer<T> then, Consumer<Throwable> unserved) {
        // the connection's edge answers after this one wait for it; its future fails only if it did not run
        CompletableFuture<Void> answered = outbox.answerAfter(r.session(), read, (value, failure) -> {
            if (failure != null) {
                Throwable cause = unwrap(failure);
                if (unserved != null && retryable(cause)) {
                    unserved.accept(cause);
                } else {
                    answerFailure(r, what, failure);
                }
                return;
            }
            try {
                then.accept(value);
            } catch (RuntimeException fault) {
                fault(r, what, fault);
            }
        });
        answered.whenComplete((ignored, notRun) -> {
            if (notRun != null && !outbox.executor().isShuttingDown()) { // stopping: every socket closes
                // the outbox would not take the continuation (it is full or stopping): answer
                // from here, on the connection's own loop, since no other path will
                fault(r, what + " (the outbox refused the continuation)", notRun);
            }
        });
        return answered;
    }

    /**
     * Submits a mutation that no request waits for (dead-letter clearing, a mailbox watermark). A
     * refusal is counted in {@code synapse_unanswered_submissions_refused_total} and handed to
     * {@code onRefused}, so the caller can arrange a retry; anything else that goes wrong is a
     * fault, logged once and counted.
     */
    void submitUnanswered(Command command, String what, Runnable onRefused) {
        actor.submit(Mutation.of(command)).whenComplete((outcome, failure) -> {
            if (failure != null) {
                metrics.faults.incrementAndGet();
                LOG.error("fault {}", what, failure);
            } else if (outcome instanceof Outcome.Refused refused) {
                if (refused.reason() == Outcome.Reason.INTERNAL_FAULT) {
                    metrics.faults.incrementAndGet(); // the actor logged it with its batch
                } else {
                    metrics.unansweredRefusals.incrementAndGet();
                    LOG.debug("{}: refused {}", what, refused.reason());
                    onRefused.run();
                }
            }
        });
    }

    /** Whether {@code cause} (unwrapped) is one a later attempt may not meet: the hub was busy, the journal could not be read. */
    static boolean retryable(Throwable cause) {
        return busyRefusal(cause) || cause instanceof JournalReadException;
    }

    private static boolean busyRefusal(Throwable cause) {
        return cause instanceof ActorRefusedException refused && refused.refusal().reason() == Outcome.Reason.BUSY;
    }

    /**
     * Reports a read the hub could not serve and retries ({@link #retryable}): a journal failure
     * is logged at ERROR and counted as a fault once per episode of retries ({@code reported}:
     * an earlier attempt of the episode did so), later ones and busy refusals only at DEBUG.
     *
     * @return whether the episode's journal failure has been reported now
     */
    boolean reportUnserved(Request r, String what, Throwable cause, boolean reported) {
        if (!(cause instanceof JournalReadException journal)) {
            LOG.debug("{} for {}: refused busy, retried later", what, r.session());
            return reported;
        }
        if (reported) {
            LOG.debug("{} for {}: the journal could still not be read; retried later", what, r.session());
            return true;
        }
        metrics.faults.incrementAndGet();
        LOG.error("{} for {}: the journal could not be read; retried later", what, r.session(), journal.getCause());
        return true;
    }

    private static final String JOURNAL_FAILED = "The journal could not be read; nothing was replayed. Retry shortly.";

    /** Answers a failed read or submission: refusals with their reason, journal reads and faults as such. */
    private void answerFailure(Request r, String what, Throwable failure) {
        Throwable cause = unwrap(failure);
        if (cause instanceof ActorRefusedException refused) {
            // load shedding and shutdown, not faults: counted by the actor, answered here
            LOG.debug("{} for {}: refused {}", what, r.session(), refused.refusal().reason());
            errorLater(r, refused.refusal().message(), refused.refusal().reason().name().toLowerCase(Locale.ROOT));
        } else if (cause instanceof JournalReadException journal) {
            metrics.faults.incrementAndGet();
            LOG.error("{} for {}: the journal could not be read", what, r.session(), journal.getCause());
            errorLater(r, JOURNAL_FAILED, "journal_failed");
        } else {
            fault(r, what, cause);
        }
    }

    /**
     * An unexpected fault while serving {@code r}: logged once with its stack trace, counted, and
     * answered with {@code internal_fault} and close 1011 (the connection's state is in doubt).
     */
    void fault(Request r, String what, Throwable fault) {
        metrics.faults.incrementAndGet();
        LOG.error("fault {} for {}; closing it 1011", what, r.session(), fault);
        ObjectNode e = frames.error(r.sender(), "Internal fault while answering this request; it was logged.",
                now());
        e.put("error_code", "internal_fault");
        outbox.close(r.session(), e, 1011, "unexpected fault");
    }

    private static Throwable unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }

    /** Answers an outcome that was not decided fresh: replayed, conflicting or refused (on the outbox thread). */
    @FunctionalInterface
    interface SettledAnswer {
        void answer(Request request, Outcome settled);
    }

    /** Submits {@code command}; keyed when {@code keyed} and the frame carries an {@code idem_key}. */
    void submit(Request r, Command command, boolean keyed, GrantRenderer renderer, DecisionPublisher publisher) {
        submit(r, command, keyed, renderer, publisher, null);
    }

    /**
     * Like {@link #submit(Request, Command, boolean, GrantRenderer, DecisionPublisher)}; {@code settled}
     * (when not null) answers replayed, conflicting and refused outcomes instead of the
     * requester's socket getting the stored response or a typed error.
     */
    void submit(Request r, Command command, boolean keyed, GrantRenderer renderer, DecisionPublisher publisher,
            SettledAnswer settled) {
        Idempotency idem = null;
        JsonNode key = keyed ? r.get("idem_key") : null;
        if (key != null && !key.isNull()) {
            if (!key.isTextual() || key.textValue().isEmpty()) {
                ObjectNode e = frames.error(r.sender(), "Field 'idem_key' must be a non-empty string.", now());
                e.put("error_code", "invalid_idempotency_request");
                outbox.send(r.session(), e);
                return;
            }
            ResponseRenderer store = (reply, at) -> frames.write(renderer.render(reply, at));
            idem = new Idempotency(Idempotency.key(r.sender(), r.type(), key.textValue()), ClaimVerbs.digest(r), store);
        }
        Idempotency keyedAs = idem;
        RequestContext context = new RequestContext(r.type(), r.sender(), r.target(), r.frame());
        afterRead(r, "publishing the outcome of " + r.type(), actor.submit(new Mutation(command, idem, context)),
                outcome -> {
                    if (keyedAs != null && outcome instanceof Outcome.Refused refused
                            && refused.reason() == Outcome.Reason.BUSY) {
                        // a full queue must not override a first answer already committed (INV-CR-1)
                        outcome = actor.priorAnswer(keyedAs.key(), keyedAs.requestDigest()).orElse(outcome);
                    }
                    if (settled != null && !(outcome instanceof Outcome.Decided)) {
                        settled.answer(r, outcome);
                    } else {
                        publish(r, outcome, publisher);
                    }
                });
    }

    private void publish(Request r, Outcome outcome, DecisionPublisher publisher) {
        double at = now();
        if (outcome instanceof Outcome.Decided decided) {
            publisher.publish(new CommittedDecision(r, decided.reply(), decided.storedResponse(),
                    decided.committed(), at));
        } else if (outcome instanceof Outcome.Replayed replayed) {
            metrics.idempotentReplays.incrementAndGet();
            outbox.send(r.session(), replayed.response());
        } else if (outcome instanceof Outcome.IdempotencyConflict conflict) {
            metrics.idempotencyConflicts.incrementAndGet();
            ObjectNode e = frames.error(r.sender(),
                    "idem_key was already used for a different request; nothing was applied.", at);
            JsonNode original = json.parse(conflict.originalResponse());
            if (original != null && original.isObject()) {
                if (original.has("timestamp")) {
                    e.set("timestamp", original.get("timestamp"));
                }
                if (original.has("hub_id")) {
                    e.set("hub_id", original.get("hub_id"));
                }
            }
            e.put("error_code", "idempotency_conflict");
            outbox.send(r.session(), e);
        } else if (outcome instanceof Outcome.Refused refused) {
            ObjectNode e = frames.error(r.sender(), refused.message(), at);
            e.put("error_code", refused.reason().name().toLowerCase(Locale.ROOT));
            if (refused.reason() == Outcome.Reason.INTERNAL_FAULT) {
                metrics.faults.incrementAndGet(); // the actor logged the fault with its batch
                outbox.close(r.session(), e, 1011, "unexpected fault");
            } else {
                outbox.send(r.session(), e);
            }
        }
    }

    /** A refusal answered with a private error frame carrying its message (the common case). */
    void refusePrivately(CommittedDecision d, Reply.Denied refusal) {
        outbox.send(d.request().session(), frames.error(d.request().sender(), refusal.message(), d.at()));
    }

    /** A private typed error naming the offending field. */
    void malformed(Request r, String field, String message) {
        ObjectNode e = frames.error(r.sender(), message, now());
        e.put("error_code", "malformed_request");
        e.put("field", field);
        outbox.send(r.session(), e);
    }

    /** A private typed error sent from the outbox thread (keeps order behind earlier publishes). */
    void errorLater(Request r, String message, String code) {
        ObjectNode e = frames.error(r.sender(), message, now());
        e.put("error_code", code);
        String text = frames.write(e);
        outbox.sendInOrder(r.session(), text);
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
        return clock.nowSeconds();
    }
}
