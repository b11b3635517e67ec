package dev.synapsehub.core.actor;

import dev.synapsehub.core.command.Command;

/**
 * A command submitted to the actor, optionally keyed for apply-once retries.
 *
 * @param idempotency null for an unkeyed request
 * @param context what the edge attached about the request, or null
 */
public record Mutation(Command command, Idempotency idempotency, MutationContext context) {
    /** A mutation without edge context. */
    public Mutation(Command command, Idempotency idempotency) {
        this(command, idempotency, null);
    }

    /** An unkeyed mutation. */
    public static Mutation of(Command command) {
        return new Mutation(command, null);
    }
}
