package dev.synapsehub.core.actor;

/**
 * Completes a read the actor did not run (queue full, shutting down, writer failed), so the
 * caller can answer with the refusal's reason instead of guessing one.
 */
public final class ActorRefusedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient Outcome.Refused refusal;

    /** A read refused for {@code refusal}'s reason. */
    public ActorRefusedException(Outcome.Refused refusal) {
        super(refusal.message(), null, false, false);
        this.refusal = refusal;
    }

    /** Why the read was not run. */
    public Outcome.Refused refusal() {
        return refusal;
    }
}
