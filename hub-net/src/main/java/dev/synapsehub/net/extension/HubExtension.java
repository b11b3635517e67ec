package dev.synapsehub.net.extension;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.protocol.Request;

import java.util.concurrent.CompletableFuture;

/**
 * A module outside hub-net (federation) that answers frame types of its own and may take over
 * claims before the hub's own claim path; the composition root plugs it in, so hub-net never
 * depends on it. Every method runs on a connection's event loop unless said otherwise, and must
 * not block.
 */
public interface HubExtension {
    /** Called once from {@code HubServer.start}, before the port is bound; by default nothing to bind. */
    default void bind(HubServices hub, ClaimService claims) {
    }

    /**
     * On a replicated hub (a mesh node), called once before {@link #bind}: what the cluster does
     * from one place is asked of its current leader through {@code leader}. A single hub never calls it.
     */
    default void joinCluster(ClusterLeader leader) {
    }

    /** True for the (normalised) frame types this extension answers; by default none (a gate, figures only). */
    default boolean handles(String type) {
        return false;
    }

    /**
     * Answers one frame of a type it {@link #handles}; never called for an extension that answers none.
     * An answer given later, off this loop, is registered now with
     * {@link dev.synapsehub.net.protocol.Outbox#answeredWhen}, so that the connection's answers to
     * its later frames do not overtake it, and handed on with {@code sendInOrder} or {@code broadcast}.
     */
    default void handle(Request request) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " answers no frame type");
    }

    /**
     * For every verb frame, after per-message authentication and before the verb runs: false
     * when the extension refused the frame itself (the federation frame gate, contract F8).
     */
    default boolean admits(Request request) {
        return true;
    }

    /**
     * For a {@code claim} frame, after the envelope pipeline: true when this hub's own claim
     * path decides it, false when the extension answered it itself (refused or forwarded).
     */
    default boolean claimIsLocal(Request claim) {
        return true;
    }

    /**
     * For a {@code claim} frame: true when this hub's own claim path would decide it now, with no
     * side effect (nothing answered, nothing forwarded); {@link #claimIsLocal} then acts on it.
     */
    default boolean claimResolvesLocal(Request claim) {
        return true;
    }

    /**
     * Adds members to a read reply ({@code state_snapshot}, {@code who_snapshot},
     * {@code board_snapshot}) just before it is sent: a replicated hub labels how fresh the
     * state it read is. Runs on the outbox thread; must not block.
     */
    default void labelRead(ObjectNode reply) {
    }

    /**
     * {@link #labelRead(ObjectNode)} knowing the request answered (a replicated hub says whether
     * the read was linearizable, as the request asked).
     */
    default void labelRead(ObjectNode reply, Request request) {
        labelRead(reply);
    }

    /**
     * The renderer of the first answer of a keyed request of a type this extension
     * {@link #handles}, rebuilt from the request alone: a replicated hub's leader decides a
     * follower's keyed request and stores the answer the follower's requester gets (and every
     * retry replays). Null when the type keeps no stored answer. Any thread; must not block.
     */
    default dev.synapsehub.core.actor.ResponseRenderer storedResponse(Request request) {
        return null;
    }

    /**
     * Publishes to this node's connections what a decision committed for another mesh node's
     * request of a type this extension {@link #handles} tells everyone (that node answers its
     * requester; {@code request.session()} is null). Runs on the outbox thread; must not block.
     */
    default void publishCommitted(Request request, dev.synapsehub.core.reply.Reply reply) {
    }

    /**
     * Before a read verb ({@code state_request}, {@code who_request}, {@code board_request})
     * reads the state for {@code request}: null to read at once, else a future the read waits
     * for (a replicated hub catching up to a linearizable point when the request asks for one);
     * its failure is answered like a refused read. Must not block.
     */
    default CompletableFuture<Void> readBarrier(Request request) {
        return null;
    }

    /**
     * A dead-letter escalation this hub decided has committed (its broadcast is out): federation
     * reports it to the hub that owns the recipient (contract §11.5). Any thread; must not block.
     */
    default void deadLetterEscalated(dev.synapsehub.core.event.DeadLetterEscalationEvent escalation) {
    }

    /**
     * True when this hub is one node of several that agents reach, each seeing only its own
     * connections (a mesh node: presence and ownership leases are node-local), so no check here
     * can tell whether a name is online or leased elsewhere.
     */
    default boolean presenceIsNodeLocal() {
        return false;
    }

    /** Appends Prometheus text exposition lines for {@code /metrics} (any thread). */
    default void appendMetrics(StringBuilder out) {
    }

    /**
     * Why this extension holds the hub {@code degraded} on {@code /health} now, as stable
     * snake_case words (empty: nothing). Any thread; must not block.
     */
    default java.util.List<String> degradedReasons() {
        return java.util.List.of();
    }

    /**
     * Why this extension holds the hub {@code failed} on {@code /health} now (HTTP 503: it cannot
     * do its job, so a probe or load balancer should send agents elsewhere), as stable snake_case
     * words (empty: nothing). Any thread; must not block.
     */
    default java.util.List<String> failedReasons() {
        return java.util.List.of();
    }

    /**
     * This extension's status for the operator cockpit's Cluster view ({@code /ui}), measured
     * now, with a {@code kind} member ({@code federation}, {@code mesh}); null for none. Runs on
     * the cockpit thread about once a second; must not block.
     */
    default ObjectNode cockpitStatus(double now) {
        return null;
    }

    /**
     * One page of a list this extension shows in the cockpit (federation: {@code observed}, the
     * advisory claims of watched peers): the rows one of whose fields {@code matches}, from
     * {@code offset}, at most {@code limit}, with {@code total} and {@code matched} counts; null
     * when it has no list of that name. Runs on the cockpit thread; must not block.
     */
    default ObjectNode cockpitRows(String list, java.util.function.Predicate<String> matches, int offset, int limit,
                                   double now) {
        return null;
    }

    /**
     * Hands {@code sink} each batch of committed events this hub applies without having decided
     * it (a mesh node applying what another node decided), so that the cockpit's live feed
     * sees every committed change. Called once, when the cockpit starts; {@code sink} never blocks.
     */
    default void tapReplicated(java.util.function.Consumer<java.util.List<dev.synapsehub.core.journal.JournaledEvent>> sink) {
    }

    /**
     * Calls {@code sink} each time this hub's state is replaced wholesale without events (a mesh
     * node installing a snapshot), in order with the batches given to {@link #tapReplicated}, so
     * that the cockpit's open pages reload. Called once, when the cockpit starts; {@code sink} never blocks.
     */
    default void tapRestored(Runnable sink) {
    }

    /** The server is closing: stop background work (called once, off the event loops). */
    default void close() {
    }
}
