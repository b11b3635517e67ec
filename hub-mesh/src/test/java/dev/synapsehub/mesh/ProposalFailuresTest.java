package dev.synapsehub.mesh;

import dev.synapsehub.core.journal.CommitUnknownException;
import dev.synapsehub.core.journal.JournalException;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.RaftException;
import org.apache.ratis.protocol.exceptions.ResourceUnavailableException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A leader's own proposal that Ratis refused before appending it is "not proposed" (nothing was
 * applied), not commit_unknown, which queues the write and reports an outcome that can never come.
 */
class ProposalFailuresTest {
    private static final RaftGroupMemberId LEADER = RaftGroupMemberId.valueOf(RaftPeerId.valueOf("n1"),
            RaftGroupId.randomId());

    private static RaftClientReply refused(RaftException e) {
        return RaftClientReply.newBuilder().setClientId(ClientId.randomId()).setServerId(LEADER).setCallId(1)
                .setException(e).build();
    }

    @Test
    void aProposalRefusedBeforeTheAppendWasNotProposed() {
        // RaftServerImpl.checkLeaderState and getResourceUnavailableReply, in Ratis 3.2.2's words
        JournalException steppingDown = ProposalFailures.ofReply(refused(
                new LeaderSteppingDownException(LEADER + " is stepping down")));
        JournalException notReady = ProposalFailures.ofReply(refused(new LeaderNotReadyException(LEADER)));
        JournalException atLimit = ProposalFailures.ofFailure(new CompletionException(new ResourceUnavailableException(
                LEADER + ": Failed to acquire a pending write request for RaftClientRequest:client-1->n1")));
        for (JournalException e : List.of(steppingDown, notReady, atLimit)) {
            assertThat(e).as(e.getMessage()).isNotInstanceOf(CommitUnknownException.class);
            assertThat(e.getMessage()).startsWith("the record was not proposed");
        }
    }

    @Test
    void aProposalThatMayHaveBeenAppendedStaysUnknown() {
        // appended, then the leader stepped down before the entry joined the pending requests
        assertThat(ProposalFailures.ofFailure(new ResourceUnavailableException(
                LEADER + ": Failed to add a pending write request for RaftClientRequest:client-1->n1")))
                .isInstanceOf(CommitUnknownException.class);
        assertThat(ProposalFailures.ofReply(refused(new NotLeaderException(LEADER, null, List.of()))))
                .isInstanceOf(CommitUnknownException.class);
        assertThat(ProposalFailures.ofFailure(new java.io.IOException("the log could not be written")))
                .isInstanceOf(CommitUnknownException.class);
    }
}
