package dev.synapsehub.core.reply;

import dev.synapsehub.core.board.ProgressNote;
import dev.synapsehub.core.claim.Claim;

/**
 * The core's answer to one command. {@link Granted}, {@link AlreadyHeld} and {@link Denied} answer
 * the claim family; {@link Denied} is also every other verb's typed refusal; the other permitted
 * types are the successful answers of the board, resource and messaging verbs.
 */
public sealed interface Reply permits Reply.Granted, Reply.AlreadyHeld, Reply.Denied, BoardTaskReply,
        ProgressNoteReply, ResourceOfferReply, ChatReply, MailboxReply, ActivityReply, AuditRecordedReply, ChannelReply,
        CardReply, CardRemovedReply, IdentityPinReply, MemoryReply {

    /** The task the reply concerns (trimmed; empty when the request had none or is not about a task). */
    default String taskId() {
        return "";
    }

    /** True unless the command was refused. */
    default boolean granted() {
        return !(this instanceof Denied);
    }

    /**
     * The command succeeded.
     *
     * @param claim the claim after the change (for a release: the claim as it was released)
     * @param previousOwner the giver, for a handoff; otherwise null
     * @param note the hub-authored progress note decided and journaled with the change (the
     *     handoff note, a release's assessment), or null
     */
    record Granted(Claim claim, String previousOwner, String message, ProgressNote note) implements Reply {
        /** A grant without a progress note. */
        public Granted(Claim claim, String previousOwner, String message) {
            this(claim, previousOwner, message, null);
        }

        /** This grant with {@code note} attached. */
        public Granted withNote(ProgressNote note) {
            return new Granted(claim, previousOwner, message, note);
        }

        @Override
        public String taskId() {
            return claim.taskId();
        }
    }

    /**
     * A claim asked to keep a live claim of the same agent and principal as it stands
     * ({@code ClaimCommand.keepHeld}) found one: the claimant holds the task, nothing changed,
     * nothing is journaled and nothing is broadcast (the claim was published when it was granted).
     * A type of its own, not a {@link Granted} without events, so that no publisher of grants (a
     * mesh node publishing a replicated batch's decisions among them) takes it for a new grant.
     *
     * @param claim the live claim, unchanged (same epoch, same lease)
     */
    record AlreadyHeld(Claim claim, String message) implements Reply {
        @Override
        public String taskId() {
            return claim.taskId();
        }
    }

    /**
     * The command was refused and changed nothing but time-driven expiry.
     *
     * @param holder the agent whose claim caused the refusal, when there is one
     * @param conflictingTask the other task, for a scope conflict
     */
    record Denied(String taskId, Refusal refusal, String message, String holder, String conflictingTask)
            implements Reply {
        public Denied(String taskId, Refusal refusal, String message) {
            this(taskId, refusal, message, null, null);
        }
    }
}
