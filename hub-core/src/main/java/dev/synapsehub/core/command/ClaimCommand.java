package dev.synapsehub.core.command;

import dev.synapsehub.core.claim.GitContext;

import java.util.List;

/**
 * Claim (or renew, or take over) a task with a lease.
 *
 * @param principal the server-derived quota principal charged for the claim
 * @param ttlSeconds requested lease; null, NaN or infinite fall back to the default
 * @param paths raw declared paths, normalised by the core
 * @param git optional branch context, may be null
 * @param keepHeld TRUE: a live claim of this same agent under this same principal is answered as it
 *     stands ({@link dev.synapsehub.core.reply.Reply.AlreadyHeld}), not renewed, so an unkeyed retry of a
 *     forwarded claim never renews twice; null or FALSE: a renewal, as always. Left null unless set,
 *     so a command without it replicates as it always did.
 */
public record ClaimCommand(
        String agent,
        String principal,
        String taskId,
        String note,
        Double ttlSeconds,
        String worktree,
        List<String> paths,
        GitContext git,
        dev.synapsehub.core.scope.PathIdentity pathIdentity,
        Boolean keepHeld) implements ClaimFamilyCommand {
    public ClaimCommand {
        paths = paths == null ? List.of() : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(paths));
        worktree = worktree == null ? "" : worktree;
    }

    /** A claim that renews a live claim of the same agent (no {@code keepHeld}). */
    public ClaimCommand(String agent, String principal, String taskId, String note, Double ttlSeconds, String worktree,
                        List<String> paths, GitContext git, dev.synapsehub.core.scope.PathIdentity pathIdentity) {
        this(agent, principal, taskId, note, ttlSeconds, worktree, paths, git, pathIdentity, null);
    }

    /** A claim without a path identity. */
    public ClaimCommand(String agent, String principal, String taskId, String note, Double ttlSeconds, String worktree,
                        List<String> paths, GitContext git) {
        this(agent, principal, taskId, note, ttlSeconds, worktree, paths, git, null);
    }

    /** This claim, answering a live claim of the same agent and principal as it stands instead of renewing it. */
    public ClaimCommand keepingHeld() {
        return new ClaimCommand(agent, principal, taskId, note, ttlSeconds, worktree, paths, git, pathIdentity,
                Boolean.TRUE);
    }

    /** True when a live claim of the same agent and principal is answered as it stands. */
    public boolean answersHeld() {
        return Boolean.TRUE.equals(keepHeld);
    }

    /** A plain claim: no note, default TTL, whole default worktree. */
    public static ClaimCommand of(String agent, String taskId) {
        return new ClaimCommand(agent, agent, taskId, null, null, "", List.of(), null);
    }
}
