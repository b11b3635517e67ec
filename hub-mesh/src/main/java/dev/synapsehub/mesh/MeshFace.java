package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.protocol.PrometheusText;
import dev.synapsehub.net.protocol.Request;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.synapsehub.net.protocol.PrometheusText.counter;
import static dev.synapsehub.net.protocol.PrometheusText.gauge;
import java.util.concurrent.CompletableFuture;

/**
 * What a mesh node adds to the hub's face. Its figures on {@code /metrics}, measured at each
 * scrape from the node itself:
 * Raft term, commit and applied index, whether it leads, its snapshots and log start, and on the
 * leader each follower's replication lag (the leader's commit index minus the follower's match
 * index, as Ratis' leader reports it). And the staleness block of seed 001 §12
 * ({@code staleness}: source, lastGlobalCommitAt, replicationLagMs, queueDepth, isStale) on
 * {@code state_snapshot}, {@code who_snapshot} and {@code board_snapshot} replies; a single hub
 * has no such extension, so its replies are unchanged. On {@code /health}: failed
 * ({@code mesh_node_failed}) once the node stopped applying its group's records, degraded while it
 * has known no leader for longer than an election's worth of time ({@code mesh_no_leader}) or its
 * snapshots fail ({@code mesh_snapshot_failing}). Answers no frames.
 */
final class MeshFace implements HubExtension {
    /** /health failed: this node stopped applying its group's records for good. */
    static final String NODE_FAILED = "mesh_node_failed";
    /** /health degraded: no leader known for longer than {@link LeaderAbsence#afterMillis}. */
    static final String NO_LEADER = "mesh_no_leader";
    /** /health degraded: the last snapshot this node tried could not be written. */
    static final String SNAPSHOT_FAILING = "mesh_snapshot_failing";

    private final MeshNode node;

    MeshFace(MeshNode node) {
        this.node = node;
    }

    /**
     * A node that could not apply a committed record (or load a snapshot) has left its group and
     * never decides again until restored from a healthy peer: it still takes its agents' writes
     * only to queue them or answer commit_unknown, so it is failed (503), not ok.
     */
    @Override
    public List<String> failedReasons() {
        return node.site().failure() != null ? List.of(NODE_FAILED) : List.of();
    }

    /**
     * No leader known for longer than an election's worth of time (its writes wait, then are
     * queued), or snapshots that fail (a restart replays more of the log; the log is not compacted).
     */
    @Override
    public List<String> degradedReasons() {
        List<String> out = new ArrayList<>(2);
        if (node.site().failure() == null && node.leaderMissing()) { // a failed node left its group: no news
            out.add(NO_LEADER);
        }
        if (node.snapshotStatus().failing()) {
            out.add(SNAPSHOT_FAILING);
        }
        return out;
    }

    /** Presence and ownership leases are this node's own (issue 13): a reclaim here fails closed. */
    @Override
    public boolean presenceIsNodeLocal() {
        return true;
    }

