package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Idempotency;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.claims;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code mesh add-node} / {@code remove-node}: Raft membership changes while writes keep committing. */
class MeshMembershipTest {
    /** A snapshot every 8 entries, 8 KiB log segments: a few dozen claims compact the log. */
    private static final MeshCompaction SMALL = new MeshCompaction(8, 8 << 10);
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private TestCluster cluster;
    private Thread loader;
    private final AtomicBoolean stopLoad = new AtomicBoolean();

    @AfterEach
    void stop() throws Exception {
        stopLoad.set(true);
        if (loader != null) {
            loader.join(60_000);
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private static boolean granted(Outcome o) {
        return o instanceof Outcome.Decided d && d.reply().granted();
    }

    /**
     * Claims task {@code task} through {@code node} with an idempotency key, asking again with the
     * same key while the outcome is not decided (a leader change on a loaded host answers
     * commit_unknown or busy): the ledger makes a retry safe. Bounded to 10 attempts.
     */
    private static Outcome commit(MeshNode node, String agent, String task) throws Exception {
        TestEdge.Verb verb = new TestEdge.Verb("claim");
        Idempotency key = new Idempotency(Idempotency.key(agent, "claim", task), "digest-" + task,
                TestEdge.renderer(verb));
        Outcome o = null;
        for (int attempt = 0; attempt < 10 && !(o instanceof Outcome.Decided); attempt++) {
            o = submit(node, new Mutation(claim(agent, task), key, verb));
        }
        return o;
    }

    /** Claims fresh tasks through {@code node} one after another until stopped (at most 2000 or 3 minutes). */
    private void load(MeshNode node, AtomicInteger granted, List<String> failures) {
        loader = new Thread(() -> {
            long deadline = System.nanoTime() + 180_000_000_000L;
            for (int i = 0; i < 2000 && !stopLoad.get() && System.nanoTime() - deadline < 0; i++) {
                try {
                    // spread over agents: one agent may hold only MAX_CLAIMS_PER_AGENT (128) live claims,
                    // which a fast host reaches before the membership changes are done
                    Outcome o = commit(node, "load-" + (i % 32), "L" + i);
                    if (granted(o)) {
                        granted.incrementAndGet();
                    } else {
                        failures.add("L" + i + ": " + o);
                    }
                } catch (Exception e) {
                    failures.add("L" + i + ": " + e);
                }
            }
        }, "membership-load");
        loader.start();
    }

    private static void awaitMore(AtomicInteger granted, String what) throws InterruptedException {
        int before = granted.get();
        TestCluster.await(what, () -> granted.get() >= before + 3);
    }

    @Test
    void aFourthVoterCatchesUpBySnapshotAndAVoterIsRemovedWhileWritesKeepCommitting() throws Exception {
        cluster = new TestCluster(dir, 3, SMALL);
        MeshNode leader = cluster.awaitLeader();
        List<MeshPeer> three = List.copyOf(leader.config().peers());
        for (int i = 0; i < 40; i++) {
            assertThat(granted(submit(leader, Mutation.of(claim("seed", "S" + i))))).isTrue();
        }
        TestCluster.await("the leader compacted its log", () -> leader.snapshotStatus().logStartIndex() > 1);

        AtomicInteger granted = new AtomicInteger();
        List<String> failures = new CopyOnWriteArrayList<>();
        load(leader, granted, failures);
        awaitMore(granted, "writes commit before the change");

        MeshPeer added = cluster.addPeer("n4");
        MeshNode fourth = cluster.start("n4");
        MeshMembership.Change grown = MeshMembership.addNode(three, added, TIMEOUT);
        assertThat(grown.leader()).isIn("n1", "n2", "n3");
        assertThat(grown.after()).extracting(MeshPeer::id).containsExactlyInAnyOrder("n1", "n2", "n3", "n4");
        assertThat(grown.group()).isEqualTo(leader.config().groupId());
        awaitMore(granted, "writes commit after the fourth joined");
        long seq = leader.status().appliedSeq();
        TestCluster.await("the fourth voter holds seq " + seq, () -> fourth.status().appliedSeq() >= seq);
        assertThat(fourth.snapshotStatus().loadedIndex()).as("it caught up by installing the leader's snapshot")
                .isPositive();
        List<MeshPeer> four = new ArrayList<>(three);
        four.add(added);
        List<MeshProbe.PeerReport> reports = MeshProbe.probe(four, Duration.ofSeconds(5));
        assertThat(reports).as("every voter, the new one too, follows the same leader")
                .allMatch(r -> r.reachable() && r.leaderId() != null && r.leaderId().equals(reports.get(0).leaderId()));

        String removed = three.stream().map(MeshPeer::id).filter(id -> !id.equals(leader.nodeId())).findFirst()
                .orElseThrow();
        MeshMembership.Change shrunk = MeshMembership.removeNode(four, removed, TIMEOUT);
        assertThat(shrunk.after()).extracting(MeshPeer::id).hasSize(3).doesNotContain(removed).contains("n4");
        awaitMore(granted, "writes commit after the removal");
        cluster.stop(removed);
        cluster.removePeer(removed);
        awaitMore(granted, "writes commit with the removed node stopped");

        stopLoad.set(true);
        loader.join(60_000);
        assertThat(failures).as("every write committed throughout").isEmpty();
        assertThat(granted.get()).isPositive();

        // the new voter counts toward the quorum: with the third voter down, the leader and n4 still commit
        String third = shrunk.after().stream().map(MeshPeer::id)
                .filter(id -> !id.equals(leader.nodeId()) && !id.equals("n4")).findFirst().orElseThrow();
        cluster.stop(third);
        Outcome last = commit(leader, "after", "Z1");
        assertThat(granted(last)).as("committed by the leader and n4 alone").isTrue();
        TestCluster.await("n4 applied the last write", () -> fourth.status().appliedSeq() >= OutcomeCodec.lastSeq(last));
        assertThat(claims(fourth)).isEqualTo(claims(leader));
    }

    @Test
    void aNewVoterStartedWellBeforeAddNodeIsNotShutDownAndJoins() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode first = cluster.awaitLeader();
        List<MeshPeer> three = List.copyOf(first.config().peers());
        // a mesh that has changed leader once (a restart, a failover): the leader's configuration entry is
        // then past a new node's empty log, the case in which Ratis tells a campaigning stranger to shut down
        String other = three.stream().map(MeshPeer::id).filter(id -> !id.equals(first.nodeId()))
                .findFirst().orElseThrow();
        MeshAdmin.transferLeader(three, other, TIMEOUT);
        MeshNode leader = cluster.awaitLeader();
        assertThat(granted(commit(leader, "seed", "S1"))).isTrue();
        MeshPeer added = cluster.addPeer("n4");
        MeshNode fourth = cluster.start("n4");
        // an operator starts the node, then types add-node: give it several election timeouts (300-600 ms here)
        // first, in which a node that campaigned was told by the leader to shut down (its division closed)
        Thread.sleep(3_000);
        MeshMembership.Change grown = MeshMembership.addNode(three, added, TIMEOUT);
        assertThat(grown.after()).extracting(MeshPeer::id).containsExactlyInAnyOrder("n1", "n2", "n3", "n4");
        Outcome through = commit(fourth, "alice", "J1");
        assertThat(granted(through)).as("a write through the new voter: " + through).isTrue();
        TestCluster.await("n4 holds the new configuration",
                () -> fourth.voters().count() == 4 && !fourth.voters().changing());
        assertThat(claims(fourth)).isEqualTo(claims(leader));
    }

    /** True while {@code node} waits outside every configuration: it has not stood for election nor heard a term. */
    private static boolean passive(MeshNode node) {
        MeshStatus s = node.status();
        return "FOLLOWER".equals(s.role()) && s.term() == 0 && s.leaderId() == null;
    }

    @Test
    void aNewNodeRestartedBeforeAddNodeStaysPassiveAndJoins() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode first = cluster.awaitLeader();
        List<MeshPeer> three = List.copyOf(first.config().peers());
        // a mesh that has changed leader (see above): a leader there shuts down a campaigning stranger
        String other = three.stream().map(MeshPeer::id).filter(id -> !id.equals(first.nodeId()))
                .findFirst().orElseThrow();
        MeshAdmin.transferLeader(three, other, TIMEOUT);
        MeshNode leader = cluster.awaitLeader();
        assertThat(granted(commit(leader, "seed", "S1"))).isTrue();
        MeshPeer added = cluster.addPeer("n4");
        cluster.start("n4");
        Thread.sleep(1_000);
        cluster.stop("n4");
        assertThat(MeshGroup.inStorage(dir.resolve("n4.db.raft"))).as("its storage holds the group now").isNotNull();

        // restarted before add-node names it: its storage holds no configuration naming it, so it still waits
        MeshNode fourth = cluster.start("n4");
        Thread.sleep(3_000); // several election timeouts (300-600 ms): a node that stood has campaigned by now
        assertThat(fourth.status()).as("it waits for add-node").matches(s -> passive(fourth));
        MeshMembership.Change grown = MeshMembership.addNode(three, added, TIMEOUT);
        assertThat(grown.after()).extracting(MeshPeer::id).containsExactlyInAnyOrder("n1", "n2", "n3", "n4");
        Outcome through = commit(fourth, "alice", "J1");
        assertThat(granted(through)).as("a write through the new voter: " + through).isTrue();
        TestCluster.await("n4 holds the new configuration",
                () -> fourth.voters().count() == 4 && !fourth.voters().changing());
        assertThat(claims(fourth)).isEqualTo(claims(leader));
    }

