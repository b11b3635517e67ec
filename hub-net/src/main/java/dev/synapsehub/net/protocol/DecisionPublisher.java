package dev.synapsehub.net.protocol;

import dev.synapsehub.core.reply.Reply;

/**
 * Turns a {@link CommittedDecision} into frames, on the outbox thread in commit order: the one shape
 * every verb's path from decision to frames takes.
 */
@FunctionalInterface
interface DecisionPublisher {
    void publish(CommittedDecision decision);

    /** Publishes a verb's success reply, already of its own type. */
    @FunctionalInterface
    interface OnSuccess<R extends Reply> {
        void publish(CommittedDecision decision, R reply);
    }

    /** Publishes a typed refusal. */
    @FunctionalInterface
    interface OnRefusal {
        void publish(CommittedDecision decision, Reply.Denied refusal);
    }

    /**
     * A publisher that hands a refusal to {@code refused} and a reply of type {@code success} to
     * {@code succeeded}; any other reply is a fault (the verb and the core disagree about its
     * answers), answered as every fault on this path is.
     */
    static <R extends Reply> DecisionPublisher typed(Class<R> success, OnSuccess<R> succeeded, OnRefusal refused) {
        return decision -> {
            Reply reply = decision.reply();
            if (reply instanceof Reply.Denied denied) {
                refused.publish(decision, denied);
            } else if (success.isInstance(reply)) {
                succeeded.publish(decision, success.cast(reply));
            } else {
                throw new IllegalStateException("a " + decision.request().type() + " was answered with an unexpected "
                        + reply.getClass().getSimpleName());
            }
        };
    }
}
