package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.GitContext;
import dev.synapsehub.net.wire.HubFrames;

/** Renders claims into the claim-family frames of contract §6.2 and the claim objects of §6.7. */
public final class ClaimFrames {
    private final HubFrames frames;

    public ClaimFrames(HubFrames frames) {
        this.frames = frames;
    }

    /** Broadcast {@code claim_granted}. */
    public ObjectNode claimGranted(Claim c, String payload, double ts) {
        ObjectNode f = frames.envelope("all", "claim_granted", payload, ts);
        f.put("task_id", c.taskId());
        f.put("owner", c.owner());
        f.put("note", c.note());
        HubFrames.putFloat(f, "lease_expires_at", c.leaseExpiresAt());
        f.put("status", c.status().wire());
        f.put("worktree", c.worktree());
        HubFrames.putStrings(f, "paths", c.paths());
        f.put("epoch", c.epoch());
        f.put("version", c.version());
        f.put("checkpoint", c.checkpoint());
        putGit(f, c.git());
        PathIdentityWire.write(f, c.pathIdentity());
        return f;
    }

    /** Broadcast {@code release_granted} with its receipt. */
    public ObjectNode releaseGranted(Claim c, String payload, double ts, ReleaseReceipt receipt) {
        ObjectNode f = frames.envelope("all", "release_granted", payload, ts);
        f.put("task_id", c.taskId());
        f.put("owner", c.owner());
        receipt.writeTo(f.putObject("receipt"), c.taskId(), c.owner());
        return f;
    }

    /** Broadcast {@code task_updated} (no note, no epoch). */
    public ObjectNode taskUpdated(Claim c, String payload, double ts) {
        ObjectNode f = frames.envelope("all", "task_updated", payload, ts);
        f.put("task_id", c.taskId());
        f.put("owner", c.owner());
        f.put("status", c.status().wire());
        f.put("data_ref", c.dataRef());
        f.put("version", c.version());
        return f;
    }

    /** Broadcast {@code handoff_granted} (no git). */
    public ObjectNode handoffGranted(Claim c, String previousOwner, String payload, double ts) {
        ObjectNode f = frames.envelope("all", "handoff_granted", payload, ts);
        f.put("task_id", c.taskId());
        f.put("owner", c.owner());
        f.put("previous_owner", previousOwner);
        f.put("note", c.note());
        f.put("status", c.status().wire());
        f.put("worktree", c.worktree());
        HubFrames.putStrings(f, "paths", c.paths());
        f.put("epoch", c.epoch());
        f.put("version", c.version());
        HubFrames.putFloat(f, "lease_expires_at", c.leaseExpiresAt());
        f.put("checkpoint", c.checkpoint());
        return f;
    }

    /** Private {@code checkpoint_saved}. */
    public ObjectNode checkpointSaved(Claim c, String requester, String payload, double ts) {
        ObjectNode f = frames.envelope(requester, "checkpoint_saved", payload, ts);
        f.put("task_id", c.taskId());
        f.put("version", c.version());
        return f;
    }

    /** Broadcast {@code ledger_progress_posted} carrying one note object. */
    public ObjectNode progressPosted(String taskId, String author, String kind, String text, double ts) {
        ObjectNode f = frames.envelope("all", "ledger_progress_posted", "Progress from " + author, ts);
        ObjectNode note = f.putObject("note");
        note.put("task_id", taskId);
        note.put("author", author);
        note.put("kind", kind);
        note.put("text", text);
        HubFrames.putFloat(note, "posted_at", ts);
        return f;
    }

    /** A private denial frame of {@code type} carrying {@code task_id}. */
    public ObjectNode denied(String type, String requester, String taskId, String payload, double ts) {
        ObjectNode f = frames.envelope(requester, type, payload, ts);
        f.put("task_id", taskId);
        return f;
    }

    /** The claim object of {@code state_snapshot.active_claims} (never the principal). */
    public void writeClaim(ObjectNode o, Claim c) {
        o.put("task_id", c.taskId());
        o.put("owner", c.owner());
        o.put("note", c.note());
        HubFrames.putFloat(o, "claimed_at", c.claimedAt());
        HubFrames.putFloat(o, "lease_expires_at", c.leaseExpiresAt());
        o.put("status", c.status().wire());
        o.put("data_ref", c.dataRef());
        o.put("worktree", c.worktree());
        HubFrames.putStrings(o, "paths", c.paths());
        o.put("epoch", c.epoch());
        o.put("version", c.version());
        o.put("checkpoint", c.checkpoint());
        putGit(o, c.git());
        PathIdentityWire.write(o, c.pathIdentity());
    }

    private static void putGit(ObjectNode f, GitContext git) {
        if (git == null) {
            f.putNull("git");
        } else {
            ObjectNode g = f.putObject("git");
            g.put("branch", git.branch());
            g.put("base", git.base());
            g.put("auto_release_on", git.autoReleaseOn());
        }
    }
}
