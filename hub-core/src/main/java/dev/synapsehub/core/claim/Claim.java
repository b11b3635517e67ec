package dev.synapsehub.core.claim;

import dev.synapsehub.core.scope.Scope;

import java.util.List;

/**
 * One task claim as the registry holds it and as events carry it (a full snapshot).
 *
 * @param principal the quota principal charged for this claim; never shown on the wire
 */
public record Claim(
        String taskId,
        String owner,
        String principal,
        String note,
        double claimedAt,
        double leaseExpiresAt,
        ClaimStatus status,
        String dataRef,
        String worktree,
        List<String> paths,
        long epoch,
        long version,
        String checkpoint,
        GitContext git,
        dev.synapsehub.core.scope.PathIdentity pathIdentity) {

    public Claim {
        paths = List.copyOf(paths);
    }

    /** A claim without a path identity. */
    public Claim(String taskId, String owner, String principal, String note, double claimedAt, double leaseExpiresAt,
                 ClaimStatus status, String dataRef, String worktree, List<String> paths, long epoch, long version,
                 String checkpoint, GitContext git) {
        this(taskId, owner, principal, note, claimedAt, leaseExpiresAt, status, dataRef, worktree, paths, epoch,
                version, checkpoint, git, null);
    }

    /** True when the lease is live at {@code now}: expiry strictly after now. */
    public boolean liveAt(double now) {
        return leaseExpiresAt > now;
    }

    /** This claim's file scope. */
    public Scope scope() {
        return new Scope(worktree, paths, pathIdentity);
    }

    Claim withOwnership(String newOwner, String newPrincipal, double now, double expiresAt, long newEpoch, String newNote) {
        return new Claim(taskId, newOwner, newPrincipal, newNote, now, expiresAt, status, dataRef, worktree, paths,
                newEpoch, 0, checkpoint, git, pathIdentity);
    }

    Claim withUpdate(ClaimStatus newStatus, String newNote, String newDataRef) {
        return new Claim(taskId, owner, principal, newNote, claimedAt, leaseExpiresAt, newStatus, newDataRef, worktree,
                paths, epoch, version + 1, checkpoint, git, pathIdentity);
    }

    Claim withCheckpoint(String token) {
        return new Claim(taskId, owner, principal, note, claimedAt, leaseExpiresAt, status, dataRef, worktree, paths,
                epoch, version + 1, token, git, pathIdentity);
    }
}
