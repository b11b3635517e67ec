package dev.synapsehub.net.tls;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.CertificatePin;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import dev.synapsehub.net.session.Session;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Native TLS on the hub port (contract F4) against real certificates made in the test: pins,
 * CA verification, optional client certificates, and plain ws:// staying the default.
 */
class NativeTlsTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private HubServer hub(TlsFiles tls) throws Exception {
        return hub(tls, HubConfig.builder().build().broadcastLinger());
    }

    private HubServer hub(TlsFiles tls, Duration broadcastLinger) throws Exception {
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        open.add(actor);
        HubServer server = new HubServer(HubConfig.builder().host("127.0.0.1").port(0).tls(tls)
                .broadcastLinger(broadcastLinger).build(), actor,
                Clock.system());
        server.start();
        open.add(server);
        return server;
    }

    private HubClient client(HubServer server, ClientTls tls) throws IOException {
        HubClient c = HubClient.connect(URI.create("wss://127.0.0.1:" + server.boundPort() + "/"), WAIT, tls);
        open.add(c);
        return c;
    }

    private TlsFiles serverFiles(TestCertificates.Identity server) throws IOException {
        TestCertificates.PemPair files = server.write(dir, "server");
        return new TlsFiles(files.cert(), files.key(), null);
    }

    @Test
    void aPinnedClientRegistersOverWssAndTheWelcomeArrives() throws Exception {
        TestCertificates.Identity cert = TestCertificates.selfSigned("hub");
        HubServer server = hub(serverFiles(cert));
        HubClient c = client(server, ClientTls.pinned(cert.pin()));
        ObjectNode welcome = c.awaitType("welcome", WAIT);
        assertThat(welcome.path("protocol_version").asInt()).isEqualTo(2);
        assertThat(server.config().scheme()).isEqualTo("wss");
    }

    @Test
    void aBroadcastReachesEveryOtherClientOverWss() throws Exception {
        // broadcast batches enter the pipeline at the WebSocket encoder: TLS must still encrypt them
        TestCertificates.Identity cert = TestCertificates.selfSigned("hub");
        HubServer server = hub(serverFiles(cert));
        HubClient sender = client(server, ClientTls.pinned(cert.pin()));
        HubClient receiver = client(server, ClientTls.pinned(cert.pin()));
        sender.register("p/sender", null, WAIT);
        receiver.register("p/receiver", null, WAIT);
        ObjectNode chat = sender.frame("p/sender", "chat");
        chat.put("target", "all").put("payload", "over tls");
        sender.send(chat);
        ObjectNode got = receiver.await(f -> "chat".equals(f.path("type").asText())
                && "over tls".equals(f.path("payload").asText()), WAIT);
        assertThat(got.path("sender").asText()).isEqualTo("p/sender");
    }

    @Test
    void everyClientGetsEveryBroadcastOnceAndInCommitOrderOverWssWhenBatchesShareAWrite() throws Exception {
        // A linger (and the pause after each pass): several batches go to a socket in one write,
        // which TLS's write queue may merge in place; a member's view of a batch must never
        // reach into the batch the other members share (LoopFanout.share).
        TestCertificates.Identity cert = TestCertificates.selfSigned("hub");
        HubServer server = hub(serverFiles(cert), Duration.ofMillis(20));
        HubClient sender = client(server, ClientTls.pinned(cert.pin()));
        sender.register("p/sender", null, WAIT);
        List<List<String>> seen = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            HubClient receiver = client(server, ClientTls.pinned(cert.pin()));
            receiver.register("p/receiver-" + i, null, WAIT);
            List<String> chats = java.util.Collections.synchronizedList(new ArrayList<>());
            receiver.onFrame(f -> {
                if ("chat".equals(f.path("type").asText())) {
                    chats.add(f.path("payload").asText());
                }
            });
            seen.add(chats);
        }
        int n = 400;
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ObjectNode chat = sender.frame("p/sender", "chat");
            String payload = "m-" + i + "-" + "x".repeat(i % 97); // sizes vary: merged writes do not line up
            chat.put("target", "all").put("payload", payload);
            sender.sendAsync(chat);
            sent.add(payload);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        for (List<String> chats : seen) {
            while (chats.size() < n && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        }
        Thread.sleep(100); // a duplicate would come within a pass or two
        for (List<String> chats : seen) {
            synchronized (chats) {
                assertThat(chats).as("every chat once, in the order committed").containsExactlyElementsOf(sent);
            }
        }
    }

    @Test
    void aWrongPinFailsTheHandshakeAndNothingIsSent() throws Exception {
        TestCertificates.Identity cert = TestCertificates.selfSigned("hub");
        HubServer server = hub(serverFiles(cert));
        CertificatePin other = TestCertificates.selfSigned("someone-else").pin();
        assertThatThrownBy(() -> client(server, ClientTls.pinned(other)))
                .isInstanceOf(IOException.class).hasStackTraceContaining("pin mismatch");
        assertThat(server.services().registry().connectedClients()).isZero();
    }

    /**
     * On whichever TLS engine is in effect (BoringSSL here, the JDK's elsewhere): the refusal fails
     * the connect itself, not its bound, and the error's own message (what the CLI prints and a
     * peer's status shows) names the pin mismatch. The bound is long so that waiting it out would
     * show as a timeout in the cause chain rather than as a slow pass.
     */
    @Test
    void aWrongPinIsRefusedAtOnceAndTheMessageSaysPinMismatch() throws Exception {
        HubServer server = hub(serverFiles(TestCertificates.selfSigned("hub")));
        ClientTls wrong = ClientTls.pinned(TestCertificates.selfSigned("someone-else").pin());
        URI uri = URI.create("wss://127.0.0.1:" + server.boundPort() + "/");
        Throwable refused = org.assertj.core.api.Assertions.catchThrowable(
                () -> open.add(HubClient.connect(uri, Duration.ofSeconds(60), wrong)));
        assertThat(refused).isInstanceOf(IOException.class).hasMessageContaining("pin mismatch");
        for (Throwable c = refused; c != null; c = c.getCause()) {
            assertThat(c).as("refused by the handshake, not by the connect bound")
                    .isNotInstanceOf(java.util.concurrent.TimeoutException.class);
        }
    }

    @Test
    void withoutAPinASelfSignedHubIsRefusedByCaVerification() throws Exception {
        HubServer server = hub(serverFiles(TestCertificates.selfSigned("hub")));
        assertThatThrownBy(() -> client(server, ClientTls.NONE)).isInstanceOf(IOException.class)
                .hasStackTraceContaining("PKIX");
    }

    @Test
    void thePinMatchesTheOpensslDefinitionOverTheWholeDerCertificate() throws Exception {
        TestCertificates.Identity cert = TestCertificates.selfSigned("hub");
        String hex = java.util.HexFormat.of().formatHex(
                java.security.MessageDigest.getInstance("SHA-256").digest(cert.certificate().getEncoded()));
        assertThat(cert.pin().text()).isEqualTo("sha256:" + hex);
        assertThat(CertificatePin.parse("SHA256:" + hex.toUpperCase()).text()).isEqualTo("sha256:" + hex);
        assertThat(CertificatePin.isCanonical("sha256:" + hex.toUpperCase())).isFalse();
        assertThatThrownBy(() -> CertificatePin.parse("md5:abc")).hasMessageContaining("sha256:<64 hex digits>");
    }

    @Test
    void aRotatedServerCertificateIsServedToNewConnectionsAndAnUnloadableOneKeepsThePreviousPair() throws Exception {
        TestCertificates.Identity first = TestCertificates.selfSigned("hub");
        TlsFiles files = serverFiles(first);
        HubServer server = hub(files);
        HubClient warm = client(server, ClientTls.pinned(first.pin()));
        warm.awaitType("welcome", WAIT);

        // rotate: the new pair is written beside the old one and moved into place, as an operator would
        TestCertificates.Identity second = TestCertificates.selfSigned("hub");
        install(second.write(Files.createDirectories(dir.resolve("stage-1")), "server"), files);
        // the watcher looks once a second (and may catch the two moves half done, then look again)
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        HubClient rotated = null;
        while (rotated == null && System.nanoTime() < deadline) {
            try {
                rotated = client(server, ClientTls.pinned(second.pin()));
            } catch (IOException notYet) {
                Thread.sleep(100);
            }
        }
        assertThat(rotated).as("a new connection is served the rotated certificate").isNotNull();
        rotated.awaitType("welcome", WAIT);
        assertThat(server.services().metrics().tlsCertificateReloads.get()).isPositive();
        assertThatThrownBy(() -> client(server, ClientTls.pinned(first.pin()))).as("the old pair is no longer served")
                .hasStackTraceContaining("pin mismatch");
        assertThat(warm.isOpen()).as("an open connection keeps its session").isTrue();

        // a key that does not load: counted, and new connections keep the last pair that loaded
        Path stage = Files.createDirectories(dir.resolve("stage-2"));
        TestCertificates.writePrivate(stage.resolve("server.key"),
                "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n");
        Files.move(stage.resolve("server.key"), files.keyFile(), java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (server.services().metrics().tlsCertificateReloadFailures.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(server.services().metrics().tlsCertificateReloadFailures.get()).isEqualTo(1);
        client(server, ClientTls.pinned(second.pin())).awaitType("welcome", WAIT);
        assertThat(server.services().metrics().tlsCertificateReloadFailures.get()).as("one bad edit is counted once")
                .isEqualTo(1);
    }

    private static void install(TestCertificates.PemPair staged, TlsFiles live) throws IOException {
        Files.move(staged.cert(), live.certFile(), java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        Files.move(staged.key(), live.keyFile(), java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    @Test
    void aPinOnAPlainWsUriIsRefusedAtConnectTime() {
        CertificatePin pin = TestCertificates.selfSigned("x").pin();
        assertThatThrownBy(() -> HubClient.connect(URI.create("ws://127.0.0.1:1/"), WAIT, ClientTls.pinned(pin)))
                .hasMessageContaining("requires a wss:// peer URI");
    }

    @Test
    void plainWsToATlsPortFailsAndIsCounted() throws Exception {
        HubServer server = hub(serverFiles(TestCertificates.selfSigned("hub")));
        assertThatThrownBy(() -> HubClient.connect(URI.create("ws://127.0.0.1:" + server.boundPort() + "/"),
                Duration.ofSeconds(2))).isInstanceOf(IOException.class);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (server.services().metrics().tlsHandshakeFailures.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(server.services().metrics().tlsHandshakeFailures.get()).isEqualTo(1);
    }

    @Test
    void withAClientCaACertifiedClientIsSeenAndAnAgentWithoutOneStillConnects() throws Exception {
        TestCertificates.Identity serverCert = TestCertificates.selfSigned("hub");
        TestCertificates.Authority ca = TestCertificates.authority("fed-client-ca");
        Path caFile = ca.writeCertificate(dir, "ca");
        HubServer server = hub(serverFiles(serverCert).withClientCa(caFile));

        TestCertificates.Identity hubA = ca.issue("hub-a");
        TestCertificates.PemPair aFiles = hubA.write(dir, "client");
        HubClient peer = client(server, ClientTls.pinned(serverCert.pin()).withClientCertificate(aFiles.cert(), aFiles.key()));
        peer.awaitType("welcome", WAIT);
        bind(peer, "hub-a");
        X509Certificate seen = awaitPeerCertificate(server, "hub-a");
        assertThat(CertificatePin.of(seen)).isEqualTo(hubA.pin());

        HubClient agent = client(server, ClientTls.pinned(serverCert.pin()));
        agent.awaitType("welcome", WAIT); // no certificate: not refused at the TLS layer (F9.1)
        bind(agent, "proj/agent");
        waitBound(server, "proj/agent");
        assertThat(server.services().registry().session("proj/agent").peerCertificate()).isNull();
    }

    /** Material handed to a setting without a client certificate of its own is not presented (contract: only to pinned peers). */
    @Test
    void keyMaterialIsPresentedOnlyByASettingWithAClientCertificateAndAPin() throws Exception {
        TestCertificates.Identity serverCert = TestCertificates.selfSigned("hub");
        TestCertificates.Authority ca = TestCertificates.authority("fed-client-ca");
        Path caFile = ca.writeCertificate(dir, "ca");
        HubServer server = hub(serverFiles(serverCert).withClientCa(caFile));
        TestCertificates.PemPair aFiles = ca.issue("hub-a").write(dir, "client");
        dev.synapsehub.client.tls.ClientKeyMaterial material = new dev.synapsehub.client.tls.ClientKeyMaterial(
                Files.readAllBytes(aFiles.cert()), Files.readAllBytes(aFiles.key()));
        URI uri = URI.create("wss://127.0.0.1:" + server.boundPort() + "/");

        HubClient bare = HubClient.connect(uri, WAIT, ClientTls.pinned(serverCert.pin()), false, material);
        open.add(bare);
        bare.awaitType("welcome", WAIT);
        bind(bare, "proj/bare");
        assertThat(awaitPeerCertificate(server, "proj/bare")).as("pinned, but no client certificate of its own")
                .isNull();

        HubClient peer = HubClient.connect(uri, WAIT, ClientTls.pinned(serverCert.pin())
                .withClientCertificate(aFiles.cert(), aFiles.key()), false, material);
        open.add(peer);
        peer.awaitType("welcome", WAIT);
        bind(peer, "hub-a");
        assertThat(awaitPeerCertificate(server, "hub-a")).as("a pin and a client certificate: presented").isNotNull();
    }

    @Test
    void aClientCertificateFromAnotherCaIsNeverTakenAsThePeersIdentity() throws Exception {
        TestCertificates.Identity serverCert = TestCertificates.selfSigned("hub");
        Path caFile = TestCertificates.authority("fed-client-ca").writeCertificate(dir, "ca");
        HubServer server = hub(serverFiles(serverCert).withClientCa(caFile));
        TestCertificates.Identity stranger = TestCertificates.authority("other-ca").issue("hub-x");
        TestCertificates.PemPair files = stranger.write(dir, "stranger");
        // A JDK client offers only certificates from the CAs the server names, so it offers none here
        HubClient c = client(server, ClientTls.pinned(serverCert.pin()).withClientCertificate(files.cert(), files.key()));
        c.awaitType("welcome", WAIT);
        bind(c, "hub-x");
        waitBound(server, "hub-x");
        assertThat(server.services().registry().session("hub-x").peerCertificate()).isNull();

        // A client that presents it anyway fails the handshake (F4)
        javax.net.ssl.SSLContext forced = javax.net.ssl.SSLContext.getInstance("TLSv1.3");
        forced.init(new javax.net.ssl.KeyManager[] {new AlwaysPresent(stranger)},
                new javax.net.ssl.TrustManager[] {TestCertificates.trustAll()}, null);
        try (javax.net.ssl.SSLSocket socket = (javax.net.ssl.SSLSocket) forced.getSocketFactory()
                .createSocket("127.0.0.1", server.boundPort())) {
            socket.setSoTimeout(5000);
            assertThatThrownBy(() -> {
                socket.startHandshake();
                socket.getOutputStream().write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes());
                socket.getOutputStream().flush();
                if (socket.getInputStream().read() < 0) {
                    throw new IOException("closed");
                }
            }).isInstanceOf(IOException.class);
        }
    }

    /** A key manager that presents its one certificate whatever CAs the server names. */
    private static final class AlwaysPresent extends javax.net.ssl.X509ExtendedKeyManager {
        private final TestCertificates.Identity id;

        AlwaysPresent(TestCertificates.Identity id) {
            this.id = id;
        }

        @Override
        public String[] getClientAliases(String keyType, java.security.Principal[] issuers) {
            return new String[] {"me"};
        }

        @Override
        public String chooseClientAlias(String[] keyType, java.security.Principal[] issuers, java.net.Socket socket) {
            return "me";
        }

        @Override
        public String[] getServerAliases(String keyType, java.security.Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseServerAlias(String keyType, java.security.Principal[] issuers, java.net.Socket socket) {
            return null;
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return new X509Certificate[] {id.certificate()};
        }

        @Override
        public java.security.PrivateKey getPrivateKey(String alias) {
            return id.key();
        }
    }

    /** Binds {@code name} on an open hub, whose welcome came at connect. */
    private static void bind(HubClient c, String name) {
        ObjectNode hb = c.frame(name, "heartbeat");
        c.send(hb);
    }

    private static X509Certificate awaitPeerCertificate(HubServer server, String name) throws InterruptedException {
        waitBound(server, name);
        return server.services().registry().session(name).peerCertificate();
    }

    private static void waitBound(HubServer server, String name) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (server.services().registry().session(name) == null) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " never bound");
            }
            Thread.sleep(2);
        }
    }
}
