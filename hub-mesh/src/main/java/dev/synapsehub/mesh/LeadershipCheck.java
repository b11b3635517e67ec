package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Confirms that this node still leads its Raft term at a moment after it was asked (seed 001
 * §8, §12): it asks every other voter, afresh, which term it is in, and succeeds once a majority
 * of the voters (itself included; of both configurations during a membership change) answer
 * with its own term. A node in that term has voted for no later leader, so no later leader had
 * a majority, nor committed anything, before the answers came: this node's state then holds
 * every write acknowledged before the confirmation was asked for. Ratis 3.2.2's ReadIndex does
 * not give this: a leader whose commit index has not moved since a read index was last
 * acknowledged answers the next one at once, without a heartbeat round, so a deposed leader that
 * still believes it leads (up to the election timeout) would confirm from its stale state.
 * Rounds are shared: every caller waits for a round that started after it asked. A voter that
 * has not answered with this node's term yet is asked again within the round's bound (a node
 * of a just-started mesh, a stream being reconnected), so a round ends as soon as a majority can
 * answer, not at its bound: an actor waits on it before answering decisions without events.
 */
final class LeadershipCheck {
    /** The query every node answers with its current term. */
    static final String QUERY = "term_check";
    /** The pause before a voter that did not answer with this node's term is asked again. */
    static final long RETRY_MILLIS = 50;
    private static final ByteString QUERY_BYTES = ByteString.copyFrom(MeshJson.bytes(MeshJson.MAPPER.createObjectNode()
            .put("protocol", MeshProtocol.PROTOCOL).put("version", MeshProtocol.VERSION)
            .put(MeshQueueProbe.QUERY, QUERY)));

    /** What the check reads of its node. */
    interface Node {
        /** True while this node leads a term and decides. */
        boolean decides();

        /** The Raft term this node is in now. */
        long term();

        /** The voters of this node's current configuration. */
        MeshVoters voters();
    }

    private final String nodeId;
    private final RaftGroupId groupId;
    private final RaftClientRpc rpc;
    private final AtomicLong callIds;
    private final Node node;
    private final long timeoutMillis;
    private final ScheduledExecutorService scheduler;
    private final ChannelResets resets;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong confirmed = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    /** The callers waiting for the next round (guarded by this). */
    private CompletableFuture<Void> next;
    /** True while a round is out (guarded by this). */
    private boolean running;

    /**
     * @param callIds shared with every other user of {@code rpc}: replies are matched by call id per server
     * @param resets shared with every other user of {@code rpc}: a reset closes the channel for them all
     * @param scheduler runs the asks of a voter asked again
     */
    LeadershipCheck(String nodeId, RaftGroupId groupId, RaftClientRpc rpc, AtomicLong callIds, ChannelResets resets,
                    Node node, ScheduledExecutorService scheduler, long timeoutMillis) {
        this.resets = resets;
        this.scheduler = scheduler;
        this.nodeId = nodeId;
        this.groupId = groupId;
        this.rpc = rpc;
        this.callIds = callIds;
        this.node = node;
        this.timeoutMillis = timeoutMillis;
    }

    /** This node's answer to {@link #QUERY}: the term it is in now. */
    static ObjectNode answer(long term) {
        return MeshJson.MAPPER.createObjectNode().put("term", term);
    }

    /**
     * Completes once a round of term answers that started after this call confirmed that this
     * node leads; fails (an {@link IllegalStateException} saying why) when it does not, or when no
     * majority answered within the commit timeout.
     */
    CompletableFuture<Void> confirm() {
        CompletableFuture<Void> mine;
        synchronized (this) {
            if (next == null) {
                next = new CompletableFuture<>();
            }
            mine = next;
            if (!running) {
                startRound();
            }
        }
        return mine;
    }

    /** Rounds that confirmed the lead, since start. */
    long confirmed() {
        return confirmed.get();
    }

    /** Rounds that could not confirm it, since start. */
    long failed() {
        return failed.get();
    }

    /** Under this object's lock: sends a round for the callers waiting now. */
    private void startRound() {
        running = true;
        CompletableFuture<Void> waiting = next;
        next = null;
        CompletableFuture<Void> round;
        try {
            round = round();
        } catch (RuntimeException e) {
            round = CompletableFuture.failedFuture(e);
        }
        round.whenComplete((done, fault) -> {
            if (fault == null) {
                confirmed.incrementAndGet();
                waiting.complete(null);
            } else {
                failed.incrementAndGet();
                Throwable cause = fault instanceof java.util.concurrent.CompletionException && fault.getCause() != null
                        ? fault.getCause() : fault;
                waiting.completeExceptionally(cause instanceof IllegalStateException ? cause
                        : new IllegalStateException("no majority confirmed the lead: " + LogRedactor.scrub(cause)));
            }
            synchronized (this) {
                running = false;
                if (next != null) {
                    startRound(); // those who asked while this round was out wait for one sent after them
                }
            }
        });
    }

