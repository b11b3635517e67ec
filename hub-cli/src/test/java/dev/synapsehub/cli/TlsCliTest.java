package dev.synapsehub.cli;

import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code --tls-certfile/--tls-keyfile} on the hub and {@code --pin} on the operator commands. */
class TlsCliTest {
    private final LoopbackHub hub = new LoopbackHub();

    @TempDir
    Path dir;

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    @Test
    void aTlsHubServesPinnedOperatorCommandsOverWss() throws Exception {
        TestCertificates.Identity cert = TestCertificates.selfSigned("hub");
        TestCertificates.PemPair files = cert.write(dir, "server");
        HubDaemon daemon = hub.start("--port", "0", "--tls-certfile", files.cert().toString(),
                "--tls-keyfile", files.key().toString());
        String url = "wss://127.0.0.1:" + daemon.port();

        CliTest.Run granted = CliTest.run("claim", "T1", "--url", url, "--pin", cert.pin().text());
        assertThat(granted.code()).as(granted.err()).isEqualTo(ExitCodes.OK);
        assertThat(granted.out()).startsWith("granted T1");

        CliTest.Run wrongPin = CliTest.run("claim", "T2", "--url", url, "--pin",
                TestCertificates.selfSigned("other").pin().text());
        assertThat(wrongPin.code()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(wrongPin.err()).contains("pin mismatch");

        CliTest.Run plain = CliTest.run("claim", "T3", "--url", "ws://127.0.0.1:" + daemon.port(), "--timeout", "2");
        assertThat(plain.code()).isEqualTo(ExitCodes.UNAVAILABLE);
    }

    @Test
    void oneTlsFlagWithoutTheOtherIsRefusedAtStart() {
        CliTest.Run run = CliTest.run("--port", "0", "--tls-certfile", dir.resolve("server.pem").toString());
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("native WSS requires both --tls-certfile and --tls-keyfile");
    }

    @Test
    void anUnknownTlsEngineIsRefusedAtStart() {
        String before = System.getProperty("synapsehub.tls");
        System.setProperty("synapsehub.tls", "jdk8");
        try {
            // a half TLS setting too: were the engine not checked first, this would fail on the certfile
            // (and not hang serving)
            CliTest.Run run = CliTest.run("--port", "0", "--tls-certfile", dir.resolve("server.pem").toString());
            assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
            assertThat(run.err()).contains("-Dsynapsehub.tls=jdk8 is not a TLS engine: use jdk, openssl or boringssl");
        } finally {
            if (before == null) {
                System.clearProperty("synapsehub.tls");
            } else {
                System.setProperty("synapsehub.tls", before);
            }
        }
    }

    @Test
    void helpExplainsTheTlsFlagsAndThePin() {
        String help = CliTest.run("--help").out();
        assertThat(help).contains("--tls-certfile").contains("--tls-keyfile").contains("PKCS#8");
        assertThat(CliTest.run("claim", "--help").out()).contains("--pin");
    }
}
