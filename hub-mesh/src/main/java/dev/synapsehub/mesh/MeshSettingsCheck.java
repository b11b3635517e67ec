package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Compares this node's governance settings with the leader's (docs/mesh.md, "Nodes agree on
 * their governance settings"). A follower asks the leader it knows, on the node's scheduler
 * and without waiting (a stale read the leader's state machine answers from memory), about
 * once every {@link #EVERY_MILLIS}; the leader is the reference and agrees with itself. A
 * mismatch is logged at ERROR once per distinct pair (leader's fingerprint, own fingerprint),
 * naming the differing settings; its end is logged once at INFO.
 */
final class MeshSettingsCheck {
    private static final System.Logger LOG = System.getLogger(MeshSettingsCheck.class.getName());
    /** How often a start waiting for the first comparison looks whether a stop was requested. */
    private static final long STOP_POLL_MILLIS = 50;

    /** The probe's query value ({@link MeshQueueProbe#QUERY} member). */
    static final String QUERY = "governance_settings";
    /** How often a follower asks the leader. */
    static final long EVERY_MILLIS = 1000;
    /**
     * How often the node is scheduled to check: while {@code unknown} it asks this often (a leader
     * that cannot answer is then counted as often in the failures), since a node holding an
     * ownership map refuses claims until its first answer; once it knows, every {@link #EVERY_MILLIS}.
     */
    static final long TICK_MILLIS = 100;
    /** The bound on one ask while {@code unknown}, so a hung first ask does not hold the comparison up. */
    static final long UNKNOWN_TIMEOUT_MILLIS = 500;

    /** Where this node stands against the leader. */
    enum State {
        /** Not compared yet (no leader heard of, or it has not answered yet). */
        UNKNOWN,
        /** Same fingerprint as the leader (or this node leads). */
        AGREE,
        /** A different fingerprint from the leader's. */
        MISMATCH;

        String word() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * The last comparison.
     *
     * @param leader the leader compared with (null when unknown)
     * @param leaderSettings the leader's settings as it answered (null when unknown)
     * @param differing the settings whose values differ, sorted (empty unless MISMATCH)
     */
    record View(State state, String leader, MeshGovernanceSettings leaderSettings, List<String> differing) {
        View {
            differing = List.copyOf(differing);
        }

        static final View UNKNOWN = new View(State.UNKNOWN, null, null, List.of());

        boolean mismatched() {
            return state == State.MISMATCH;
        }
    }

    private final String nodeId;
    private final RaftClientRpc rpc;
    private final RaftGroupId groupId;
    private final Supplier<RaftPeerId> leader;
    private final long timeoutMillis;
    /** The bound on one ask while unknown (at most {@link #timeoutMillis}). */
    private final long unknownTimeoutMillis;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    /** A failed stream stays closed ("is closed") until its channel is reset: once per channel, as the other asks do. */
    private final ChannelResets resets = new ChannelResets();
    private final AtomicBoolean asking = new AtomicBoolean();
    private final AtomicLong mismatchesSeen = new AtomicLong();
    private final AtomicLong checkFailures = new AtomicLong();
    private final AtomicLong refusedClaims = new AtomicLong();
    private volatile MeshGovernanceSettings own = MeshGovernanceSettings.NONE;
    private volatile View view = View.UNKNOWN;
    /** The mismatch last logged (guarded by this), so each distinct one is logged once. */
    private String loggedMismatch;
    /** True while asking the leader fails (guarded by this): logged once per streak. */
    private boolean failing;
    /** When the scheduler last checked (its thread only); 0 before the first. */
    private long lastCheckNanos;

    MeshSettingsCheck(String nodeId, RaftClientRpc rpc, RaftGroupId groupId, Supplier<RaftPeerId> leader,
                      long timeoutMillis) {
        this(nodeId, rpc, groupId, leader, timeoutMillis, UNKNOWN_TIMEOUT_MILLIS);
    }

    /**
     * With the bound on an ask while unknown set: a test that answers asks by hand on a loaded
     * host sets it long, so a slow test thread is not taken for a leader that never answered.
     */
    MeshSettingsCheck(String nodeId, RaftClientRpc rpc, RaftGroupId groupId, Supplier<RaftPeerId> leader,
                      long timeoutMillis, long unknownTimeoutMillis) {
        this.nodeId = nodeId;
        this.rpc = rpc;
        this.groupId = groupId;
        this.leader = leader;
        this.timeoutMillis = timeoutMillis;
        this.unknownTimeoutMillis = unknownTimeoutMillis;
    }

    /** Sets this node's own settings (before the node starts). */
    void settings(MeshGovernanceSettings settings) {
        this.own = settings;
    }

    /** This node's own settings. */
    MeshGovernanceSettings own() {
        return own;
    }

    /** The last comparison. */
    View view() {
        return view;
    }

    /** Distinct mismatches seen (each logged once) since start. */
    long mismatchesSeen() {
        return mismatchesSeen.get();
    }

    /** Asks of the leader that failed (no answer in time, or an unreadable one) since start. */
    long checkFailures() {
        return checkFailures.get();
    }

    /** Counts a claim refused here because of a mismatch. */
    void refusedClaim() {
        refusedClaims.incrementAndGet();
    }

    /** Claims refused here because of a mismatch, since start. */
    long refusedClaims() {
        return refusedClaims.get();
    }

    /** Logs the effective settings once, at start. */
    void logEffective() {
        LOG.log(System.Logger.Level.INFO, "mesh node " + nodeId + " governance settings " + own.fingerprint() + ": "
                + own.effective());
    }

    /**
     * Waits (a starting node's thread, never a Netty one) until this node has compared its settings
     * with a leader, at most {@code millis}; at once when it holds no ownership map (it refuses
     * nothing while {@code unknown}). True when compared (or nothing to wait for).
     */
    boolean awaitCompared(long millis) throws InterruptedException {
        return awaitCompared(millis, () -> false);
    }

    /** As {@link #awaitCompared(long)}, giving up (false) soon after {@code stopRequested} holds. */
    synchronized boolean awaitCompared(long millis, java.util.function.BooleanSupplier stopRequested)
            throws InterruptedException {
        String map = own.get(MeshSettingsGate.OWNERSHIP);
        if (map == null || map.isEmpty()) {
            return true;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (view.state() == State.UNKNOWN) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || stopRequested.getAsBoolean()) {
                return false;
            }
            // a signal sets a flag and notifies no one: wake now and then to look at it
            TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(STOP_POLL_MILLIS)));
        }
        return true;
    }

    /** One tick of the node's scheduler: a check when one is due (see {@link #TICK_MILLIS}). */
    void tick() {
        long now = System.nanoTime();
        boolean eager = view.state() == State.UNKNOWN; // a node with a map refuses claims until it knows
        if (!eager && lastCheckNanos != 0 && now - lastCheckNanos < TimeUnit.MILLISECONDS.toNanos(EVERY_MILLIS)) {
            return;
        }
        lastCheckNanos = now;
        check();
    }

    /** One check: compares with the leader, without blocking the calling thread (the node's scheduler). */
    void check() {
        try {
            checkOnce();
        } catch (RuntimeException e) {
            // a task of a scheduled executor that throws is never run again: count, log once, and keep checking
            failed(null, LogRedactor.scrub(e.getMessage()));
        }
    }

    private void checkOnce() {
        RaftPeerId current = leader.get();
        if (current == null) {
            return; // keep the last verdict: a mismatch stays visible while no leader is known
        }
        if (current.toString().equals(nodeId)) {
            settle(current.toString(), own); // the leader is the reference
            return;
        }
        if (!asking.compareAndSet(false, true)) {
            return; // the previous ask has not come back yet
        }
        // while unknown an ask that hangs (a peer's connection still being set up at start) is given up soon
        long bound = view.state() == State.UNKNOWN ? Math.min(timeoutMillis, unknownTimeoutMillis) : timeoutMillis;
        RaftClientRequest request;
        try {
            request = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(current).setGroupId(groupId)
                    .setCallId(callIds.incrementAndGet()).setMessage(Message.valueOf(ByteString.copyFrom(
                            MeshJson.bytes(query())))).setType(AnyNodeRead.TYPE)
                    .setTimeoutMs(bound).build();
            ChannelResets.Sent on = resets.sent(current.toString(), System.nanoTime());
            rpc.sendRequestAsyncUnordered(request).orTimeout(bound, TimeUnit.MILLISECONDS)
                    .whenComplete((reply, fault) -> {
                        try {
                            if (fault != null) {
                                Throwable cause = fault instanceof java.util.concurrent.CompletionException
                                        && fault.getCause() != null ? fault.getCause() : fault;
                                // reset, or every later ask fails on the closed stream
                                resets.reset(on, cause, () -> rpc.handleException(current, cause, true));
                            } else {
                                resets.answered(current.toString(), System.nanoTime());
                            }
                            if (!current.equals(leader.get())) {
                                return; // a late answer of a former leader: the new one is asked next
                            }
                            if (fault != null || reply == null || !reply.isSuccess()) {
                                failed(current, fault != null ? LogRedactor.scrub(fault)
                                        : reply == null ? "no reply" : LogRedactor.scrub(reply.getException()));
                                return;
                            }
                            MeshGovernanceSettings theirs = read(MeshJson.tree(
                                    reply.getMessage().getContent().toByteArray()));
                            settle(current.toString(), theirs);
                        } catch (RuntimeException e) {
                            failed(current, LogRedactor.scrub(e.getMessage()));
                        } finally {
                            asking.set(false);
                        }
                    });
        } catch (RuntimeException e) {
            asking.set(false);
            failed(current, LogRedactor.scrub(e.getMessage()));
        }
    }

    /** The probe request. */
    static ObjectNode query() {
        ObjectNode q = MeshJson.MAPPER.createObjectNode();
        q.put("protocol", MeshProtocol.PROTOCOL);
        q.put("version", MeshProtocol.VERSION);
        q.put(MeshQueueProbe.QUERY, QUERY);
        return q;
    }

    /** This node's answer to {@link #QUERY}: its own settings and its last comparison with the leader. */
    ObjectNode answer() {
        MeshGovernanceSettings mine = own;
        View v = view;
        ObjectNode o = MeshJson.MAPPER.createObjectNode();
        o.put("node", nodeId);
        o.put("fingerprint", mine.fingerprint());
        ObjectNode settings = o.putObject("settings");
        mine.settings().forEach(settings::put);
        o.put("state", v.state().word());
        o.put("leader", v.leader());
        o.put("leader_fingerprint", v.leaderSettings() == null ? null : v.leaderSettings().fingerprint());
        v.differing().forEach(o.putArray("differing")::add);
        return o;
    }

    /** The settings in an {@link #answer()}; fails on one that does not carry them or whose fingerprint does not match. */
    static MeshGovernanceSettings read(JsonNode answer) {
        JsonNode settings = answer.get("settings");
        if (settings == null || !settings.isObject()) {
            throw new IllegalArgumentException("the leader's answer carries no governance settings");
        }
        Map<String, String> values = new TreeMap<>();
        settings.fields().forEachRemaining(e -> values.put(e.getKey(), e.getValue().asText()));
        MeshGovernanceSettings s = MeshGovernanceSettings.of(values);
        if (!s.fingerprint().equals(answer.path("fingerprint").asText())) {
            throw new IllegalArgumentException("the leader's governance settings do not match its fingerprint");
        }
        return s;
    }

    private synchronized void settle(String leaderId, MeshGovernanceSettings theirs) {
        MeshGovernanceSettings mine = own;
        if (failing) {
            failing = false;
            LOG.log(System.Logger.Level.INFO, "mesh node " + nodeId + " compares its governance settings with the"
                    + " leader " + leaderId + " again");
        }
        List<String> differing = mine.differing(theirs);
        View before = view;
        notifyAll(); // a start waiting in awaitCompared
        if (differing.isEmpty()) {
            view = new View(State.AGREE, leaderId, theirs, List.of());
            if (before.mismatched()) {
                loggedMismatch = null;
                LOG.log(System.Logger.Level.INFO, "mesh node " + nodeId + ": governance settings now agree with the"
                        + " leader " + leaderId + " (" + mine.fingerprint() + ")");
            }
            return;
        }
        view = new View(State.MISMATCH, leaderId, theirs, differing);
        // a new leader with the same settings is the same mismatch: not logged again
        String key = theirs.fingerprint() + " " + mine.fingerprint();
        if (!key.equals(loggedMismatch)) {
            loggedMismatch = key;
            mismatchesSeen.incrementAndGet();
            StringBuilder what = new StringBuilder();
            for (String name : differing) {
                what.append(what.length() == 0 ? "" : "; ").append(name).append(": here ")
                        .append(show(mine.get(name))).append(", leader ").append(show(theirs.get(name)));
            }
            LOG.log(System.Logger.Level.ERROR, "mesh node " + nodeId + " was started with governance settings that"
                    + " differ from the leader " + leaderId + "'s (" + mine.fingerprint() + " here, "
                    + theirs.fingerprint() + " there): " + what + ". This node reports /health degraded"
                    + " (mesh_settings_mismatch) and refuses claims in governed namespaces until it is restarted"
                    + " with the leader's flags");
        }
    }

    private synchronized void failed(RaftPeerId asked, String why) {
        checkFailures.incrementAndGet();
        if (!failing) {
            failing = true;
            LOG.log(System.Logger.Level.WARNING, "mesh node " + nodeId + ": cannot compare governance settings with"
                    + " the leader " + asked + ": " + why + "; the last verdict (" + view.state().word()
                    + ") stands, asking again every "
                    + (view.state() == State.UNKNOWN ? TICK_MILLIS : EVERY_MILLIS) + " ms");
        }
    }

    private static String show(String value) {
        return value == null ? "(not set)" : value.isEmpty() ? "(empty)" : "'" + value + "'";
    }

    /** Channel resets that threw, since start ({@code synapse_mesh_channel_reset_faults_total}). */
    long channelResetFaults() {
        return resets.failedResets();
    }
}
