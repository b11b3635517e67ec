package dev.synapsehub.client.tls;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.OpenSslContext;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import io.netty.buffer.ByteBufAllocator;

import javax.net.ssl.SSLEngine;
import java.util.Arrays;

import java.net.URI;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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

    @Test
    void thePropertyIsReadCaseInsensitivelyAndAnUnknownValueIsRefused() {
        assertThat(TlsEngine.parse(null)).isEqualTo(TlsEngine.Choice.DEFAULT);
        assertThat(TlsEngine.parse("JDK")).isEqualTo(TlsEngine.Choice.JDK);
        assertThat(TlsEngine.parse("OpenSSL")).isEqualTo(TlsEngine.Choice.OPENSSL);
        assertThat(TlsEngine.parse("boringssl")).isEqualTo(TlsEngine.Choice.OPENSSL);
        assertThatThrownBy(() -> TlsEngine.parse("jdk8")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("synapsehub.tls=jdk8").hasMessageContaining("jdk, openssl or boringssl");
        String before = System.getProperty(TlsEngine.PROPERTY);
        System.setProperty(TlsEngine.PROPERTY, "Jdk");
        try {
            assertThat(TlsEngine.provider()).isEqualTo(SslProvider.JDK);
            assertThat(TlsEngine.describe()).contains("JDK");
            System.setProperty(TlsEngine.PROPERTY, "nss");
            assertThatThrownBy(TlsEngine::provider).isInstanceOf(IllegalArgumentException.class);
        } finally {
            restore(before);
        }
    }

    /** A client context on either engine enables only the policy's suites: no static RSA, no CBC. */
    @ParameterizedTest
    @ValueSource(strings = {"jdk", "openssl"})
    void aClientContextEnablesOnlyThePolicysSuites(String engine) throws Exception {
        if ("openssl".equals(engine)) {
            assumeTrue(OpenSsl.isAvailable(), "BoringSSL does not load here");
        }
        String before = System.getProperty(TlsEngine.PROPERTY);
        System.setProperty(TlsEngine.PROPERTY, engine);
        try {
            SslContext context = ClientTls.pinned(TestCertificates.selfSigned("hub").pin())
                    .context(URI.create("wss://127.0.0.1:1/"));
            SSLEngine e = context.newEngine(ByteBufAllocator.DEFAULT);
            try {
                assertThat(Arrays.asList(e.getEnabledCipherSuites())).isNotEmpty().allMatch(TlsEngine.CIPHERS::contains)
                        .noneMatch(c -> c.startsWith("TLS_RSA_") || c.contains("CBC"));
                // Netty's OpenSSL engine always lists the SSLv2Hello pseudo-protocol (a hello format, not SSLv2)
                assertThat(Arrays.stream(e.getEnabledProtocols()).filter(p -> !"SSLv2Hello".equals(p)))
                        .containsOnly("TLSv1.3", "TLSv1.2");
            } finally {
                io.netty.util.ReferenceCountUtil.release(e);
            }
        } finally {
            restore(before);
        }
    }

    /**
     * Netty keeps a PEM key in a key store built in memory per context; a PKCS#12 store (the JDK's
     * default type) derives a PBE key (10,000 PBKDF2 rounds) to store it and again to read it, a
     * cost every start paid three times for nothing. With a provider that refuses any PBE key
     * derivation first in line, a client context holding a key still builds on either engine, a
     * server context on BoringSSL, and no derivation is asked for. (Netty's JDK server context
     * ignores the store type and builds a PKCS#12 store whatever is set: a server with a client
     * CA, the one kind on the JDK's engine, still pays it once per start.)
     */
    @ParameterizedTest
    @ValueSource(strings = {"jdk", "openssl"})
    void contextsHoldingAKeyDeriveNoPasswordBasedKey(String engine) throws Exception {
        SslProvider provider = "jdk".equals(engine) ? SslProvider.JDK : SslProvider.OPENSSL;
        if (provider == SslProvider.OPENSSL) {
            assumeTrue(OpenSsl.isAvailable(), "BoringSSL does not load here");
        }
        TestCertificates.PemPair files = TestCertificates.selfSigned("hub").write(dir, "hub");
        int derivations = PasswordKeyDerivations.countedDuring(() -> {
            SslContext client = TlsEngine.apply(io.netty.handler.ssl.SslContextBuilder.forClient(), provider)
                    .keyManager(files.cert().toFile(), files.key().toFile()).build();
            assertThat(client.isClient()).isTrue();
            io.netty.util.ReferenceCountUtil.release(client);
            if (provider == SslProvider.OPENSSL) {
                SslContext server = TlsEngine.apply(io.netty.handler.ssl.SslContextBuilder.forServer(
                        files.cert().toFile(), files.key().toFile()), provider).build();
                assertThat(server.isServer()).isTrue();
                io.netty.util.ReferenceCountUtil.release(server);
            }
        });
        assertThat(derivations).isZero();
    }

    private static void restore(String before) {
        if (before == null) {
            System.clearProperty(TlsEngine.PROPERTY);
        } else {
            System.setProperty(TlsEngine.PROPERTY, before);
        }
    }
}
