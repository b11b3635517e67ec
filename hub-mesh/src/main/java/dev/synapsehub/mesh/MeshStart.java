package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.RaftGroup;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * The group a node's Raft server starts with. A node whose storage holds a Raft configuration
 * starts with it (Ratis reads it back). One whose storage holds none asks its peers first:
 * <ul>
 *   <li>none answers: a founder given {@code --mesh-bootstrap} starts with its peers (a new mesh), one
 *       without it is refused ({@link MeshFoundingUnconfirmed}), any other node starts with no members;</li>
 *   <li>the running mesh's voters do not name it: no members (a new node, or one removed and added
 *       again, waits for {@code mesh add-node});</li>
 *   <li>they name it: a node whose storage is gone is refused ({@link MeshRejoinRefused}); a founder of
 *       a mesh that has committed nothing yet starts with its peers when enough voters told it so that
 *       one holding a commit would be among them, or when it is given {@code --mesh-bootstrap}, and is
 *       refused otherwise ({@link MeshFoundingUnconfirmed}).</li>
 * </ul>
 * Ratis starts a server outside its own configuration as a follower that waits for a leader; one
 * inside it campaigns after an election timeout, and a leader answers a candidate outside its
 * configuration with a shutdown that closes the candidate's division for good, so add-node could
 * not commit once the new node had campaigned. A voter restarted with empty storage would be worse:
 * it lost its vote and the entries it acknowledged, and the leader keeps its old match index, so it
 * sends from there and never installs its snapshot.
 */
final class MeshStart {
    private static final System.Logger LOG = System.getLogger(MeshStart.class.getName());
    /** The query a node answers with whether its state holds committed records. */
    static final String QUERY = "history";
    private static final String APPLIED_INDEX = "applied_index";
    /**
     * The whole probe's bound (status probe and history questions): long enough for a few 2 s rounds
     * of the history question on a loaded host, short enough that a start stopped by a signal ends
     * well within the {@code START_WAIT} (10 s) the stop hook waits for it, with time left to close.
     */
    static final Duration PROBE_CAP = Duration.ofSeconds(6);
    /** The part of the bound kept for the history question: status probes of silent peers must not use it all. */
    private static final Duration HISTORY_SHARE = Duration.ofSeconds(2);
    /** Between two rounds of the history question. */
    private static final Duration PAUSE = Duration.ofMillis(200);
    /** The shortest ask worth sending. */
    private static final Duration SHORTEST_ASK = Duration.ofMillis(100);

    private MeshStart() {
    }

    /**
     * The group {@code config}'s node starts its Raft server with; {@code group} holds all its peers.
     *
     * @throws InterruptedIOException when {@code stopRequested} holds or the thread is interrupted while it asks
     */
    static RaftGroup serverGroup(MeshConfig config, RaftGroup group, BooleanSupplier stopRequested) throws IOException {
        return serverGroup(config, group, stopRequested, PROBE_CAP);
    }

