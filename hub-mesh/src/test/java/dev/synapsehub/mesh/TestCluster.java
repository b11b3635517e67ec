package dev.synapsehub.mesh;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.net.HubConfig;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * N mesh nodes in this JVM on loopback, each with its own Raft storage and SQLite journal under
 * one temp directory; with {@code wire}, each also serves agents ({@link MeshHub}) on an
 * ephemeral port. Nodes can be stopped (their edge and actor stop with them) and restarted on
 * the same storage.
 */
final class TestCluster implements AutoCloseable {
    static {
        // Ratis ends the JVM (System.exit) when, say, a node's gRPC port cannot be bound; in a test
        // JVM that kills every other test of the fork: make it an exception that fails one test
        org.apache.ratis.util.ExitUtils.disableSystemExit();
    }

    static final Duration COMMIT_TIMEOUT = Duration.ofSeconds(3);

    private final Path dir;
    private final List<MeshPeer> peers = new ArrayList<>();
    private final Map<String, MeshNode> nodes = new LinkedHashMap<>();
    private final Map<String, TestEdge> edges = new LinkedHashMap<>();
    private final Map<String, MeshHub> hubs = new LinkedHashMap<>();
    private final String hubId;
    private final boolean wire;
    private final double skewSeconds;
    private final MeshCompaction compaction;
    /** Each node's transport security; replaceable between a stop and a restart. */
    private Function<String, MeshTls> tls;
    /** Proxies between the nodes' Raft ports, or null when the nodes talk directly. */
    private final RaftLinks links;
    /** The Raft group of the founding members: kept when voters are added or removed. */
    private final java.util.UUID group;
    /** How wire nodes serve agents beyond the defaults. */
    private final Serving serving;
    /** The intent memory's window and pinned limit every (non-wire) node starts with; null: the defaults. */
    private final int[] intentMemory;
    /** Namespace to owner hub: the namespaces every node's state governs claims in (none: not governed). */
    private final Map<String, String> governed;

    /**
     * What a wire node serves with beyond the defaults: its hub settings (identity pinning, for
     * example) and the relay log it mirrors its fan-out into (null: none).
     */
    interface Serving {
        /** No change. */
        Serving DEFAULTS = (id, db, base) -> base;

        /** Node {@code id}'s hub settings from {@code base}; {@code db} is its journal copy. */
        HubConfig.Builder hub(String id, Path db, HubConfig.Builder base);

        /** Node {@code id}'s relay log file, or null. */
        default Path relayLog(String id) {
            return null;
        }
    }

    TestCluster(Path dir, int size) throws IOException {
        this(dir, size, false);
    }

    TestCluster(Path dir, int size, boolean wire) throws IOException {
        this(dir, size, wire, 0);
    }

    /** With node n's clock {@code n * skewSeconds} ahead of the wall clock. */
    TestCluster(Path dir, int size, boolean wire, double skewSeconds) throws IOException {
        this(dir, size, wire, skewSeconds, MeshCompaction.DEFAULTS);
    }

    /** Nodes compacting their logs as {@code compaction} says. */
    TestCluster(Path dir, int size, MeshCompaction compaction) throws IOException {
        this(dir, size, false, 0, compaction);
    }

    TestCluster(Path dir, int size, boolean wire, double skewSeconds, MeshCompaction compaction) throws IOException {
        this(dir, size, wire, skewSeconds, compaction, id -> null, false, Serving.DEFAULTS);
    }

    /** Nodes whose Raft transport uses {@code tls.apply(id)} (null: plain gRPC). */
    TestCluster(Path dir, int size, Function<String, MeshTls> tls) throws IOException {
        this(dir, size, false, 0, MeshCompaction.DEFAULTS, tls, false, Serving.DEFAULTS);
    }

