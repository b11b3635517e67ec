package dev.synapsehub.mesh;

import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.synapsehub.mesh.MeshReplicationTest.claim;
import static dev.synapsehub.mesh.MeshReplicationTest.claims;
import static dev.synapsehub.mesh.MeshReplicationTest.submit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rotated mesh TLS files are picked up by a running node, without a restart: a CA file that
 * now also holds a second CA admits that CA's clients, a node's certificate rotated to one the
 * second CA issued is what new connections get, the mesh keeps committing, and a broken set
 * of files is refused (counted, on /metrics) while the previous one stays in force.
 */
class MeshTlsReloadTest {
    @TempDir
    Path dir;
    private TestCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static void overwrite(Path target, Path source) throws IOException {
        Files.write(target, Files.readAllBytes(source)); // in place: the key file keeps its owner-only mode
    }

    @Test
    void rotatedCaAndCertificateFilesAreUsedByNewConnectionsWithoutARestart() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("mesh-ca");
        Path caFile = ca.writeCertificate(dir, "mesh-ca");
        Map<String, MeshTls> tls = new HashMap<>();
        for (String id : List.of("n1", "n2", "n3")) {
            TestCertificates.PemPair pair = ca.issue(id).write(dir, id);
            tls.put(id, MeshTls.load(pair.cert(), pair.key(), caFile));
        }
        cluster = new TestCluster(dir, 3, tls::get);
        cluster.awaitLeader();
        List<MeshPeer> peers = cluster.peers();
        MeshNode n1 = cluster.node("n1");

        TestCertificates.Authority next = TestCertificates.authority("mesh-ca-2");
        Path nextFile = next.writeCertificate(dir, "mesh-ca-2");
        TestCertificates.Identity member = next.issue("member-of-ca-2");
        TestCertificates.PemPair memberFiles = member.write(dir, "member-of-ca-2");
        Path bothCas = dir.resolve("both-cas.pem");
        Files.writeString(bothCas, Files.readString(caFile) + Files.readString(nextFile));
        MeshTls operatorOfNext = MeshTls.load(memberFiles.cert(), memberFiles.key(), bothCas); // as mesh status loads it
        assertThat(probed(peers, operatorOfNext)).as("before: an operator of the second CA is refused").isFalse();
        assertThat(n1.tlsReload().check()).as("nothing changed yet").isFalse();

        // 1. the CA file now holds both CAs: every node trusts the second one from its next handshake on
        Files.writeString(caFile, Files.readString(caFile) + Files.readString(nextFile));
        for (MeshNode n : cluster.running()) {
            TestCluster.await(n.nodeId() + " reloads its CA file", () -> n.tlsReload().check()
                    || n.tlsReload().reloads() == 1);
        }
        TestCluster.await("every node answers an operator of the second CA", () -> probed(peers, operatorOfNext));

        // 2. n1's certificate and key rotated to ones the second CA issued
        // an operator that trusts only the second CA: it completes a handshake with n1 only once n1 presents a
        // certificate that CA issued
        MeshTls trustsOnlyNext = MeshTls.load(memberFiles.cert(), memberFiles.key(), nextFile);
        List<MeshPeer> justN1 = peers.stream().filter(p -> p.id().equals("n1")).toList();
        assertThat(probed(justN1, trustsOnlyNext)).as("before: n1 presents its first CA's certificate").isFalse();
        TestCertificates.PemPair rotated = next.issue("n1-rotated").write(dir, "n1-rotated");
        overwrite(tls.get("n1").certFile(), rotated.cert());
        overwrite(tls.get("n1").keyFile(), rotated.key());
        TestCluster.await("n1 reloads its certificate", () -> n1.tlsReload().check() || n1.tlsReload().reloads() == 2);
        assertThat(n1.tlsReload().subject()).contains("n1-rotated");
        TestCluster.await("n1 presents the rotated certificate to a new client",
                () -> probed(justN1, trustsOnlyNext));

        // new connections between nodes: n2 restarts (loading the files as they are now), n1 reconnects to it
        cluster.stop("n2");
        cluster.tls("n2", MeshTls.load(tls.get("n2").certFile(), tls.get("n2").keyFile(), caFile));
        MeshNode n2 = cluster.start("n2");
        Outcome viaN1 = submit(n1, Mutation.of(claim("alice", "R1")));
        Outcome viaN2 = submit(n2, Mutation.of(claim("bob", "R2")));
        assertThat(viaN1).isInstanceOf(Outcome.Decided.class);
        assertThat(viaN2).isInstanceOf(Outcome.Decided.class);
        long seq = Math.max(OutcomeCodec.lastSeq(viaN1), OutcomeCodec.lastSeq(viaN2));
        cluster.awaitApplied(seq);
        for (MeshNode n : cluster.running()) {
            assertThat(claims(n)).as(n.nodeId()).extracting(c -> c.taskId() + "=" + c.owner())
                    .containsExactlyInAnyOrder("R1=alice", "R2=bob");
        }

        // 3. a broken rotation (a key that is not the certificate's) is refused and changes nothing
        TestCertificates.PemPair stranger = next.issue("stranger").write(dir, "stranger");
        overwrite(tls.get("n1").keyFile(), stranger.key());
        TestCluster.await("n1 refuses the mismatched key", () -> {
            n1.tlsReload().check();
            return n1.tlsReload().failures() == 1;
        });
        assertThat(n1.tlsReload().check()).as("refused once, not again until the files change").isFalse();
        assertThat(n1.tlsReload().failures()).isEqualTo(1);
        assertThat(n1.tlsReload().reloads()).isEqualTo(2);
        assertThat(n1.tlsReload().subject()).contains("n1-rotated");
        assertThat(probed(justN1, trustsOnlyNext)).as("the previous files stay in force").isTrue();
        StringBuilder metrics = new StringBuilder();
        new MeshFace(n1).appendMetrics(metrics);
        assertThat(metrics.toString()).contains("\nsynapse_mesh_tls_reloads_total 2\n")
                .contains("\nsynapse_mesh_tls_reload_failures_total 1\n");
    }

    /** True when every voter answers {@code mesh status}'s probe with {@code tls}. */
    private static boolean probed(List<MeshPeer> peers, MeshTls tls) {
        return MeshProbe.probe(peers, java.time.Duration.ofSeconds(3), tls).stream()
                .allMatch(MeshProbe.PeerReport::reachable);
    }

}
