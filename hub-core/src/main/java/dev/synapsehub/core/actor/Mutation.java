package dev.synapsehub.core.actor;

import dev.synapsehub.core.command.Command;

/**
 * A command submitted to the actor, optionally keyed for apply-once retries.
 *
 * @param idempotency null for an unkeyed request
 */
public record Mutation(Command command, Idempotency idempotency) {
    /** An unkeyed mutation. */
    public static Mutation of(Command command) {
        return new Mutation(command, null);
    }
}