    /** As above, the probe bounded by {@code cap} (package-private: tests shorten it). */
    static RaftGroup serverGroup(MeshConfig config, RaftGroup group, BooleanSupplier stopRequested, Duration cap)
            throws IOException {
        RaftGroup none = RaftGroup.valueOf(group.getGroupId()); // Ratis requires this node in any group with peers
        Path unverified = unverifiedMarker(config.storageDir());
        if (holdsConfiguration(config.storageDir(), config.groupId())) {
            Files.deleteIfExists(unverified); // it has applied a configuration since
            return group; // Ratis starts from the configuration its storage holds, whatever it is given
        }
        boolean founding = config.groupId().equals(MeshConfig.groupId(config.peers()));
        List<MeshPeer> others = config.peers().stream().filter(p -> !p.id().equals(config.nodeId())).toList();
        Duration each = Duration.ofMillis(Math.min(2_000, config.commitTimeout().toMillis()));
        Bound bound = new Bound(System.nanoTime() + cap.toNanos(), stopRequested);
        List<MeshProbe.PeerReport> reports = status(config, others, each, bound.sooner(cap.compareTo(HISTORY_SHARE) > 0
                ? HISTORY_SHARE : Duration.ZERO));
        bound.checkStop();
        List<MeshProbe.PeerReport> running = reports.stream().filter(r -> r.reachable() && !r.voters().isEmpty())
                .toList();
        if (running.isEmpty()) {
            if (founding && !others.isEmpty()) {
                List<String> named = config.peers().stream().map(MeshPeer::id).sorted().toList();
                if (!config.bootstrap()) {
                    throw new MeshFoundingUnconfirmed(config, named, 0, needed(named.size()), peerStates(reports));
                }
                warnBootstrapping(config, "none of its peers runs the mesh (" + peerStates(reports) + ")");
            }
            markUnverified(unverified);
            return founding ? group : none; // a new mesh, or the mesh is down: nothing to tell otherwise
        }
        List<String> voters = MeshProbe.currentVoters(running, others);
        if (!voters.contains(config.nodeId())) {
            LOG.log(System.Logger.Level.INFO, "mesh node " + config.nodeId() + " is not a voter of the running mesh "
                    + voters + ": it waits for mesh add-node");
            markUnverified(unverified);
            return none;
        }
        if (MeshGroup.inStorage(config.storageDir()) != null
                && (!Files.exists(unverified) || holdsLogEntries(config.storageDir(), config.groupId()))) {
            // it has run in this group: its start was checked (a founder before its mesh formed), or a leader has
            // written to its log since (added, restarted before it applied its configuration): Ratis replays its log
            return group;
        }
        if (!founding) {
            throw new MeshRejoinRefused(config, voters, "was changed to count it as a voter");
        }
        String history = history(config, running, each, bound, cap);
        if (history != null) {
            throw new MeshRejoinRefused(config, voters, history);
        }
        // every voter that answered holds no record; enough must have answered that one holding a commit would be
        // among them (a commit is on a quorum: at most voters - quorum others can lack it, this node aside). The
        // voter lists the peers hold may differ (one that missed a membership change): count only a peer every list
        // names, against the largest list
        List<String> confirming = confirming(running);
        int needed = needed(running.stream().mapToInt(r -> r.voters().size()).max().orElse(voters.size()));
        if (confirming.size() < needed) {
            if (!config.bootstrap()) {
                throw new MeshFoundingUnconfirmed(config, voters, confirming.size(), needed, peerStates(reports));
            }
            warnBootstrapping(config, confirming.size() + " of its peers confirmed the mesh holds no committed record, "
                    + needed + " would make sure (" + peerStates(reports) + ")");
            markUnverified(unverified);
            return group;
        }
        Files.deleteIfExists(unverified); // checked now: a mesh with nothing committed
        return group; // the founders of a mesh that has committed nothing start together
    }

    /**
     * The start its peers could not vouch for, founding because the operator said the mesh is new:
     * the one case the probe cannot make safe (a voter that lost its storage, started so).
     */
    private static void warnBootstrapping(MeshConfig config, String why) {
        LOG.log(System.Logger.Level.WARNING, "mesh node " + config.nodeId() + " has no Raft configuration in "
                + config.storageDir() + " and " + why + ": --mesh-bootstrap is given, so it starts as a founder of a new"
                + " mesh. If this node was a voter that lost its storage, stop it now and restore it from its peers once"
                + " a majority of them runs (remove-node, start on empty storage with --mesh-group, add-node:"
                + " docs/mesh.md, \"Restoring a node from its peers\"); started as the voter it was it could elect a"
                + " leader that lacks committed writes");
    }

    /** The answering peers that every answering peer's voter list names: only these count as confirming voters. */
    static List<String> confirming(List<MeshProbe.PeerReport> running) {
        return running.stream().map(MeshProbe.PeerReport::id)
                .filter(id -> running.stream().allMatch(r -> r.voters().contains(id))).toList();
    }

    /**
     * How many of the other voters must confirm the mesh holds no committed record before a voter on
     * empty storage may count it as new: a commit is on a quorum, so up to {@code voters - quorum}
     * others can lack it besides this node, and one more answer must reach a voter that holds it.
     */
    static int needed(int voters) {
        return voters - MeshConfig.quorum(voters) + 1;
    }

    /**
     * The file that says this storage's group directory came from a start its peers did not check
     * (they were down, or it was not a voter): until Ratis has applied a configuration there, such a
     * directory proves nothing. Without it, a voter that lost its storage and was started once
     * during an outage would look, at its next start, like a founder that had run before, and
     * start as the voter it was.
     */
    static Path unverifiedMarker(Path storageDir) {
        return storageDir.resolve("synapse-unverified-start");
    }

