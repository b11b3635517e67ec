package dev.synapsehub.core.reply;

/**
 * Why the core refused a command. The first five are the wire's claim {@code reason_code}s;
 * the others are typed codes for the remaining verbs.
 */
public enum Refusal {
    TASK_ID_REQUIRED,
    PATH_IDENTITY_INVALID,
    LEASE_LIVE,
    SCOPE_CONFLICT,
    QUOTA_EXCEEDED,
    CLAIM_DENIED,
    NOT_CLAIMED,
    NOT_FOUND,
    NOT_OWNER,
    ALREADY_OWNER,
    TARGET_REQUIRED,
    /** A handoff's recipient is not bound to a live connection. */
    TARGET_OFFLINE,
    STALE_EPOCH,
    VERSION_CONFLICT,
    ILLEGAL_TRANSITION,
    /** A board task needs a title. */
    TITLE_REQUIRED,
    /** The declared dependencies would close a cycle through existing board tasks. */
    DEPENDENCY_CYCLE,
    /** A re-declaration names a different project than the task's existing scope. */
    PROJECT_CONFLICT,
    /** A board status outside open, in_progress, blocked, done, cancelled. */
    UNKNOWN_STATUS,
    /** A progress-note kind outside note, blocked, assessment, usage, approval. */
    UNKNOWN_KIND,
    /** A resource offer needs a kind. */
    KIND_REQUIRED,
    /** A resource offer needs a name. */
    NAME_REQUIRED,
    /** A channel chat from a non-member, or to a channel that does not exist. */
    NOT_A_MEMBER,
    /** A two-person operator relay's first approval: recorded, the task is released by a distinct second one. */
    AWAITING_SECOND_OPERATOR,
    /**
     * A claim in a governed namespace the applied federation records leave partitioned
     * (INV-CR-4); the denial's holder is the namespace's owner hub.
     */
    PARTITIONED
}
