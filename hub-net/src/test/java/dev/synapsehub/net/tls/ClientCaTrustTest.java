package dev.synapsehub.net.tls;

import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClientCaTrustTest {
    @TempDir
    Path dir;

    private static List<X509Certificate> chain(TestCertificates.Identity leaf) {
        return List.of(leaf.certificate());
    }

    @Test
    void aRotatedCaIsReadAtTheNextCheckAndTheOldCaLosesItsTrust() throws Exception {
        TestCertificates.Authority oldCa = TestCertificates.authority("ca-old");
        TestCertificates.Authority newCa = TestCertificates.authority("ca-rotated");
        Path file = oldCa.writeCertificate(dir, "client-ca");
        ClientCaTrust trust = ClientCaTrust.watching(file);
        TestCertificates.Identity before = oldCa.issue("hub-a");
        TestCertificates.Identity after = newCa.issue("hub-a");

        trust.verify(chain(before));
        assertThatThrownBy(() -> trust.verify(chain(after))).isInstanceOf(CertificateException.class);
        assertThat(trust.getAcceptedIssuers()).containsExactly(oldCa.identity().certificate());

        TestCertificates.writePrivate(file, Files.readString(newCa.writeCertificate(dir, "staged")));
        trust.verify(chain(after));
        assertThatThrownBy(() -> trust.verify(chain(before))).isInstanceOf(CertificateException.class);
        assertThat(trust.getAcceptedIssuers()).containsExactly(newCa.identity().certificate());
    }

    @Test
    void aChainThatPassedIsNotValidatedAgainUntilTheFileChanges() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("ca");
        Path file = ca.writeCertificate(dir, "client-ca");
        ClientCaTrust trust = ClientCaTrust.watching(file);
        TestCertificates.Identity peer = ca.issue("hub-a");
        TestCertificates.Identity stranger = TestCertificates.authority("ca-other").issue("hub-a");

        trust.verify(chain(peer));
        trust.verify(chain(peer));
        trust.verify(List.copyOf(chain(peer))); // the same chain as another list (each request reads the session's)
        assertThat(trust.fullChecks()).isEqualTo(1);
        assertThatThrownBy(() -> trust.verify(chain(stranger))).isInstanceOf(CertificateException.class);
        assertThatThrownBy(() -> trust.verify(chain(stranger))).isInstanceOf(CertificateException.class);
        assertThat(trust.fullChecks()).as("a refusal is never remembered").isEqualTo(3);

        // the same CA written again is another version of the file: nothing it did not check itself counts
        TestCertificates.writePrivate(file, Files.readString(file) + "\n");
        trust.verify(chain(peer));
        assertThat(trust.fullChecks()).isEqualTo(4);
    }

    @Test
    void aRememberedChainCountsOnlyWhileEveryCertificateInItIsValid() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("ca");
        ClientCaTrust trust = ClientCaTrust.watching(ca.writeCertificate(dir, "client-ca"));
        TestCertificates.Identity brief = ca.issue("hub-a", java.time.Duration.ofSeconds(2));
        trust.verify(chain(brief));

        long end = brief.certificate().getNotAfter().getTime();
        long deadline = System.currentTimeMillis() + 10_000; // bounded: the certificate ends 2 s after it was made
        while (System.currentTimeMillis() <= end && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        assertThatThrownBy(() -> trust.verify(chain(brief))).isInstanceOf(CertificateException.class);
        assertThat(trust.fullChecks()).isEqualTo(2);
    }

    @Test
    void aFileThatNoLongerParsesTrustsNothingUntilItDoesAndNeverFallsBackToTheOldCa() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("ca");
        Path file = ca.writeCertificate(dir, "client-ca");
        String good = Files.readString(file);
        ClientCaTrust trust = ClientCaTrust.watching(file);
        TestCertificates.Identity peer = ca.issue("hub-a");
        trust.verify(chain(peer));

        TestCertificates.writePrivate(file, "-----BEGIN CERTIFICATE-----\nnot base64 at all\n");
        assertThatThrownBy(() -> trust.verify(chain(peer))).isInstanceOf(CertificateException.class)
                .hasMessageContaining(file.toString());
        assertThat(trust.getAcceptedIssuers()).isEmpty();

        Files.delete(file);
        assertThatThrownBy(() -> trust.verify(chain(peer))).hasMessageContaining("not a readable file");

        TestCertificates.writePrivate(file, good + "\n");
        trust.verify(chain(peer));
    }

    @Test
    void aCaFileThatCannotBeUsedAtStartUpIsRefusedNamingIt() throws Exception {
        Path empty = dir.resolve("empty.pem");
        TestCertificates.writePrivate(empty, "");
        assertThatThrownBy(() -> ClientCaTrust.watching(empty)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty.pem");
        assertThatThrownBy(() -> ClientCaTrust.watching(dir.resolve("missing.pem")))
                .hasMessageContaining("not a readable file");
    }

    @Test
    void itVerifiesClientsOnlyAndNoChainIsNoTrust() throws Exception {
        TestCertificates.Authority ca = TestCertificates.authority("ca");
        ClientCaTrust trust = ClientCaTrust.watching(ca.writeCertificate(dir, "client-ca"));
        X509Certificate[] leaf = {ca.issue("hub-a").certificate()};
        assertThatThrownBy(() -> trust.checkServerTrusted(leaf, "RSA")).isInstanceOf(CertificateException.class);
        assertThatThrownBy(() -> trust.verify(List.of())).isInstanceOf(CertificateException.class);
    }
}