    /**
     * Whether the group's Raft log in {@code storageDir} holds an entry: a closed segment
     * ({@code log_A-B}), or an open one longer than its 8-byte header. A node started alone, its
     * peers down, only campaigns: it writes its term and vote, never an entry.
     */
    static boolean holdsLogEntries(Path storageDir, UUID group) throws IOException {
        Path current = storageDir.resolve(group.toString()).resolve("current");
        if (!Files.isDirectory(current)) {
            return false;
        }
        try (java.util.stream.Stream<Path> files = Files.list(current)) {
            return files.anyMatch(f -> {
                String name = f.getFileName().toString();
                try {
                    return name.startsWith("log_inprogress_") ? Files.size(f) > 8 : name.matches("log_[0-9]+-[0-9]+");
                } catch (IOException gone) {
                    return false;
                }
            });
        }
    }

    private static void markUnverified(Path marker) throws IOException {
        if (!Files.exists(marker)) {
            Files.createDirectories(marker.getParent());
            Files.writeString(marker, "This node's Raft storage was started without its peers' check; its start is checked"
                    + " again until Ratis holds a configuration here (current/raft-meta.conf). Do not delete by hand.\n");
        }
    }

    /** Each peer's status report, each asked within its share of {@code bound} (not asked in time: unreached). */
    private static List<MeshProbe.PeerReport> status(MeshConfig config, List<MeshPeer> others, Duration each,
                                                     Bound bound) throws InterruptedIOException {
        List<MeshProbe.PeerReport> reports = new ArrayList<>();
        for (int i = 0; i < others.size(); i++) {
            MeshPeer p = others.get(i);
            bound.checkStop();
            Duration within = bound.next(each, others.size() - i); // a silent peer leaves the others their share
            reports.add(within == null
                    ? new MeshProbe.PeerReport(p.id(), p.address(), "not asked: the start's probe ran out of time",
                            null, null, -1, -1, -1, -1, -1, false, List.of())
                    : MeshProbe.probe(config.groupId(), List.of(p), within, config.tls()).get(0));
        }
        return reports;
    }

    /** What each peer's status report said, for the log and a refusal. */
    private static String peerStates(List<MeshProbe.PeerReport> reports) {
        return String.join("; ", reports.stream().map(r -> r.id() + " at " + r.address() + ": "
                + (!r.reachable() ? r.error() : r.voters().isEmpty() ? "answers, but holds no configuration of this"
                + " group" : "runs the mesh")).toList());
    }

    /**
     * Whether a peer's status report leaves room for committed records, so it must be asked. Its
     * applied index alone could under-report: a peer that has just restarted has its commit index and
     * log back before it has applied them. Index 0 is the first leader's configuration: no record
     * before index 1.
     */
    static boolean mayHoldRecords(MeshProbe.PeerReport r) {
        return r.appliedIndex() > 0 || r.commitIndex() > 0 || r.lastIndex() > 0;
    }

    /**
     * Why the running mesh is not new (it holds committed records, or a voter could not tell within
     * the bound), or null when every answering voter holds none.
     */
    private static String history(MeshConfig config, List<MeshProbe.PeerReport> running, Duration each, Bound bound,
                                  Duration cap) throws InterruptedIOException {
        List<MeshPeer> asked = new ArrayList<>();
        for (MeshProbe.PeerReport r : running) {
            if (r.lastSnapshotIndex() >= 0) {
                return "has committed records (" + r.id() + " holds a snapshot at index " + r.lastSnapshotIndex() + ")";
            }
            if (mayHoldRecords(r)) {
                config.peers().stream().filter(p -> p.id().equals(r.id())).forEach(asked::add);
            }
        }
        byte[] question = MeshJson.bytes(question());
        // a peer that has just started may not answer the first round, or cannot tell yet: ask again until the bound
        for (int round = 1; !asked.isEmpty(); round++) {
            if (round > 1 && !bound.pause()) {
                break;
            }
            for (MeshPeer p : List.copyOf(asked)) {
                bound.checkStop();
                Duration within = bound.next(each);
                if (within == null) {
                    break;
                }
                String[] failed = new String[1];
                Long answer = MeshGroup.askEachVoter(config.groupId(), List.of(p), within, config.tls(),
                        question, MeshStart::appliedIndex, (id, why) -> failed[0] = why).get(p.id());
                if (answer != null && answer > 0) {
                    return "has committed records (" + p.id() + " applied one at log index " + answer + ")";
                }
                if (answer != null) {
                    asked.remove(p);
                } else {
                    LOG.log(System.Logger.Level.INFO, "mesh node " + config.nodeId() + " asked " + p.id()
                            + " whether the mesh holds committed records (round " + round + "): " + (failed[0] != null
                            ? failed[0] : "it cannot tell yet (it is still applying its log)"));
                }
            }
        }
        return asked.isEmpty() ? null : "was reached, but " + asked.stream().map(MeshPeer::id).toList()
                + " did not tell within " + cap.toMillis() + " ms whether it holds committed records";
    }

