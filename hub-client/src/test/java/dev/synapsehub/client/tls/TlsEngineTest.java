package dev.synapsehub.client.tls;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.OpenSslContext;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hub's TLS contexts run on BoringSSL where its library loads (linux-x86_64 ships it, so
 * there it must), on the JDK's TLS elsewhere, and on the JDK's when asked to.
 */
class TlsEngineTest {
    @TempDir
    Path dir;

    /** linux-x86_64, the one platform whose BoringSSL jar the hub ships: there it must load. */
    private static boolean shippedPlatform() {
        String arch = System.getProperty("os.arch");
        return "Linux".equals(System.getProperty("os.name")) && ("amd64".equals(arch) || "x86_64".equals(arch));
    }

    @Test
    void boringSslIsTheProviderWhereItLoadsAndTheJdkElsewhere() {
        if (shippedPlatform()) {
            assertThat(OpenSsl.isAvailable()).as("netty-tcnative's BoringSSL loads: %s", OpenSsl.unavailabilityCause())
                    .isTrue();
        }
        assertThat(TlsEngine.provider()).isEqualTo(OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK);
    }

    @Test
    void aClientContextWithPinAndClientCertificateIsOnThatProvider() throws Exception {
        TestCertificates.PemPair files = TestCertificates.selfSigned("peer").write(dir, "client");
        SslContext context = ClientTls.pinned(TestCertificates.selfSigned("hub").pin())
                .withClientCertificate(files.cert(), files.key()).context(URI.create("wss://127.0.0.1:1/"));
        assertThat(context).isInstanceOf(OpenSsl.isAvailable() ? OpenSslContext.class : io.netty.handler.ssl.JdkSslContext.class);
    }

    @Test
    void thePropertyKeepsTheJdkProvider() {
        String before = System.getProperty("synapsehub.tls");
        System.setProperty("synapsehub.tls", "jdk");
        try {
            assertThat(TlsEngine.provider()).isEqualTo(SslProvider.JDK);
        } finally {
            if (before == null) {
                System.clearProperty("synapsehub.tls");
            } else {
                System.setProperty("synapsehub.tls", before);
            }
        }
    }
}
