package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.event.IdentityPinEvent;
import dev.synapsehub.core.event.IdentityPinReclaimEvent;
import dev.synapsehub.core.identity.IdentityPin;
import dev.synapsehub.net.identity.IdentityPinSettings;
import dev.synapsehub.net.identity.PinReclaimAcl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Identity pins on a mesh (wire contract A2; docs/mesh.md, "Identity pins and private channels
 * on a mesh"): a pin is a strong write decided by the leader and applied on every node through
 * the replay path, so a key pinned through one node is the only key any node admits for that
 * name; a reclaim through any node unpins it everywhere; pins survive a restart and reach a node
 * that catches up by snapshot install.
 */
class MeshIdentityPinTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    /** A snapshot every 8 entries, 8 KiB log segments: a few dozen writes compact the log. */
    private static final MeshCompaction SMALL = new MeshCompaction(8, 8 << 10);

    @TempDir
    Path dir;
    private TestCluster cluster;
    private final List<HubClient> clients = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        clients.forEach(HubClient::close);
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Three nodes pinning, each naming its own journal as the pin store; ops/* may reclaim p/*. */
    private TestCluster pinningCluster(MeshCompaction compaction) throws Exception {
        return TestCluster.serving(dir, 3, compaction, PINNING);
    }

    private static final TestCluster.Serving PINNING = (id, db, base) -> base.identityPins(new IdentityPinSettings(
            true, db.toString(), new PinReclaimAcl(List.of(new PinReclaimAcl.Grant("p/*", "ops")))));

    private String store(String node) {
        return dir.resolve(node + ".db").toString();
    }

    private HubClient connect(String node) throws Exception {
        HubClient c = HubClient.connect(cluster.uri(node), WAIT);
        clients.add(c);
        return c;
    }

    /** Sends {@code first} to {@code node} and waits until its sender is bound there (its own presence). */
    private HubClient admitted(String node, ObjectNode first) throws Exception {
        HubClient c = connect(node);
        String name = first.path("sender").asText();
        c.send(first);
        c.awaitWhileOpen(f -> "presence_update".equals(f.path("type").asText()) && name.equals(f.path("agent").asText())
                && "joined".equals(f.path("event").asText()), WAIT);
        return c;
    }

    /** What a refused first frame got: the private error, then the close. */
    private record Refusal(JsonNode error, HubClient.CloseStatus close) {
    }

    private Refusal refused(String node, ObjectNode first) throws Exception {
        HubClient c = connect(node);
        c.send(first);
        JsonNode error = c.await(f -> f.has("verification_result"), WAIT);
        return new Refusal(error, c.awaitClose(WAIT));
    }

    private static ObjectNode unsigned(String sender) {
        ObjectNode f = HubClient.requestFrame(sender, "heartbeat");
        f.put("payload", "online");
        return f;
    }

    private static void assertPinMismatch(Refusal r, String name, String keyId, String result, String store) {
        assertThat(r.error().path("type").asText()).isEqualTo("error");
        assertThat(r.error().path("verification_result").asText()).isEqualTo(result);
        assertThat(r.error().path("payload").asText()).isEqualTo("identity pin: name '" + name + "' is pinned to key "
                + keyId + " (" + result + "). Connect from the machine holding that key, or ask an identity-pin-reclaim"
                + " ACL operator to run synapse identity reclaim --operator=OPERATOR_IDENTITY --expected-key-id="
                + keyId + " --reason=REASON -- " + name + " after inspecting " + store
                + "; the hub needs --db for the mandatory audit.");
        assertThat(r.close()).isEqualTo(new HubClient.CloseStatus(4013, "identity pin mismatch"));
    }

    /** Waits until every running node's committed pin of {@code name} is {@code keyId} (empty: unpinned). */
    private void awaitPinEverywhere(String name, String keyId) throws InterruptedException {
        TestCluster.await("'" + name + "' pinned to " + keyId + " on every node", () -> cluster.running().stream()
                .allMatch(n -> n.actor().committedPin(name).map(IdentityPin::keyId)
                        .equals(Optional.ofNullable(keyId))));
    }

    private String third(String... not) {
        return cluster.running().stream().map(MeshNode::nodeId).filter(id -> !List.of(not).contains(id))
                .findFirst().orElseThrow();
    }

    @Test
    void aKeyPinnedThroughOneNodeIsTheOnlyKeyEveryNodeAdmitsAlsoAfterARestart() throws Exception {
        assertThat(WriteClass.of(new IdentityPinEvent(1, IdentityPinEvent.Op.PIN, "p/a", "k", "K")))
                .as("a pin is a strong write").isEqualTo(WriteClass.STRONG);
        cluster = pinningCluster(MeshCompaction.DEFAULTS);
        MeshNode leader = cluster.awaitLeader();
        String viaFollower = cluster.follower(leader).nodeId(); // the pin is forwarded to the leader
        String other = third(leader.nodeId(), viaFollower);
        AgentKey ann = AgentKey.generate();
        admitted(viaFollower, ann.registration("p/ann"));
        awaitPinEverywhere("p/ann", ann.keyId);

        assertPinMismatch(refused(other, AgentKey.generate().registration("p/ann")), "p/ann", ann.keyId, "unknown_key",
                store(other));
        assertPinMismatch(refused(leader.nodeId(), unsigned("p/ann")), "p/ann", ann.keyId, "signature missing",
                store(leader.nodeId()));
        admitted(other, ann.registration("p/ann")); // the pinned key, on a node it never used
        // an agent that sends no proof is unaffected, on any node
        admitted(other, unsigned("p/bob"));
        assertThat(leader.actor().committedPin("p/bob")).isEmpty();

        cluster.stop(other);
        MeshNode restarted = cluster.start(other);
        TestCluster.await("the restarted node holds the pin again",
                () -> restarted.actor().committedPin("p/ann").isPresent());
        assertPinMismatch(refused(other, AgentKey.generate().registration("p/ann")), "p/ann", ann.keyId, "unknown_key",
                store(other));
    }

    private static JsonNode reclaim(HubClient operator, String name, String pinName, String keyId, boolean breakGlass)
            throws Exception {
        ObjectNode f = operator.frame(name, "identity_pin_reclaim");
        f.put("pin_name", pinName);
        f.put("expected_key_id", keyId);
        f.put("reason", "laptop lost");
        f.put("break_glass", breakGlass);
        operator.send(f);
        return operator.awaitType("identity_pin_reclaim_result", WAIT);
    }

    @Test
    void aReclaimThroughAnyNodeUnpinsEverywhereEvictsTheHolderOnItsNodeAndTellsEveryNode() throws Exception {
        assertThat(WriteClass.of(new IdentityPinReclaimEvent(1, "ops/root", "k", "p/ann", "k", "r", true, false, false,
                false, "approved", false, null, null))).as("the reclaim's records are audit").isEqualTo(
                WriteClass.APPEND_ONLY);
        cluster = pinningCluster(MeshCompaction.DEFAULTS);
        MeshNode leader = cluster.awaitLeader();
        String operatorNode = cluster.follower(leader).nodeId(); // the reclaim is forwarded to the leader
        String holderNode = third(leader.nodeId(), operatorNode);
        AgentKey rootKey = AgentKey.generate();
        AgentKey annKey = AgentKey.generate();
        HubClient root = admitted(operatorNode, rootKey.registration("ops/root"));
        HubClient ann = admitted(holderNode, annKey.registration("p/ann"));
        HubClient watcher = admitted(leader.nodeId(), unsigned("q/watch"));
        awaitPinEverywhere("ops/root", rootKey.keyId);
        awaitPinEverywhere("p/ann", annKey.keyId);

        JsonNode wrong = reclaim(root, "ops/root", "p/ann", "machine-wrong", true);
        assertThat(wrong.path("payload").asText()).isEqualTo("the current pin does not match the expected key id");
        assertThat(wrong.path("applied").asBoolean()).isFalse();

        JsonNode done = reclaim(root, "ops/root", "p/ann", annKey.keyId, true);
        assertThat(done.path("payload").asText()).isEqualTo("identity pin reclaimed; the next valid proof may pin the name");
        assertThat(done.path("applied").asBoolean()).isTrue();
        long auditSeq = done.path("audit_seq").asLong();
        assertThat(auditSeq).isPositive();
        assertThat(ann.awaitClose(WAIT)).as("the holder, on another node")
                .isEqualTo(new HubClient.CloseStatus(4017, "identity pin reclaimed"));
        JsonNode notice = watcher.awaitType("system", WAIT);
        assertThat(notice.path("payload").asText())
                .isEqualTo("Identity pin for 'p/ann' was reclaimed by operator 'ops/root'.");
        assertThat(notice.path("previous_key_id").asText()).isEqualTo(annKey.keyId);
        assertThat(notice.path("break_glass").asBoolean()).isTrue();
        assertThat(notice.path("audit_seq").asLong()).as("the same record on every node").isEqualTo(auditSeq);
        awaitPinEverywhere("p/ann", null);

        // the next valid proof pins the name again, through any node, and binds every node
        AgentKey newKey = AgentKey.generate();
        admitted(leader.nodeId(), newKey.registration("p/ann"));
        awaitPinEverywhere("p/ann", newKey.keyId);
        assertPinMismatch(refused(holderNode, annKey.registration("p/ann")), "p/ann", newKey.keyId, "unknown_key",
                store(holderNode));
    }

    @Test
    void withoutBreakGlassAMeshNodeRefusesWhatItCannotJudgeClusterWideAndBreakGlassEndsTheLeaseOnEveryNode()
            throws Exception {
        cluster = pinningCluster(MeshCompaction.DEFAULTS);
        MeshNode leader = cluster.awaitLeader();
        String operatorNode = cluster.follower(leader).nodeId();
        String holderNode = third(leader.nodeId(), operatorNode);
        AgentKey rootKey = AgentKey.generate();
        AgentKey annKey = AgentKey.generate();
        AgentKey bobKey = AgentKey.generate();
        HubClient root = admitted(operatorNode, rootKey.registration("ops/root"));
        HubClient ann = admitted(holderNode, annKey.registration("p/ann", true)); // online, leased, on another node
        ann.awaitType("lease_granted", WAIT);
        HubClient bob = admitted(operatorNode, bobKey.registration("p/bob")); // online on the operator's node
        awaitPinEverywhere("ops/root", rootKey.keyId);
        awaitPinEverywhere("p/ann", annKey.keyId);
        awaitPinEverywhere("p/bob", bobKey.keyId);

        String otherNodes = "the pinned identity may be online or leased on another mesh node; use explicit "
                + "break-glass recovery to evict it";
        JsonNode here = reclaim(root, "ops/root", "p/bob", bobKey.keyId, false);
        assertThat(here.path("payload").asText()).as("a holder this node sees: the contract's check 11")
                .isEqualTo("the pinned identity is online; use explicit break-glass recovery to evict it");
        JsonNode elsewhere = reclaim(root, "ops/root", "p/ann", annKey.keyId, false);
        assertThat(elsewhere.path("payload").asText()).as("a holder on another node is not seen here: fail closed")
                .isEqualTo(otherNodes);
        assertThat(elsewhere.path("applied").asBoolean()).isFalse();
        assertThat(elsewhere.path("audit_seq").isNull()).isTrue();
        bob.close();
        TestCluster.await("p/bob offline", () -> !cluster.hub(operatorNode).server().services().registry()
                .isOnline("p/bob"));
        assertThat(reclaim(root, "ops/root", "p/bob", bobKey.keyId, false).path("payload").asText())
                .as("offline here proves nothing about the other nodes").isEqualTo(otherNodes);
        awaitPinEverywhere("p/ann", annKey.keyId);
        awaitPinEverywhere("p/bob", bobKey.keyId);
        assertThat(ann.isOpen()).isTrue();

        JsonNode done = reclaim(root, "ops/root", "p/ann", annKey.keyId, true);
        assertThat(done.path("applied").asBoolean()).as(done.toString()).isTrue();
        assertThat(ann.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4017, "identity pin reclaimed"));
        awaitPinEverywhere("p/ann", null);
        // the lease p/ann held on its node ended there too: a new key binds it without the owner_lease
        AgentKey newKey = AgentKey.generate();
        admitted(holderNode, newKey.registration("p/ann"));
        awaitPinEverywhere("p/ann", newKey.keyId);
    }

    /**
     * A node cut off while a reclaim committed applies it later as history, announcing nothing
     * (the decision is older than the stale window), yet the reclaim ends the name's socket and
     * lease there all the same: a new key binds the name on that node without the owner_lease.
     */
    @Test
    void aReclaimANodeAppliesAsHistoryStillEndsTheLeaseAndSocketThere() throws Exception {
        cluster = TestCluster.partitionable(dir, 3, MeshCompaction.DEFAULTS, PINNING);
        MeshNode leader = cluster.awaitLeader();
        String operatorNode = leader.nodeId();
        String holderNode = cluster.follower(leader).nodeId();
        AgentKey rootKey = AgentKey.generate();
        AgentKey annKey = AgentKey.generate();
        HubClient root = admitted(operatorNode, rootKey.registration("ops/root"));
        HubClient ann = admitted(holderNode, annKey.registration("p/ann", true));
        ann.awaitType("lease_granted", WAIT);
        awaitPinEverywhere("ops/root", rootKey.keyId);
        awaitPinEverywhere("p/ann", annKey.keyId);

        cluster.links().isolate(holderNode);
        JsonNode done = reclaim(root, "ops/root", "p/ann", annKey.keyId, true);
        assertThat(done.path("applied").asBoolean()).as(done.toString()).isTrue();
        long seq = leader.status().appliedSeq();
        // past the stale window (2 commit timeouts + the election timeout): the holder's node
        // will apply the reclaim as history, not news
        Thread.sleep(2 * TestCluster.COMMIT_TIMEOUT.toMillis() + 2_000);
        assertThat(ann.isOpen()).as("cut off, the holder's node has not applied the reclaim yet").isTrue();
        cluster.links().healAll();
        TestCluster.await("the holder's node applies the reclaim",
                () -> cluster.node(holderNode).status().appliedSeq() >= seq);

        assertThat(ann.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4017, "identity pin reclaimed"));
        AgentKey newKey = AgentKey.generate();
        admitted(holderNode, newKey.registration("p/ann")); // no owner_lease: the old lease ended here
        awaitPinEverywhere("p/ann", newKey.keyId);
    }

    /**
     * The holder's node is cut off while the reclaim commits and while the log is compacted past
     * it, so it never applies the reclaim as a record: it installs the leader's snapshot, which
     * no longer holds the pin. The installed snapshot ends the name's socket and lease there
     * all the same: a new key binds the name on that node without the owner_lease.
     */
    @Test
    void aReclaimANodeReceivesOnlyThroughAnInstalledSnapshotStillEndsTheLeaseAndSocketThere() throws Exception {
        cluster = TestCluster.partitionable(dir, 3, SMALL, PINNING);
        MeshNode leader = cluster.awaitLeader();
        String operatorNode = leader.nodeId();
        String holderNode = cluster.follower(leader).nodeId();
        AgentKey rootKey = AgentKey.generate();
        AgentKey annKey = AgentKey.generate();
        HubClient root = admitted(operatorNode, rootKey.registration("ops/root"));
        HubClient ann = admitted(holderNode, annKey.registration("p/ann", true));
        ann.awaitType("lease_granted", WAIT);
        awaitPinEverywhere("ops/root", rootKey.keyId);
        awaitPinEverywhere("p/ann", annKey.keyId);

        MeshNode holder = cluster.node(holderNode);
        long cutAt = holder.status().appliedIndex();
        long installedBefore = holder.snapshotStatus().loadedIndex();
        cluster.links().isolate(holderNode);
        JsonNode done = reclaim(root, "ops/root", "p/ann", annKey.keyId, true);
        assertThat(done.path("applied").asBoolean()).as(done.toString()).isTrue();
        for (int i = 0; i < 200 && leader.snapshotStatus().logStartIndex() <= cutAt + 1; i++) {
            MeshReplicationTest.submit(leader, Mutation.of(MeshReplicationTest.claim("load", "L" + i)));
        }
        TestCluster.await("the leader compacted past the cut-off node",
                () -> leader.snapshotStatus().logStartIndex() > cutAt + 1);
        assertThat(ann.isOpen()).as("cut off, the holder's node has not learned of the reclaim").isTrue();

        cluster.links().healAll();
        long seq = leader.status().appliedSeq();
        TestCluster.await("the holder's node catches up", () -> holder.status().appliedSeq() >= seq);
        assertThat(holder.snapshotStatus().loadedIndex()).as("it installed the leader's snapshot")
                .isGreaterThan(Math.max(cutAt, installedBefore));
        assertThat(holder.actor().committedPin("p/ann")).as("the reclaim reached it in the snapshot").isEmpty();

        assertThat(ann.awaitClose(WAIT)).isEqualTo(new HubClient.CloseStatus(4017, "identity pin reclaimed"));
        AgentKey newKey = AgentKey.generate();
        admitted(holderNode, newKey.registration("p/ann")); // no owner_lease: the old lease ended here
        awaitPinEverywhere("p/ann", newKey.keyId);
    }

    @Test
    void pinsAndUnpinsMadeWhileANodeWasDownReachItBySnapshotInstall() throws Exception {
        cluster = pinningCluster(SMALL);
        MeshNode leader = cluster.awaitLeader();
        String operatorNode = leader.nodeId();
        String lagging = cluster.follower(leader).nodeId();
        AgentKey rootKey = AgentKey.generate();
        AgentKey oldKey = AgentKey.generate();
        HubClient root = admitted(operatorNode, rootKey.registration("ops/root"));
        admitted(operatorNode, oldKey.registration("p/old")).close();
        awaitPinEverywhere("ops/root", rootKey.keyId);
        awaitPinEverywhere("p/old", oldKey.keyId);
        long downAt = cluster.node(lagging).status().appliedIndex();
        cluster.stop(lagging);

        AgentKey ann = AgentKey.generate();
        admitted(operatorNode, ann.registration("p/ann"));
        TestCluster.await("p/ann pinned", () -> leader.actor().committedPin("p/ann").isPresent());
        TestCluster.await("p/old offline", () -> !cluster.hub(operatorNode).server().services().registry()
                .isOnline("p/old"));
        // break-glass: a mesh node cannot tell that p/old is offline on the stopped node (fails closed)
        assertThat(reclaim(root, "ops/root", "p/old", oldKey.keyId, true).path("applied").asBoolean()).isTrue();
        // load until the log is compacted past it (an outcome left undecided by a leader change is fine here)
        for (int i = 0; i < 120 && leader.snapshotStatus().logStartIndex() <= downAt + 1; i++) {
            MeshReplicationTest.submit(leader, Mutation.of(MeshReplicationTest.claim("load", "L" + i)));
        }
        TestCluster.await("the leader compacted past the lagging node",
                () -> leader.snapshotStatus().logStartIndex() > downAt + 1);

        MeshNode back = cluster.start(lagging);
        long seq = leader.status().appliedSeq();
        TestCluster.await("the lagging node catches up", () -> back.status().appliedSeq() >= seq);
        assertThat(back.snapshotStatus().loadedIndex()).as("it installed the leader's snapshot")
                .isGreaterThan(downAt + 1);
        assertThat(back.actor().committedPin("p/ann").map(IdentityPin::keyId)).contains(ann.keyId);
        assertThat(back.actor().committedPin("p/old")).as("the reclaim reached it too").isEmpty();
        assertPinMismatch(refused(lagging, AgentKey.generate().registration("p/ann")), "p/ann", ann.keyId,
                "unknown_key", store(lagging));
        admitted(lagging, AgentKey.generate().registration("p/old")); // unpinned: a new key pins it
        TestCluster.await("p/old pinned again", () -> leader.actor().committedPin("p/old").isPresent());
    }
}