    private static ObjectNode question() {
        ObjectNode request = MeshJson.MAPPER.createObjectNode();
        request.put("protocol", MeshProtocol.PROTOCOL);
        request.put("version", MeshProtocol.VERSION);
        request.put(MeshQueueProbe.QUERY, QUERY);
        return request;
    }

    /**
     * A node's answer to {@link #QUERY}: the log index of the last record its state holds (0: none).
     * "None" only when {@code holdsItsLog} (it has applied all its Raft log holds): a node that has
     * just restarted answers while Ratis still replays its log, and would under-report. Without an
     * index the asker cannot tell.
     */
    static ObjectNode answer(long recordIndex, boolean holdsItsLog) {
        ObjectNode answer = MeshJson.MAPPER.createObjectNode();
        if (recordIndex > 0 || holdsItsLog) {
            answer.put(APPLIED_INDEX, recordIndex);
        }
        return answer;
    }

    /** The index an answer reports, or null when it cannot tell. */
    static Long appliedIndex(JsonNode answer) {
        return answer != null && answer.has(APPLIED_INDEX) ? answer.get(APPLIED_INDEX).asLong() : null;
    }

    /** The probe's deadline and the start's stop check. */
    private record Bound(long deadlineNanos, BooleanSupplier stopRequested) {
        /** This bound ending {@code share} earlier. */
        Bound sooner(Duration share) {
            return new Bound(deadlineNanos - share.toNanos(), stopRequested);
        }

        /** {@code each}, or what is left if less; null when too little is left to ask. */
        Duration next(Duration each) {
            return next(each, 1);
        }

        /** {@code each}, or a {@code 1/asks} share of what is left if less; null when too little is left to ask. */
        Duration next(Duration each, int asks) {
            long share = (deadlineNanos - System.nanoTime()) / asks;
            return share < SHORTEST_ASK.toNanos() ? null : Duration.ofNanos(Math.min(share, each.toNanos()));
        }

        /** Ends the start as a stop: the caller closes what it opened and binds nothing. */
        void checkStop() throws InterruptedIOException {
            if (stopRequested.getAsBoolean() || Thread.currentThread().isInterrupted()) {
                throw new InterruptedIOException("the start was stopped while it asked its peers");
            }
        }

        /** A pause between two rounds; false when the bound has run out. */
        boolean pause() throws InterruptedIOException {
            checkStop();
            if (deadlineNanos - System.nanoTime() < PAUSE.plus(SHORTEST_ASK).toNanos()) {
                return false; // no time left for another round
            }
            try {
                Thread.sleep(PAUSE.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the stop's signal, kept for the caller
                throw new InterruptedIOException("the start was stopped while it asked its peers");
            }
            return true;
        }
    }

    /**
     * Whether {@code storageDir} holds a Raft configuration for {@code group} (the one Ratis last
     * applied or installed, in {@code current/raft-meta.conf}).
     */
    static boolean holdsConfiguration(Path storageDir, UUID group) {
        Path conf = storageDir.resolve(group.toString()).resolve("current").resolve("raft-meta.conf");
        if (!Files.isRegularFile(conf)) {
            return false;
        }
        try (InputStream in = Files.newInputStream(conf)) {
            return LogEntryProto.newBuilder().mergeFrom(in).build().hasConfigurationEntry();
        } catch (IOException | RuntimeException e) {
            // Ratis skips a configuration file it cannot read too, and starts from the group and its log
            LOG.log(System.Logger.Level.WARNING, "cannot read the Raft configuration " + conf + ": " + e);
            return false;
        }
    }
}