    @Test
    void aVoterStartedAgainOnEmptyStorageIsRefusedOnceTheMeshHoldsRecords() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        // a mesh that has committed nothing yet: a founder on empty storage starts as one (a new mesh)
        String late = cluster.follower(leader).nodeId();
        cluster.stop(late);
        cluster.wipe(late);
        MeshNode founder = cluster.start(late);
        TestCluster.await(late + " follows the leader", () -> founder.status().leaderId() != null);

        MeshNode lead = cluster.awaitLeader();
        Outcome seeded = commit(lead, "seed", "S1");
        assertThat(granted(seeded)).isTrue();
        String lost = cluster.follower(lead).nodeId();
        cluster.awaitApplied(OutcomeCodec.lastSeq(seeded));
        cluster.stop(lost);
        cluster.wipe(lost);
        assertThatThrownBy(() -> cluster.start(lost)).isInstanceOf(MeshRejoinRefused.class)
                .hasMessageContaining("mesh node " + lost + " has no Raft state")
                .hasMessageContaining("has committed records")
                .hasMessageContaining("mesh remove-node --mesh-peers").hasMessageContaining("--node " + lost + "`")
                .hasMessageContaining("--mesh-group " + lead.config().groupId())
                .hasMessageContaining("mesh add-node").hasMessageContaining("Restoring a node from its peers");
        assertThat(MeshGroup.inStorage(dir.resolve(lost + ".db.raft"))).as("no Raft storage was written").isNull();
        assertThat(granted(commit(lead, "still", "S2"))).as("the other two carry on").isTrue();
    }

    /**
     * A voter that lost its storage and was started once while its peers were down starts as a
     * founder (its peers cannot check it) and leaves a group directory behind; at its next start,
     * with its peers back, that directory must not pass for the storage of a node that has run in
     * the group: its log holds no entry and its first start was not checked, so it is refused.
     */
    @Test
    void aVoterWipedAndStartedDuringAnOutageIsStillRefusedOnceItsPeersAreBack() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        Outcome seeded = commit(leader, "seed", "S1");
        assertThat(granted(seeded)).isTrue();
        cluster.awaitApplied(OutcomeCodec.lastSeq(seeded));
        String lost = cluster.follower(leader).nodeId();
        List<String> others = leader.config().peers().stream().map(MeshPeer::id).filter(id -> !id.equals(lost)).toList();
        for (String id : others) {
            cluster.stop(id);
        }
        cluster.stop(lost);
        cluster.wipe(lost);
        cluster.start(lost); // the outage: no peer answers, so it starts as a founder would (and warns)
        Thread.sleep(1_500); // it campaigns alone: a term and a vote, no entry
        cluster.stop(lost);
        assertThat(MeshGroup.inStorage(dir.resolve(lost + ".db.raft"))).as("a group directory was left").isNotNull();
        assertThat(MeshStart.unverifiedMarker(dir.resolve(lost + ".db.raft"))).exists();

        for (String id : others) {
            cluster.start(id);
        }
        MeshNode back = cluster.awaitLeader();
        assertThatThrownBy(() -> cluster.start(lost)).isInstanceOf(MeshRejoinRefused.class)
                .hasMessageContaining("mesh node " + lost + " has no Raft state")
                .hasMessageContaining("has committed records");
        assertThat(granted(commit(back, "still", "S2"))).as("the other two carry on").isTrue();
    }

    @Test
    void aVoterWipedAndStartedDuringAnOutageWithoutBootstrapIsRefusedAndWritesNoRaftState() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        Outcome seeded = commit(leader, "seed", "S1");
        assertThat(granted(seeded)).isTrue();
        cluster.awaitApplied(OutcomeCodec.lastSeq(seeded));
        List<String> ids = leader.config().peers().stream().map(MeshPeer::id).toList();
        String lost = cluster.follower(leader).nodeId();
        for (String id : ids) {
            cluster.stop(id);
        }
        cluster.wipe(lost);
        cluster.bootstrap(false); // the node's usual command line: --mesh-bootstrap was for the mesh's first start
        assertThatThrownBy(() -> cluster.start(lost)).isInstanceOf(MeshFoundingUnconfirmed.class)
                .hasMessageContaining("mesh node " + lost + " holds no Raft configuration")
                .hasMessageContaining("0 of the voters " + ids.stream().sorted().toList() + " did, 2 must")
                .hasMessageContaining("--mesh-bootstrap");
        assertThat(MeshGroup.inStorage(dir.resolve(lost + ".db.raft"))).as("no group directory").isNull();
        assertThat(MeshStart.unverifiedMarker(dir.resolve(lost + ".db.raft"))).doesNotExist();

        for (String id : ids.stream().filter(id -> !id.equals(lost)).toList()) {
            cluster.start(id);
        }
        MeshNode back = cluster.awaitLeader();
        assertThatThrownBy(() -> cluster.start(lost)).as("once its peers are back it is told the recipe")
                .isInstanceOf(MeshRejoinRefused.class).hasMessageContaining("has committed records");
        assertThat(granted(commit(back, "still", "S2"))).as("the other two carry on").isTrue();
    }

    @Test
    void aMembershipChangeKeepsTheAddressesTheMeshHoldsForItsVoters() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        List<MeshPeer> three = List.copyOf(leader.config().peers());
        String removed = cluster.follower(leader).nodeId();
        MeshPeer kept = three.stream().filter(p -> !p.id().equals(removed) && !p.id().equals(leader.nodeId()))
                .findFirst().orElseThrow();
        // the operator's list has a typo in the kept voter's port
        List<MeshPeer> typo = three.stream().map(p -> p.id().equals(kept.id())
                ? new MeshPeer(p.id(), p.host(), p.port() + 1) : p).toList();
        MeshMembership.Change shrunk = MeshMembership.removeNode(typo, removed, TIMEOUT);
        assertThat(shrunk.after()).extracting(MeshPeer::id).doesNotContain(removed).hasSize(2);
        assertThat(shrunk.after()).as("the voter's address as the mesh held it, not the typo").contains(kept);
        cluster.stop(removed);
        assertThat(granted(commit(cluster.awaitLeader(), "after", "A1"))).as("the two voters still reach each other")
                .isTrue();
    }

    @Test
    void aWipedVoterOfAMeshWithNothingCommittedStartsWithoutTheFlagOnceEnoughVotersConfirmIt() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        String lost = cluster.follower(leader).nodeId();
        List<MeshPeer> peers = leader.config().peers();
        MeshPeer other = peers.stream().filter(p -> !p.id().equals(lost) && !p.id().equals(leader.nodeId()))
                .findFirst().orElseThrow();
        // a --mesh-peers entry that reaches another node's address is not counted as the node it names
        MeshPeer leaderAddress = peers.stream().filter(p -> p.id().equals(leader.nodeId())).findFirst().orElseThrow();
        MeshProbe.PeerReport misdirected = MeshProbe.probe(cluster.config(lost).groupId(),
                List.of(new MeshPeer(other.id(), leaderAddress.host(), leaderAddress.port())), TIMEOUT, null).get(0);
        assertThat(misdirected.reachable()).isFalse();
        assertThat(misdirected.error()).contains("answered as '" + leader.nodeId() + "', not " + other.id());

        cluster.stop(lost);
        cluster.wipe(lost);
        cluster.bootstrap(false);
        MeshNode back = cluster.start(lost); // both other voters answer: no committed record
        Outcome seeded = commit(leader, "seed", "S1");
        assertThat(granted(seeded)).isTrue();
        long seq = OutcomeCodec.lastSeq(seeded);
        TestCluster.await(lost + " applies S1", () -> back.status().appliedSeq() >= seq);
        assertThat(MeshStart.unverifiedMarker(dir.resolve(lost + ".db.raft"))).as("its start was checked")
                .doesNotExist();
    }

    @Test
    void aWipedVoterWhoseOnlyAnsweringPeerLagsIsRefusedNotStartedAsANewMesh() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        String lagging = cluster.follower(leader).nodeId();
        String lost = leader.config().peers().stream().map(MeshPeer::id)
                .filter(id -> !id.equals(lagging) && !id.equals(leader.nodeId())).findFirst().orElseThrow();
        cluster.stop(lagging); // it misses every record: they commit on the leader and the node that will be lost
        Outcome seeded = commit(leader, "seed", "S1");
        assertThat(granted(seeded)).isTrue();
        cluster.stop(leader.nodeId());
        cluster.stop(lost);
        cluster.wipe(lost);
        cluster.start(lagging); // the only voter that answers: it holds no record

        cluster.bootstrap(false);
        // with the answering voter's word alone it would start, and the two of them could elect a leader without S1
        assertThatThrownBy(() -> cluster.start(lost)).isInstanceOf(MeshFoundingUnconfirmed.class)
                .hasMessageContaining("1 of the voters").hasMessageContaining("did, 2 must")
                .hasMessageContaining(lagging + " at ").hasMessageContaining("runs the mesh");
        assertThat(MeshGroup.inStorage(dir.resolve(lost + ".db.raft"))).as("no group directory").isNull();
    }

    @Test
    void aVoterThatLostItsStorageRejoinsByRemoveNodeAndAddNodeAndCatchesUpBySnapshot() throws Exception {
        cluster = new TestCluster(dir, 3, SMALL);
        MeshNode leader = cluster.awaitLeader();
        List<MeshPeer> three = List.copyOf(leader.config().peers());
        for (int i = 0; i < 40; i++) {
            assertThat(granted(commit(leader, "seed", "S" + i))).isTrue();
        }
        TestCluster.await("the leader compacted its log", () -> leader.snapshotStatus().logStartIndex() > 1);
        String lost = cluster.follower(leader).nodeId();
        MeshPeer lostPeer = three.stream().filter(p -> p.id().equals(lost)).findFirst().orElseThrow();
        List<MeshPeer> two = three.stream().filter(p -> !p.id().equals(lost)).toList();
        cluster.stop(lost);
        cluster.wipe(lost);

        // the recipe: remove it, start it on empty storage (with the founding --mesh-peers), add it
        MeshMembership.Change shrunk = MeshMembership.removeNode(three, lost, TIMEOUT);
        assertThat(shrunk.after()).extracting(MeshPeer::id).doesNotContain(lost).hasSize(2);
        for (int i = 0; i < 10; i++) {
            assertThat(granted(commit(leader, "while-out", "W" + i))).as("W" + i).isTrue();
        }
        MeshNode back = cluster.start(lost);
        Thread.sleep(2_000); // election timeouts of 300-600 ms: a node that stood has campaigned by now
        assertThat(back.status()).as("it waits for add-node").matches(s -> passive(back));
        MeshMembership.Change grown = MeshMembership.addNode(two, lostPeer, TIMEOUT);
        assertThat(grown.after()).extracting(MeshPeer::id).containsExactlyInAnyOrderElementsOf(
                three.stream().map(MeshPeer::id).toList());

        MeshNode lead = cluster.awaitLeader();
        long seq = lead.status().appliedSeq();
        TestCluster.await(lost + " holds seq " + seq, () -> back.status().appliedSeq() >= seq);
        assertThat(back.snapshotStatus().loadedIndex()).as("it caught up by installing the leader's snapshot")
                .isPositive();
        Outcome through = commit(back, "alice", "R1");
        assertThat(granted(through)).as("a write through the restored node: " + through).isTrue();
        TestCluster.await(lost + " holds the configuration", () -> back.voters().count() == 3
                && !back.voters().changing());
        // it counts toward the quorum again: with the third voter down, the leader and it commit alone
        String third = two.stream().map(MeshPeer::id).filter(id -> !id.equals(lead.nodeId())).findFirst()
                .orElseThrow();
        cluster.stop(third);
        Outcome last = commit(lead, "after", "A1");
        assertThat(granted(last)).as("committed by the leader and the restored node alone: " + last).isTrue();
        TestCluster.await(lost + " applied the last write", () -> back.status().appliedSeq() >= OutcomeCodec.lastSeq(last));
        assertThat(claims(back)).isEqualTo(claims(lead));
    }

    @Test
    void anOriginalNodeRestartedAfterAVoterWasAddedAndAnotherRemovedRejoinsWithTheNewConfiguration() throws Exception {
        cluster = new TestCluster(dir, 3, SMALL);
        MeshNode leader = cluster.awaitLeader();
        List<MeshPeer> three = List.copyOf(leader.config().peers());
        for (int i = 0; i < 20; i++) {
            assertThat(granted(commit(leader, "seed", "S" + i))).isTrue();
        }
        MeshPeer added = cluster.addPeer("n4");
        MeshNode fourth = cluster.start("n4");
        MeshMembership.addNode(three, added, TIMEOUT);
        List<MeshPeer> four = new ArrayList<>(three);
        four.add(added);
        List<String> originals = three.stream().map(MeshPeer::id).filter(id -> !id.equals(leader.nodeId())).toList();
        String removed = originals.get(0);
        String restarted = originals.get(1);
        MeshMembership.Change shrunk = MeshMembership.removeNode(four, removed, TIMEOUT);
        assertThat(shrunk.after()).extracting(MeshPeer::id)
                .containsExactlyInAnyOrder(leader.nodeId(), restarted, "n4");
        cluster.stop(removed);
        cluster.removePeer(removed);

        // the original node goes down; the leader and n4 commit meanwhile (and compact: its log falls behind)
        cluster.stop(restarted);
        for (int i = 0; i < 20; i++) {
            assertThat(granted(commit(leader, "while-down", "D" + i))).as("D" + i).isTrue();
        }
        long before = leader.status().appliedSeq();

        // restarted on its storage, with the --mesh-peers the change printed (its group from its storage)
        MeshNode back = cluster.start(restarted);
        TestCluster.await(restarted + " caught up to seq " + before, () -> back.status().appliedSeq() >= before);
        TestCluster.await(restarted + " holds the new configuration", () -> back.voters().current()
                .containsAll(List.of(leader.nodeId(), restarted, "n4")) && back.voters().count() == 3
                && !back.voters().changing());
        assertThat(back.voters().current()).doesNotContain(removed);
        assertThat(back.config().groupId()).isEqualTo(leader.config().groupId());
        List<MeshPeer> now = cluster.peers();
        TestCluster.await("every voter follows one leader", () -> {
            List<MeshProbe.PeerReport> reports = MeshProbe.probe(now, Duration.ofSeconds(5));
            return reports.stream().allMatch(r -> r.reachable() && r.leaderId() != null
                    && r.leaderId().equals(reports.get(0).leaderId()));
        });

        // it counts toward the quorum again: with n4 down, the leader and the restarted node commit, through it too
        cluster.stop("n4");
        Outcome through = commit(back, "after", "A1");
        assertThat(granted(through)).as("committed by the leader and the restarted node alone: " + through).isTrue();
        MeshNode lead = cluster.awaitLeader();
        Outcome last = commit(lead, "after", "A2");
        assertThat(granted(last)).isTrue();
        TestCluster.await("the restarted node applied the last write",
                () -> back.status().appliedSeq() >= OutcomeCodec.lastSeq(last));
        assertThat(claims(back)).isEqualTo(claims(lead));
        assertThat(fourth.status().appliedSeq()).as("n4 was a voter until stopped").isPositive();
    }

    @Test
    void aChangeThatCannotBeMadeIsRefusedAndNothingChanges() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        List<MeshPeer> three = List.copyOf(leader.config().peers());
        assertThatThrownBy(() -> MeshMembership.removeNode(three, "n9", Duration.ofSeconds(5)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'n9' is not one of");
        assertThatThrownBy(() -> MeshMembership.addNode(three, new MeshPeer("n2", "127.0.0.1", 1),
                Duration.ofSeconds(5))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("already a voter");
        MeshPeer notRunning = new MeshPeer("n5", "127.0.0.1", TestCluster.freePort());
        assertThatThrownBy(() -> MeshMembership.addNode(three, notRunning, Duration.ofSeconds(3)))
                .isInstanceOf(MeshAdmin.MeshAdminException.class).hasMessageContaining("start it first")
                .hasMessageContaining("nothing was changed");
        List<MeshPeer> wrong = three.subList(0, 2);
        assertThatThrownBy(() -> MeshMembership.removeNode(wrong, wrong.get(0).id(), Duration.ofSeconds(5)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("but the mesh's voters are");
        assertThat(MeshProbe.probe(three, Duration.ofSeconds(5))).as("every voter still answers")
                .allMatch(MeshProbe.PeerReport::reachable);
        try (var client = MeshGroup.client(org.apache.ratis.protocol.RaftGroupId.valueOf(leader.config().groupId()),
                three, Duration.ofSeconds(5), null, null)) {
            for (MeshPeer p : three) {
                assertThat(MeshGroup.votersAsSeenBy(client, org.apache.ratis.protocol.RaftGroupId.valueOf(
                        leader.config().groupId()), p.id())).as("no change was made").containsExactlyInAnyOrderElementsOf(three);
            }
        }
        assertThat(granted(commit(leader, "still", "Q1"))).isTrue();
    }

    @Test
    void removingTheLeaderLeavesTheOthersToElectOneAndCommit() throws Exception {
        cluster = new TestCluster(dir, 3);
        MeshNode leader = cluster.awaitLeader();
        List<MeshPeer> three = List.copyOf(leader.config().peers());
        assertThat(granted(commit(leader, "pre", "P1"))).isTrue();

        MeshMembership.Change shrunk = MeshMembership.removeNode(three, leader.nodeId(), TIMEOUT);
        assertThat(shrunk.leader()).isEqualTo(leader.nodeId());
        assertThat(shrunk.after()).extracting(MeshPeer::id).hasSize(2).doesNotContain(leader.nodeId());
        cluster.stop(leader.nodeId());
        cluster.removePeer(leader.nodeId());

        MeshNode next = cluster.awaitLeader();
        assertThat(next.nodeId()).isNotEqualTo(leader.nodeId());
        Outcome after = commit(next, "post", "P2");
        assertThat(granted(after)).as("the two remaining voters commit on their own").isTrue();
        cluster.awaitApplied(OutcomeCodec.lastSeq(after));
        for (MeshNode n : cluster.running()) {
            assertThat(claims(n)).as(n.nodeId()).extracting(c -> c.taskId()).containsExactlyInAnyOrder("P1", "P2");
        }
    }
}
