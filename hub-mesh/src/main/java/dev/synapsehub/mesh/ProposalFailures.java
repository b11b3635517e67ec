package dev.synapsehub.mesh;

import dev.synapsehub.core.journal.CommitUnknownException;
import dev.synapsehub.core.journal.JournalException;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.ResourceUnavailableException;

/**
 * What a failed proposal of the leader's own record proves: a {@link JournalException} ("not
 * proposed": the actor answers its batch "nothing was applied") when Ratis refused it before
 * appending it to the log, a {@link CommitUnknownException} (queued or commit_unknown) otherwise.
 */
final class ProposalFailures {
    /**
     * How Ratis 3.2.2 words the pending-request limit refused before the append
     * (RaftServerImpl.getResourceUnavailableReply); "Failed to add a pending write request" comes
     * after the entry was appended (the leader stepped down meanwhile) and may still commit.
     */
    private static final String NOT_ACQUIRED = "Failed to acquire a pending write request";

    private ProposalFailures() {
    }

    /** The failure of a proposal Ratis answered without success. */
    static JournalException ofReply(RaftClientReply reply) {
        Exception e = reply.getException();
        if (reply.getLeaderNotReadyException() != null) {
            return new JournalException("the record was not proposed: this leader is not ready yet");
        }
        if (e instanceof LeaderSteppingDownException) {
            return new JournalException("the record was not proposed: this leader is stepping down", e);
        }
        // NotLeader may come after the record was appended: the next leader may still commit it
        return new CommitUnknownException("the proposal was not confirmed: " + e, e);
    }

    /** The failure of a proposal whose reply future failed with {@code failure}. */
    static JournalException ofFailure(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof ResourceUnavailableException && String.valueOf(t.getMessage()).contains(NOT_ACQUIRED)) {
                return new JournalException("the record was not proposed: the leader's pending requests are at their"
                        + " limit", t);
            }
        }
        return new CommitUnknownException("the proposal failed: " + failure, failure);
    }
}
