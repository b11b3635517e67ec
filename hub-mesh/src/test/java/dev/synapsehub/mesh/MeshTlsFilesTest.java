package dev.synapsehub.mesh;

import dev.synapsehub.client.tls.PasswordKeyDerivations;
import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Mesh TLS files are checked once at start, each mistake refused with the flag, the file and the fix. */
class MeshTlsFilesTest {
    @TempDir
    Path dir;

    @Test
    void noFilesMeansPlainGrpcAndAllThreeLoad() throws Exception {
        assertThat(MeshTls.load(null, null, null)).isNull();
        TestCertificates.Authority ca = TestCertificates.authority("mesh-ca");
        Path caFile = ca.writeCertificate(dir, "ca");
        TestCertificates.PemPair n1 = ca.issue("n1").write(dir, "n1");
        MeshTls tls = MeshTls.load(n1.cert(), n1.key(), caFile);
        assertThat(tls.subject()).isEqualTo("CN=n1");
        assertThat(tls.describe()).contains("mutual TLS", n1.cert().toString(), caFile.toString())
                .doesNotContain(Files.readString(n1.key()).lines().skip(1).findFirst().orElseThrow());
    }

    @Test
    void aPartialSetIsRefusedNamingWhatIsMissing() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("mesh-ca");
        Path caFile = ca.writeCertificate(dir, "ca");
        TestCertificates.PemPair n1 = ca.issue("n1").write(dir, "n1");
        assertThatThrownBy(() -> MeshTls.load(n1.cert(), null, caFile)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--mesh-tls-keyfile missing").hasMessageContaining("all three or none");
        assertThatThrownBy(() -> MeshTls.load(n1.cert(), n1.key(), null))
                .hasMessageStartingWith("--mesh-tls-cafile missing");
        assertThatThrownBy(() -> MeshTls.load(null, null, caFile))
                .hasMessageStartingWith("--mesh-tls-certfile, --mesh-tls-keyfile missing");
    }

    @Test
    void unreadableOrWrongFilesAreRefusedWithTheFlagAndTheFix() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("mesh-ca");
        Path caFile = ca.writeCertificate(dir, "ca");
        TestCertificates.PemPair n1 = ca.issue("n1").write(dir, "n1");
        TestCertificates.PemPair n2 = ca.issue("n2").write(dir, "n2");

        Path absent = dir.resolve("absent.pem");
        assertThatThrownBy(() -> MeshTls.load(absent, n1.key(), caFile))
                .hasMessage("--mesh-tls-certfile " + absent + ": no such file");
        assertThatThrownBy(() -> MeshTls.load(n1.cert(), n1.key(), dir))
                .hasMessage("--mesh-tls-cafile " + dir + ": not a regular file");
        assertThatThrownBy(() -> MeshTls.load(n1.key(), n1.key(), caFile))
                .hasMessageStartingWith("--mesh-tls-certfile " + n1.key()).hasMessageContaining("BEGIN CERTIFICATE");
        assertThatThrownBy(() -> MeshTls.load(n1.cert(), n2.key(), caFile))
                .hasMessage("--mesh-tls-keyfile " + n2.key() + " is not the private key of --mesh-tls-certfile "
                        + n1.cert());

        Path traditional = dir.resolve("ec.key");
        TestCertificates.writePrivate(traditional, Files.readString(n1.key()).replace("PRIVATE KEY", "EC PRIVATE KEY"));
        assertThatThrownBy(() -> MeshTls.load(n1.cert(), traditional, caFile))
                .hasMessageContaining("is a EC PRIVATE KEY, not an unencrypted PKCS#8 key")
                .hasMessageContaining("openssl pkcs8 -topk8 -nocrypt");

        Path shared = dir.resolve("shared.key");
        Files.copy(n1.key(), shared);
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> MeshTls.load(n1.cert(), shared, caFile))
                .hasMessage("--mesh-tls-keyfile " + shared + " is readable or writable by others; make it owner-only "
                        + "(chmod 600)");
    }

    @Test
    void aCertificateTheClusterCaDidNotIssueOrThatExpiredIsRefused() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("mesh-ca");
        Path caFile = ca.writeCertificate(dir, "ca");
        TestCertificates.PemPair foreign = TestCertificates.authority("other-ca").issue("n1").write(dir, "foreign");
        assertThatThrownBy(() -> MeshTls.load(foreign.cert(), foreign.key(), caFile))
                .hasMessageStartingWith("--mesh-tls-certfile " + foreign.cert() + " is not issued by the cluster CA in "
                        + "--mesh-tls-cafile " + caFile)
                .hasMessageEndingWith("every peer would refuse this node");

        TestCertificates.PemPair expired = ca.issue("n1", Duration.ofDays(-1)).write(dir, "expired");
        assertThatThrownBy(() -> MeshTls.load(expired.cert(), expired.key(), caFile))
                .hasMessageStartingWith("--mesh-tls-certfile " + expired.cert() + " expired on ");
    }

    /**
     * The managers hold the node's key in an in-memory store that derives no password-based key
     * (a PKCS#12 store ran 10,000 PBKDF2 rounds to store it and again to read it, at every start
     * and reload): with a provider first in line that counts and refuses every PBE key derivation,
     * the managers still build and present the node's certificate.
     */
    @Test
    void managersDeriveNoPasswordBasedKey() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("mesh-ca");
        Path caFile = ca.writeCertificate(dir, "ca");
        TestCertificates.PemPair n1 = ca.issue("n1").write(dir, "n1");
        MeshTls tls = MeshTls.load(n1.cert(), n1.key(), caFile);
        MeshTls.Managers[] managers = new MeshTls.Managers[1];
        assertThat(PasswordKeyDerivations.countedDuring(() -> managers[0] = tls.managers())).isZero();
        javax.net.ssl.X509KeyManager keys = (javax.net.ssl.X509KeyManager) managers[0].keyManager();
        String alias = keys.chooseClientAlias(new String[] {"EC", "RSA"}, null, null);
        assertThat(keys.getCertificateChain(alias)[0].getSubjectX500Principal().getName()).isEqualTo("CN=n1");
        assertThat(((javax.net.ssl.X509TrustManager) managers[0].trustManager()).getAcceptedIssuers()).hasSize(1);
    }

}
