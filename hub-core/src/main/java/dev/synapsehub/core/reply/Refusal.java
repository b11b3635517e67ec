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
    STALE_EPOCH,
    VERSION_CONFLICT,
    ILLEGAL_TRANSITION
}
