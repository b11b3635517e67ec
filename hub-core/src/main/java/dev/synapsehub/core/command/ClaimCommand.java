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
        dev.synapsehub.core.scope.PathIdentity pathIdentity) implements ClaimFamilyCommand {
    public ClaimCommand {
        paths = paths == null ? List.of() : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(paths));
        worktree = worktree == null ? "" : worktree;
    }

    /** A claim without a path identity. */
    public ClaimCommand(String agent, String principal, String taskId, String note, Double ttlSeconds, String worktree,
                        List<String> paths, GitContext git) {
        this(agent, principal, taskId, note, ttlSeconds, worktree, paths, git, null);
    }

    /** A plain claim: no note, default TTL, whole default worktree. */
    public static ClaimCommand of(String agent, String taskId) {
        return new ClaimCommand(agent, agent, taskId, null, null, "", List.of(), null);
    }
}