    private CompletableFuture<Void> round() {
        if (!node.decides()) {
            return CompletableFuture.failedFuture(new IllegalStateException("this node does not lead"));
        }
        Round round = new Round(node.term(), node.voters());
        if (majorities(round.voters, round.agreed)) {
            round.result.complete(null);
            return round.result;
        }
        Set<String> others = new LinkedHashSet<>(round.voters.current());
        others.addAll(round.voters.previous());
        others.remove(nodeId);
        for (String peer : others) {
            ask(round, peer);
        }
        return round.result.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    /** One round: the term it confirms, the voters it counts, who agreed so far, and its outcome. */
    private final class Round {
        final long term;
        final MeshVoters voters;
        final Set<String> agreed = new HashSet<>();
        final CompletableFuture<Void> result = new CompletableFuture<>();

        Round(long term, MeshVoters voters) {
            this.term = term;
            this.voters = voters;
            agreed.add(nodeId);
        }
    }

    /**
     * Asks {@code peer} for its term; while the round lasts, a voter that did not answer with it (a
     * failed stream, a refusal, an earlier term not yet left) is asked again after a short pause:
     * any answer sent after the round began counts, and one transient failure must not hold the
     * round (and an actor waiting on it) until its bound.
     */
    private void ask(Round round, String peer) {
        if (round.result.isDone()) {
            return;
        }
        RaftPeerId to = RaftPeerId.valueOf(peer);
        RaftClientRequest r = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(to).setGroupId(groupId)
                .setCallId(callIds.incrementAndGet()).setMessage(Message.valueOf(QUERY_BYTES))
                .setType(AnyNodeRead.TYPE).setTimeoutMs(timeoutMillis).build();
        ChannelResets.Sent on = resets.sent(peer, System.nanoTime());
        CompletableFuture<RaftClientReply> sent;
        try {
            sent = rpc.sendRequestAsyncUnordered(r);
        } catch (RuntimeException e) {
            askAgain(round, peer);
            return;
        }
        sent.whenComplete((reply, fault) -> {
            if (fault != null) {
                Throwable cause = fault instanceof java.util.concurrent.CompletionException && fault.getCause() != null
                        ? fault.getCause() : fault;
                // a failed stream stays closed until its channel is reset: once per channel, the next ask reconnects
                resets.reset(on, cause, () -> rpc.handleException(to, cause, true));
                askAgain(round, peer);
                return;
            }
            resets.answered(peer, System.nanoTime());
            long theirs = -1;
            if (reply != null && reply.isSuccess()) {
                try {
                    theirs = MeshJson.tree(reply.getMessage().getContent().toByteArray()).path("term").asLong(-1);
                } catch (IllegalArgumentException unreadable) {
                    theirs = -1;
                }
            }
            if (theirs > round.term) {
                round.result.completeExceptionally(new IllegalStateException("voter " + peer + " is in a later term ("
                        + theirs + " > " + round.term + "): this node no longer leads"));
            } else if (theirs == round.term) {
                synchronized (round.agreed) {
                    round.agreed.add(peer);
                    if (majorities(round.voters, round.agreed)) {
                        round.result.complete(null);
                    }
                }
            } else {
                askAgain(round, peer);
            }
        });
    }

    private void askAgain(Round round, String peer) {
        if (round.result.isDone()) {
            return;
        }
        try {
            scheduler.schedule(() -> ask(round, peer), RETRY_MILLIS, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            round.result.completeExceptionally(new IllegalStateException("this node is closing"));
        }
    }

    /** A majority of the current voters, and of the previous ones during a change, agreed. */
    private static boolean majorities(MeshVoters voters, Set<String> agreed) {
        return majority(voters.current(), agreed) && (voters.previous().isEmpty()
                || majority(voters.previous(), agreed));
    }

    private static boolean majority(List<String> voters, Set<String> agreed) {
        long yes = voters.stream().filter(agreed::contains).count();
        return yes >= MeshConfig.quorum(voters.size());
    }
}