    /** Nodes reaching each other's Raft ports through {@link RaftLinks}, so a test can partition live nodes. */
    static TestCluster partitionable(Path dir, int size, boolean wire) throws IOException {
        return new TestCluster(dir, size, wire, 0, MeshCompaction.DEFAULTS, id -> null, true, Serving.DEFAULTS);
    }

    /** Nodes behind {@link RaftLinks}, compacting as {@code compaction} says. */
    static TestCluster partitionable(Path dir, int size, MeshCompaction compaction) throws IOException {
        return new TestCluster(dir, size, false, 0, compaction, id -> null, true, Serving.DEFAULTS);
    }

    /** Wire nodes behind {@link RaftLinks}, serving as {@code serving} says and compacting as {@code compaction} says. */
    static TestCluster partitionable(Path dir, int size, MeshCompaction compaction, Serving serving) throws IOException {
        return new TestCluster(dir, size, true, 0, compaction, id -> null, true, serving);
    }

    /** Wire nodes serving agents as {@code serving} says, compacting as {@code compaction} says. */
    static TestCluster serving(Path dir, int size, MeshCompaction compaction, Serving serving) throws IOException {
        return new TestCluster(dir, size, true, 0, compaction, id -> null, false, serving);
    }

    /**
     * Nodes compacting as {@code compaction} says whose intent memory keeps {@code window} ids in
     * any case and at most {@code pinnedLimit} more for origins that may still replay them.
     */
    static TestCluster remembering(Path dir, int size, MeshCompaction compaction, int window, int pinnedLimit)
            throws IOException {
        return new TestCluster(dir, size, false, 0, compaction, id -> null, false, Serving.DEFAULTS,
                new int[] {window, pinnedLimit});
    }

    private boolean bootstrap = true;

    private TestCluster(Path dir, int size, boolean wire, double skewSeconds, MeshCompaction compaction,
                        Function<String, MeshTls> tls, boolean proxied, Serving serving) throws IOException {
        this(dir, size, wire, skewSeconds, compaction, tls, proxied, serving, null);
    }

    private TestCluster(Path dir, int size, boolean wire, double skewSeconds, MeshCompaction compaction,
                        Function<String, MeshTls> tls, boolean proxied, Serving serving, int[] intentMemory)
            throws IOException {
        this(dir, size, wire, skewSeconds, compaction, tls, proxied, serving, intentMemory, Map.of());
    }

    /**
     * Nodes compacting as {@code compaction} says whose states govern claims in the namespaces of
     * {@code owners} (namespace to owner hub), as a node with --multihub-watch does.
     */
    static TestCluster governing(Path dir, int size, MeshCompaction compaction, Map<String, String> owners)
            throws IOException {
        return new TestCluster(dir, size, false, 0, compaction, id -> null, false, Serving.DEFAULTS, null, owners);
    }

    private TestCluster(Path dir, int size, boolean wire, double skewSeconds, MeshCompaction compaction,
                        Function<String, MeshTls> tls, boolean proxied, Serving serving, int[] intentMemory,
                        Map<String, String> governed) throws IOException {
        this.governed = governed;
        this.intentMemory = intentMemory;
        this.dir = dir;
        this.serving = serving;
        this.tls = tls;
        this.compaction = compaction;
        this.wire = wire;
        this.skewSeconds = skewSeconds;
        for (int i = 1; i <= size; i++) {
            peers.add(new MeshPeer("n" + i, "127.0.0.1", freePort()));
        }
        this.group = MeshConfig.groupId(peers);
        this.links = proxied ? new RaftLinks(peers) : null;
        this.hubId = config("n1").defaultHubId();
        for (MeshPeer p : peers) {
            start(p.id());
        }
    }

