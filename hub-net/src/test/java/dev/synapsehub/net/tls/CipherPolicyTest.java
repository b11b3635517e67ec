package dev.synapsehub.net.tls;

import dev.synapsehub.client.tls.PermissiveTlsServer;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.client.tls.TlsEngine;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import io.netty.handler.ssl.OpenSsl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The hub's wss:// port refuses the suites TlsEngine.CIPHERS leaves out (static RSA: no forward
 * secrecy; CBC with SHA-1) on both engines: BoringSSL does not read the JVM's java.security TLS
 * policy, so the list is set explicitly. The server certificate is RSA so the static-RSA suites
 * would be negotiable if enabled. Each refusal first shows the client really offers the refused
 * suites (a permissive JDK server agrees on one with it), so the test cannot pass on a JDK that
 * keeps the client from offering them.
 */
class CipherPolicyTest {
    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();
    private final String before = System.getProperty(TlsEngine.PROPERTY);

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        if (before == null) {
            System.clearProperty(TlsEngine.PROPERTY);
        } else {
            System.setProperty(TlsEngine.PROPERTY, before);
        }
    }

    private int hubOn(String engine) throws Exception {
        if ("openssl".equals(engine)) {
            assumeTrue(OpenSsl.isAvailable(), "BoringSSL does not load here");
        }
        System.setProperty(TlsEngine.PROPERTY, engine);
        TestCertificates.PemPair files = TestCertificates.selfSignedRsa("hub").write(dir, "server");
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        open.add(actor);
        HubServer server = new HubServer(HubConfig.builder().host("127.0.0.1").port(0)
                .tls(new TlsFiles(files.cert(), files.key(), null)).build(), actor, Clock.system());
        server.start();
        open.add(server);
        return server.boundPort();
    }

    /** A TLS 1.2 handshake from a JDK client offering only {@code suites} (or its defaults when empty). */
    private static String handshake(int port, String... suites) throws Exception {
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, new TrustManager[] {TestCertificates.trustAll()}, new SecureRandom());
        try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port)) {
            s.setSoTimeout(5_000);
            if (suites.length > 0) {
                s.setEnabledProtocols(new String[] {"TLSv1.2"});
                s.setEnabledCipherSuites(suites);
                assertThat(s.getEnabledCipherSuites()).as("the client offers exactly the suites given")
                        .containsExactly(suites);
            }
            s.startHandshake();
            return s.getSession().getCipherSuite();
        }
    }

    /**
     * The same client against a one-shot loopback JDK server that enables {@code suites} (RSA
     * certificate, TLS 1.2): it must agree on one of them. A JDK whose own policy
     * ({@code jdk.tls.disabledAlgorithms}) kept the client from offering them fails here, so the
     * refusals below cannot pass only because nothing refused was ever offered.
     */
    private static String offeredForReal(String... suites) throws Exception {
        return PermissiveTlsServer.agreedWith(TestCertificates.selfSignedRsa("permissive"), List.of(suites),
                port -> handshake(port, suites));
    }

    @ParameterizedTest
    @ValueSource(strings = {"jdk", "openssl"})
    void aClientOfferingOnlyStaticRsaIsRefused(String engine) throws Exception {
        String[] staticRsa = {"TLS_RSA_WITH_AES_128_GCM_SHA256", "TLS_RSA_WITH_AES_128_CBC_SHA"};
        // JDK 24+ ships java.security with TLS_RSA_* disabled: such a JDK's client cannot offer them at all
        String disabled = String.valueOf(java.security.Security.getProperty("jdk.tls.disabledAlgorithms"));
        assumeTrue(!disabled.contains("TLS_RSA_*"),
                "this JDK's jdk.tls.disabledAlgorithms disables TLS_RSA_*, so its client cannot offer static RSA");
        assertThat(offeredForReal(staticRsa)).isIn((Object[]) staticRsa);
        int port = hubOn(engine);
        assertThatThrownBy(() -> handshake(port, staticRsa)).isInstanceOf(SSLException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"jdk", "openssl"})
    void aClientOfferingOnlyCbcSha1IsRefused(String engine) throws Exception {
        String[] cbc = {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA"};
        assertThat(offeredForReal(cbc)).isIn((Object[]) cbc);
        int port = hubOn(engine);
        assertThatThrownBy(() -> handshake(port, cbc)).isInstanceOf(SSLException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"jdk", "openssl"})
    void aNormalClientConnectsOnAListedSuite(String engine) throws Exception {
        int port = hubOn(engine);
        assertThat(handshake(port)).isIn(TlsEngine.CIPHERS);
        assertThat(handshake(port, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"))
                .isEqualTo("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
    }
}
