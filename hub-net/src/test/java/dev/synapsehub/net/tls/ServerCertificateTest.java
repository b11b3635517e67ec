package dev.synapsehub.net.tls;

import dev.synapsehub.client.tls.TestCertificates;
import io.netty.handler.ssl.SslContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The server certificate watcher, checked directly ({@link ServerCertificate#checkNow()}) rather than awaited. */
class ServerCertificateTest {
    @TempDir
    Path dir;

    /**
     * A Kubernetes secret mount: {@code tls.crt -> ..data/tls.crt}, {@code ..data -> ..<timestamp>};
     * a rotation swaps {@code ..data} and leaves the links the hub was given untouched.
     */
    @Test
    void aSwappedDataLinkAsAKubernetesSecretMountRotatesIsReloaded() throws Exception {
        version("..2026_12_02_a", TestCertificates.selfSigned("hub"));
        Files.createSymbolicLink(dir.resolve("..data"), Path.of("..2026_12_02_a"));
        Files.createSymbolicLink(dir.resolve("tls.crt"), Path.of("..data", "tls.crt"));
        Files.createSymbolicLink(dir.resolve("tls.key"), Path.of("..data", "tls.key"));
        AtomicLong reloads = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        try (ServerCertificate c = ServerCertificate.watching(new TlsFiles(dir.resolve("tls.crt"),
                dir.resolve("tls.key"), null), reloads, failures)) {
            SslContext first = c.context();
            c.checkNow();
            assertThat(reloads.get()).as("nothing changed yet").isZero();

            version("..2026_12_02_b", TestCertificates.selfSigned("hub"));
            Files.createSymbolicLink(dir.resolve("..data_tmp"), Path.of("..2026_12_02_b"));
            Files.move(dir.resolve("..data_tmp"), dir.resolve("..data"), StandardCopyOption.ATOMIC_MOVE);
            c.checkNow();
            assertThat(reloads.get()).as("the swap is seen through the links").isEqualTo(1);
            assertThat(failures.get()).isZero();
            assertThat(c.context()).isNotSameAs(first);
        }
    }

    @Test
    void aKeyThatIsNotTheCertificatesIsRefusedAtStartAndOnReloadKeepsThePreviousPair() throws Exception {
        TestCertificates.Identity first = TestCertificates.selfSigned("hub");
        TestCertificates.Identity second = TestCertificates.selfSigned("hub");
        TestCertificates.PemPair live = first.write(dir, "server");
        TestCertificates.PemPair other = second.write(Files.createDirectories(dir.resolve("other")), "server");
        TlsFiles mixed = new TlsFiles(other.cert(), live.key(), null);
        assertThatThrownBy(() -> ServerTls.context(mixed)).as("at start: refused, naming both files and the fix")
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not belong to the certificate").hasMessageContaining(live.key().toString())
                .hasMessageContaining(other.cert().toString()).hasMessageContaining("openssl");

        AtomicLong reloads = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        try (ServerCertificate c = ServerCertificate.watching(new TlsFiles(live.cert(), live.key(), null), reloads,
                failures)) {
            SslContext kept = c.context();
            Path staged = dir.resolve("staged.pem");
            Files.copy(other.cert(), staged);
            Files.move(staged, live.cert(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            c.checkNow();
            c.checkNow(); // the same bad pair is counted once
            assertThat(failures.get()).as("a certificate without its key is a failed reload").isEqualTo(1);
            assertThat(reloads.get()).isZero();
            assertThat(c.context()).as("the previous pair stays in use").isSameAs(kept);

            Path key = dir.resolve("staged.key");
            Files.copy(other.key(), key);
            Files.move(key, live.key(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            c.checkNow();
            assertThat(reloads.get()).as("its key moved in beside it: loaded").isEqualTo(1);
            assertThat(c.context()).isNotSameAs(kept);
        }
    }

    private void version(String name, TestCertificates.Identity identity) throws Exception {
        Path v = Files.createDirectories(dir.resolve(name));
        TestCertificates.PemPair pair = identity.write(v, "staged");
        Files.move(pair.cert(), v.resolve("tls.crt"));
        Files.move(pair.key(), v.resolve("tls.key"));
    }
}