    @Override
    public void appendMetrics(StringBuilder out) {
        MeshStatus s = node.status();
        MeshNode.SnapshotStatus snap = node.snapshotStatus();
        gauge(out, "synapse_mesh_term", "The Raft term this node is in (the contract's lease epoch).", s.term());
        gauge(out, "synapse_mesh_leader", "1 while this node is the Raft leader, 0 otherwise.", s.leading() ? 1 : 0);
        gauge(out, "synapse_mesh_deciding", "1 while this node's writes can be decided (it applies its group's records"
                + " and knows a leader), 0 otherwise (an election, no quorum, or stopped for good: mesh_node_failed).",
                node.deciding() ? 1 : 0);
        gauge(out, "synapse_mesh_commit_index", "The last Raft log index this node knows committed.", s.commitIndex());
        gauge(out, "synapse_mesh_applied_index", "The last Raft log index this node's state holds.", s.appliedIndex());
        gauge(out, "synapse_mesh_applied_seq", "The last event seq this node's state holds.", s.appliedSeq());
        gauge(out, "synapse_mesh_quorum", "Votes a commit needs: floor(voters / 2) + 1, of the current configuration.",
                s.quorum());
        MeshVoters voters = node.voters();
        gauge(out, "synapse_mesh_voters", "Voters of the Raft configuration this node holds now.", voters.count());
        gauge(out, "synapse_mesh_membership_changing", "1 while a membership change is being committed, 0 otherwise.",
                voters.changing() ? 1 : 0);
        gauge(out, "synapse_mesh_last_snapshot_index", "Log index of this node's newest snapshot, -1 when none.",
                snap.lastSnapshotIndex());
        gauge(out, "synapse_mesh_log_start_index", "First index this node's Raft log still holds (compaction moves it).",
                snap.logStartIndex());
        counter(out, "synapse_mesh_snapshots_taken_total", "Snapshots this node wrote since start.", snap.taken());
        counter(out, "synapse_mesh_snapshots_corrupt_total", "Snapshot files refused as corrupt since start.",
                snap.corrupt());
        counter(out, "synapse_mesh_snapshot_failures_total", "Snapshots that could not be written since start.",
                snap.failed());
        counter(out, "synapse_mesh_rejected_records_total", "Records rejected as fenced or malformed since start.",
                s.rejectedRecords());
        counter(out, "synapse_mesh_forwarded_total", "Mutations this node forwarded to a leader since start.",
                s.forwarded());
        counter(out, "synapse_mesh_unknown_outcomes_total", "Forwarded mutations answered commit_unknown since start.",
                s.unknownOutcomes());
        counter(out, "synapse_mesh_unannounced_records_total", "Records applied while in touch but not announced to "
                + "this node's connections for their age (a catch-up, or this node's clock ahead of the leader's), since start.",
                node.unannouncedRecords());
        MeshNode.EdgeFailures edge = node.edgeFailures();
        counter(out, "synapse_mesh_edge_effect_failures_total",
                "Applied records whose edge effects (a reclaim's eviction) could not be applied here, since start.",
                edge.edgeEffects());
        counter(out, "synapse_mesh_remote_publish_failures_total",
                "Other nodes' decisions that could not be published to this node's connections, since start.",
                edge.remotePublishes());
        counter(out, "synapse_mesh_forward_decision_faults_total",
                "On the leader: forwarded mutations whose decision failed here, answered as a refusal, since start.",
                node.forwardDecisionFaults());
        counter(out, "synapse_mesh_channel_reset_faults_total",
                "Resets of a Raft client's channel that threw (logged; the failed request still retried or answered), since start.",
                node.channelResetFaults());
        LeaderAsks.Failures asks = node.leaderAskFailures();
        counter(out, "synapse_mesh_leader_ask_send_failures_total",
                "Asks of the leader whose send threw before leaving this node (each resent), since start.",
                asks.sends());
        counter(out, "synapse_mesh_leader_ask_task_failures_total",
                "Scheduled tasks of asks of the leader (a resend, a gap timer) that failed, since start.", asks.tasks());
        counter(out, "synapse_mesh_leadership_listener_failures_total",
                "Leadership listeners (federation's links to owning hubs) that threw, since start.", asks.listeners());
        counter(out, "synapse_mesh_leader_ask_answers_forgotten_total",
                "On the leader: answers of asks let go before their time because too many were kept (a resend of one"
                        + " is refused as unknown, never run again), since start.", asks.answersForgotten());
        MeshTlsReload tls = node.tlsReload();
        if (tls != null) {
            counter(out, "synapse_mesh_tls_reloads_total", "Changed mesh TLS files loaded since start (no restart).",
                    tls.reloads());
            counter(out, "synapse_mesh_tls_reload_failures_total",
                    "Changed mesh TLS files refused since start (the previous ones stay in force).", tls.failures());
        }
        IntentCounters q = node.intentCounters();
        gauge(out, "synapse_mesh_queue_depth", "Queued intents on this node waiting for replay (seed 001 §9).",
                q.depth());
        counter(out, "synapse_mesh_intents_queued_total", "Strong writes this node queued for lack of a quorum since start.",
                q.queued());
        counter(out, "synapse_mesh_intents_reconciled_total", "Queued intents reconciled (any §10 outcome) since start.",
                q.reconciled());
        counter(out, "synapse_mesh_intent_failures_total",
                "Writes that could not be queued durably and replay steps that failed, since start.", q.failures());
        Map<String, Long> match = new TreeMap<>(s.peerMatchIndex());
        match.forEach((peer, index) -> PrometheusText.sample(out, "synapse_mesh_peer_lag_entries",
                "On the leader: its commit index minus each follower's replicated (match) index.", "gauge",
                "{peer=\"" + PrometheusText.escapeLabel(peer) + "\"}", Math.max(0, s.commitIndex() - index)));
    }

    @Override
    public void labelRead(ObjectNode reply) {
        reply.set("staleness", node.staleness().toJson());
    }

    /** A read that asked to be linearizable waited for the read index: its label says so. */
    @Override
    public void labelRead(ObjectNode reply, Request request) {
        if (!LinearizableReads.asked(request.frame())) {
            labelRead(reply);
            return;
        }
        ObjectNode block = node.staleness().toJson();
        block.put(LinearizableReads.FIELD, LinearizableReads.LINEARIZABLE);
        block.put("replicationLagMs", 0); // it holds every write acknowledged before the request arrived
        block.put("isStale", false);
        reply.set("staleness", block);
    }

    /** The cockpit's Cluster view: this node's leader, term, indexes, lag, queue, snapshot and staleness. */
    @Override
    public ObjectNode cockpitStatus(double now) {
        return MeshCockpit.status(node);
    }

    /** The cockpit's feed also carries what other nodes decided and this node applied. */
    @Override
    public void tapReplicated(java.util.function.Consumer<java.util.List<dev.synapsehub.core.journal.JournaledEvent>> sink) {
        node.tapReplicated(sink);
    }

    @Override
    public void tapRestored(Runnable sink) {
        node.tapRestored(sink);
    }

    /** {@code "consistency": "linearizable"} on a read request: first catch up to the leader's read index. */
    @Override
    public CompletableFuture<Void> readBarrier(Request request) {
        return LinearizableReads.asked(request.frame()) ? node.reads().barrier() : null;
    }
}
