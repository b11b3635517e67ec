package dev.synapsehub.mesh;

import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.claims;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Seed 001 §15: with mutual TLS configured, the Raft transport (replication, elections,
 * forwarding to the leader, the admin channel) is open only to certificates the cluster CA
 * issued. A node whose certificate another CA issued never joins and leaves the cluster
 * unaffected; clients with a foreign certificate, none, or plain gRPC are refused.
 */
class MeshTlsTest {
    private static final Duration PROBE = Duration.ofSeconds(3);

    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** One node's files from {@code ca}: certificate, key, and the CA they must chain to. */
    private MeshTls issue(TestCertificates.Authority ca, Path caFile, String name) throws Exception {
        return issue(dir, ca, caFile, name);
    }

    /** One node's files from {@code ca} written in {@code dir} (also for the other mesh TLS tests). */
    static MeshTls issue(Path dir, TestCertificates.Authority ca, Path caFile, String name) throws Exception {
        TestCertificates.PemPair pair = ca.issue(name).write(dir, name);
        return MeshTls.load(pair.cert(), pair.key(), caFile);
    }

    @Test
    void aNodeWithACertificateFromAnotherCaCannotJoinAndTheClusterCommitsWithoutIt() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("mesh-ca");
        Path caFile = ca.writeCertificate(dir, "mesh-ca");
        TestCertificates.Authority rogueCa = TestCertificates.authority("rogue-ca");
        Path rogueCaFile = rogueCa.writeCertificate(dir, "rogue-ca");
        Map<String, MeshTls> tls = new HashMap<>();
        for (String id : List.of("n1", "n2", "n3")) {
            tls.put(id, issue(ca, caFile, id));
        }
        MeshTls rogue = issue(rogueCa, rogueCaFile, "n3-rogue"); // a valid setup, just not the cluster's CA
        cluster = new TestCluster(dir, 3, id -> id.equals("n3") ? rogue : tls.get(id));

        MeshNode leader = cluster.awaitLeader();
        assertThat(leader.nodeId()).as("n3 cannot be elected: nobody hears it").isNotEqualTo("n3");
        MeshNode follower = cluster.node(leader.nodeId().equals("n1") ? "n2" : "n1");
        Outcome viaLeader = submit(leader, Mutation.of(claim("alice", "T1")));
        Outcome viaFollower = submit(follower, Mutation.of(claim("bob", "T2"))); // forwarded over TLS
        assertThat(viaLeader).isInstanceOf(Outcome.Decided.class);
        assertThat(viaFollower).isInstanceOf(Outcome.Decided.class);
        long seq = OutcomeCodec.lastSeq(viaFollower);
        TestCluster.await("n1 and n2 apply both claims",
                () -> leader.status().appliedSeq() >= seq && follower.status().appliedSeq() >= seq);
        assertThat(claims(follower)).extracting(c -> c.taskId() + "=" + c.owner())
                .containsExactlyInAnyOrder("T1=alice", "T2=bob");

        MeshNode outsider = cluster.node("n3");
        MeshStatus shut = outsider.status();
        assertThat(shut.leaderId()).as("n3 never heard from the leader").isNull();
        assertThat(shut.appliedSeq()).as("n3 received nothing").isZero();
        assertThat(claims(outsider)).isEmpty();
        TestCluster.await("the leader reports n3 matching none of the claims' entries", () -> {
            for (MeshNode n : cluster.running()) { // the leader may change under load: ask the current one
                MeshStatus seen = n.status();
                Long n3 = seen.peerMatchIndex().get("n3");
                if (seen.leading() && n3 != null && n3 < seen.commitIndex()) {
                    return true;
                }
            }
            return false;
        });