    /**
     * Ports already given to a node (or taken by a {@link RaftLinks} proxy) in this JVM: never handed out twice, so two nodes of one cluster
     * (picked before either binds) cannot share one, and a node never gets a port an earlier test's
     * node may still hold in TIME_WAIT.
     */
    static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * A port 127.0.0.1 can bind now, chosen below the kernel's ephemeral range (32768 and up on
     * Linux): an ephemeral port picked and closed here could be taken as the source port of one of
     * the test's own outgoing connections before the node binds it.
     */
    static int freePort() throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            int candidate = LoopbackPorts.candidate();
            if (HANDED_OUT.contains(candidate)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket(candidate, 1, java.net.InetAddress.getLoopbackAddress())) {
                HANDED_OUT.add(candidate);
                return s.getLocalPort();
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IOException("no free port in 20000..32000 after 200 attempts");
    }

    MeshConfig config(String id) {
        List<MeshPeer> view = links == null ? peers : links.viewOf(id, peers);
        Duration[] election = elections.getOrDefault(id, new Duration[] {Duration.ofMillis(300), Duration.ofMillis(600)});
        return new MeshConfig(id, view, dir.resolve(id + ".db.raft"), COMMIT_TIMEOUT, election[0],
                election[1], group).withTls(tls.apply(id)).withBootstrap(bootstrap);
    }

    /** Election timeouts of nodes that differ from the others', by id (from their next start). */
    private final Map<String, Duration[]> elections = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Node {@code id} runs with election timeouts {@code min}..{@code max} from its next start: as a
     * leader it heartbeats every {@code min / 2} and steps down only after {@code max} without a majority.
     */
    void elections(String id, Duration min, Duration max) {
        elections.put(id, new Duration[] {min, max});
    }

    /**
     * Whether nodes started from now on are given --mesh-bootstrap (from the cluster's first start on:
     * its nodes found a new mesh one by one, the first while its peers are still silent).
     */
    void bootstrap(boolean on) {
        bootstrap = on;
    }

    /** Node {@code id} uses {@code security} from its next start on. */
    void tls(String id, MeshTls security) {
        Function<String, MeshTls> before = tls;
        tls = n -> n.equals(id) ? security : before.apply(n);
    }

    /** Every voter, as each node's --mesh-peers lists them. */
    List<MeshPeer> peers() {
        return List.copyOf(peers);
    }

    /** A new peer {@code id} on a free port, listed from now on in every node's configuration (start it next). */
    MeshPeer addPeer(String id) throws IOException {
        if (links != null) {
            throw new IllegalStateException("a partitionable cluster's links are fixed at start");
        }
        MeshPeer peer = new MeshPeer(id, "127.0.0.1", freePort());
        peers.add(peer);
        return peer;
    }

    /** Drops peer {@code id} from the configuration of nodes started from now on. */
    void removePeer(String id) {
        peers.removeIf(p -> p.id().equals(id));
    }

    /** Starts (or restarts) node {@code id} on its storage. */
    MeshNode start(String id) throws IOException {
        double skew = skewSeconds * Integer.parseInt(id.substring(1));
        Clock clock = () -> System.currentTimeMillis() / 1000.0 + skew;
        Journal local;
        try {
            local = SqliteJournal.open(dir.resolve(id + ".db"));
        } catch (JournalException e) {
            throw new IOException(e);
        }
        if (wire) {
            MeshHub hub;
            try {
                HubConfig settings = serving.hub(id, dir.resolve(id + ".db"), HubConfig.builder().host("127.0.0.1")
                        .port(0).hubId(hubId).metricsEnabled(true)).build();
                Path relay = serving.relayLog(id);
                hub = MeshHub.start(config(id), settings, local, new CoordinationState(), clock, ActorSettings.DEFAULTS,
                        0, compaction, relay == null ? null : dev.synapsehub.net.relay.RelayLog.open(relay, 5000));
            } catch (JournalException | InterruptedException e) {
                throw new IOException(e);
            }
            hubs.put(id, hub);
            nodes.put(id, hub.node());
            return hub.node();
        }
        TestEdge edge = new TestEdge();
        CoordinationState state = new CoordinationState();
        if (!governed.isEmpty()) {
            state.governClaims(governed);
        }
        MeshNode node;
        try {
            node = new MeshNode(config(id), hubId, local, state, clock, ActorSettings.DEFAULTS, edge, compaction);
        } catch (IOException | RuntimeException e) {
            try {
                local.close(); // refused before it opened anything of its own (MeshRejoinRefused)
            } catch (JournalException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        if (intentMemory != null) {
            node.intentMemory(intentMemory[0], intentMemory[1]);
        }
        try {
            node.start();
        } catch (IOException | RuntimeException e) {
            try {
                node.close();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        nodes.put(id, node);
        edges.put(id, edge);
        return node;
    }

    /**
     * Moves stopped node {@code id}'s Raft directory and journal (with its -wal and -shm files) away,
     * as an operator restoring a broken node from its peers does; its intent queue stays.
     */
    void wipe(String id) throws IOException {
        if (nodes.containsKey(id)) {
            throw new IllegalStateException(id + " is running: stop it first");
        }
        Path raft = dir.resolve(id + ".db.raft");
        if (java.nio.file.Files.exists(raft)) {
            try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(raft)) {
                for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    java.nio.file.Files.delete(p);
                }
            }
        }
        for (String suffix : List.of("", "-wal", "-shm")) {
            java.nio.file.Files.deleteIfExists(dir.resolve(id + ".db" + suffix));
        }
    }

    /** The directory the cluster keeps its nodes' storage in. */
    Path dir() {
        return dir;
    }

    /** Node {@code id}'s serving hub (wire clusters). */
    MeshHub hub(String id) {
        return hubs.get(id);
    }

    /** The WebSocket URI of node {@code id} (wire clusters). */
    java.net.URI uri(String id) {
        return java.net.URI.create("ws://127.0.0.1:" + hubs.get(id).port() + "/");
    }

    /** The hub id every node shows. */
    String hubId() {
        return hubId;
    }

    /** Stops node {@code id} abruptly for the cluster (its Raft server goes away first). */
    void stop(String id) throws Exception {
        MeshNode node = nodes.remove(id);
        MeshHub hub = hubs.remove(id);
        if (hub != null) {
            hub.close();
        } else if (node != null) {
            node.close();
        }
    }

    /** The links between the nodes (partitionable clusters only). */
    RaftLinks links() {
        if (links == null) {
            throw new IllegalStateException("this cluster's nodes talk directly: use TestCluster.partitionable");
        }
        return links;
    }

    MeshNode node(String id) {
        return nodes.get(id);
    }

    TestEdge edge(String id) {
        return edges.get(id);
    }

    List<MeshNode> running() {
        return new ArrayList<>(nodes.values());
    }

    /** Waits for a node that leads and may decide; returns it. */
    MeshNode awaitLeader() throws InterruptedException {
        MeshNode[] found = new MeshNode[1];
        await("a ready leader", () -> {
            for (MeshNode n : nodes.values()) {
                MeshStatus s = n.status();
                if (s.leading() && n.site().decidesHere()) {
                    found[0] = n;
                    return true;
                }
            }
            return false;
        });
        return found[0];
    }

    /** Some running node that is not {@code leader}. */
    MeshNode follower(MeshNode leader) {
        return nodes.values().stream().filter(n -> n != leader).findFirst().orElseThrow();
    }

    /** Waits until every running node's state holds seq {@code seq}. */
    void awaitApplied(long seq) throws InterruptedException {
        await("every node at seq " + seq, () -> nodes.values().stream().allMatch(n -> n.status().appliedSeq() >= seq));
    }

    /** Polls {@code condition} until it holds; fails after 30 s (a loaded two-core host is slow). */
    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(10);
        }
    }

    @Override
    public void close() throws Exception {
        try {
            for (String id : new ArrayList<>(nodes.keySet())) {
                stop(id);
            }
        } finally {
            if (links != null) {
                links.close();
            }
        }
    }
}