        // with a certificate from the cluster CA, the same storage is refused: its first start could not be checked
        // (no peer heard it), so it may be a voter that lost its storage; it joins by the recipe, and catches up
        cluster.stop("n3");
        cluster.tls("n3", tls.get("n3"));
        assertThatThrownBy(() -> cluster.start("n3")).isInstanceOf(MeshRejoinRefused.class)
                .hasMessageContaining("mesh remove-node");
        List<MeshPeer> three = List.copyOf(leader.config().peers());
        MeshPeer n3 = three.stream().filter(p -> p.id().equals("n3")).findFirst().orElseThrow();
        List<MeshPeer> two = three.stream().filter(p -> !p.id().equals("n3")).toList();
        MeshMembership.removeNode(three, "n3", java.time.Duration.ofSeconds(30), tls.get("n1"));
        cluster.wipe("n3");
        MeshNode joined = cluster.start("n3"); // not a voter now: it waits for add-node
        MeshMembership.addNode(two, n3, java.time.Duration.ofSeconds(30), tls.get("n1"));
        cluster.awaitApplied(seq);
        MeshNode now = cluster.awaitLeader();
        Outcome viaN3 = submit(joined, Mutation.of(claim("carol", "T3")));
        assertThat(viaN3).as("n3 is a member now (%s leads)", now.nodeId()).isInstanceOf(Outcome.Decided.class);
        cluster.awaitApplied(OutcomeCodec.lastSeq(viaN3));
        for (MeshNode n : cluster.running()) {
            assertThat(claims(n)).as(n.nodeId()).extracting(c -> c.taskId() + "=" + c.owner())
                    .containsExactlyInAnyOrder("T1=alice", "T2=bob", "T3=carol");
        }
    }

    @Test
    void theAdminChannelAnswersOnlyClientsWithACertificateFromTheClusterCa() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("mesh-ca");
        Path caFile = ca.writeCertificate(dir, "mesh-ca");
        Map<String, MeshTls> tls = new HashMap<>();
        for (String id : List.of("n1", "n2", "n3")) {
            tls.put(id, issue(ca, caFile, id));
        }
        cluster = new TestCluster(dir, 3, tls::get);
        cluster.awaitLeader();
        List<MeshPeer> peers = cluster.peers();

        MeshTls operator = issue(ca, caFile, "operator"); // an admin certificate from the cluster CA
        TestCluster.await("every voter answers the operator over TLS and a majority names one leader", () -> {
            List<MeshProbe.PeerReport> reports = MeshProbe.probe(peers, PROBE, operator);
            return reports.stream().allMatch(MeshProbe.PeerReport::reachable)
                    && MeshAdmin.agreedLeader(reports, 2) != null;
        });
        TestCluster.await("every voter reports its queue depth over TLS", () -> MeshQueueProbe.queueDepths(peers,
                PROBE, operator).values().stream().allMatch(depth -> depth != null && depth == 0));

        assertThat(MeshProbe.probe(peers, PROBE)).as("plain gRPC is refused")
                .noneMatch(MeshProbe.PeerReport::reachable);
        assertThat(MeshQueueProbe.queueDepths(peers, PROBE)).as("plain gRPC is refused").containsValues(null, null, null);

        // these clients trust the cluster's servers, so only the servers' check of the client can refuse them
        X509Certificate clusterCa = ca.identity().certificate();
        TestCertificates.Identity foreign = TestCertificates.authority("rogue-ca").issue("intruder");
        assertThat(askInfo(peers, "n1", new GrpcTlsConfig(foreign.key(), foreign.certificate(), clusterCa, true)))
                .as("a client certificate from another CA is refused").isFalse();
        assertThat(askInfo(peers, "n1", new GrpcTlsConfig((PrivateKey) null, (X509Certificate) null, clusterCa, false)))
                .as("a client without a certificate is refused").isFalse();
        TestCertificates.Identity member = ca.issue("member");
        assertThat(askInfo(peers, "n1", new GrpcTlsConfig(member.key(), member.certificate(), clusterCa, true)))
                .as("the control: the same client with a certificate from the cluster CA is answered").isTrue();
    }

    /** Asks voter {@code id} for its group info with exactly {@code tls}; true when answered. */
    private static boolean askInfo(List<MeshPeer> peers, String id, GrpcTlsConfig tls) {
        List<RaftPeer> raftPeers = new ArrayList<>();
        for (MeshPeer p : peers) {
            raftPeers.add(RaftPeer.newBuilder().setId(p.id()).setAddress(p.address()).build());
        }
        RaftGroupId group = RaftGroupId.valueOf(MeshConfig.groupId(peers));
        RaftProperties properties = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties, TimeDuration.valueOf(3, TimeUnit.SECONDS));
        Parameters parameters = new Parameters();
        GrpcConfigKeys.TLS.setConf(parameters, tls);
        try (RaftClient client = RaftClient.newBuilder().setRaftGroup(RaftGroup.valueOf(group, raftPeers))
                .setProperties(properties).setParameters(parameters).setRetryPolicy(RetryPolicies.noRetry()).build()) {
            return client.getGroupManagementApi(RaftPeerId.valueOf(id)).info(group).isSuccess();
        } catch (IOException | RuntimeException refused) {
            return false;
        }
    }
}
