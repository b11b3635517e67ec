package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Settings are refused (exit 2, a message naming the flag) before a start creates or opens anything. */
class StartRefusalsCliTest {
    @TempDir
    Path dir;

    @Test
    void aBadStateBoundIsRefusedBeforeTheJournalIsCreated() {
        Path db = dir.resolve("new.db");
        CliTest.Run run = CliTest.run("--port", "0", "--db", db.toString(), "--max-history", "0");
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("--max-history must be at least 1");
        assertThat(db).doesNotExist();
        assertThat(Path.of(db + "-lock")).doesNotExist();
        CliTest.Run snapshots = CliTest.run("--port", "0", "--db", db.toString(), "--snapshots-kept", "0");
        assertThat(snapshots.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(db).doesNotExist();
    }

    @Test
    void anEmptyDbIsAUsageErrorThatCreatesNothing() throws Exception {
        for (String empty : new String[] {"", " "}) {
            CliTest.Run run = CliTest.run("--port", "0", "--db", empty);
            assertThat(run.code()).as("'" + empty + "'").isEqualTo(ExitCodes.USAGE);
            assertThat(run.err()).contains("--db must name a journal file; it is empty");
        }
        Path file = Files.writeString(dir.resolve("hub.properties"), "db=\n");
        CliTest.Run fromFile = CliTest.run("--config", file.toString(), "--port", "0");
        assertThat(fromFile.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(fromFile.err()).contains("--db must name a journal file; it is empty");
        assertThat(Path.of(" ")).doesNotExist();
        assertThat(Path.of(" -lock")).doesNotExist();
    }

    @Test
    void aRefusalNamesTheOptionGiven() {
        String[][] cases = {{"--max-progress-per-task", "0", "--max-progress-per-task must be at least 1"},
                {"--max-progress-per-author", "0", "--max-progress-per-author must be at least 1"},
                {"--lease-offline-ttl", "Infinity", "--lease-offline-ttl must be a finite number >= 0"}};
        for (String[] c : cases) {
            CliTest.Run run = CliTest.run("--port", "0", c[0], c[1]);
            assertThat(run.code()).as(c[0]).isEqualTo(ExitCodes.USAGE);
            assertThat(run.err()).as(c[0]).contains(c[2]);
        }
    }

    @Test
    void aMissingConfigFileSaysSo() {
        // read as the command line is built, before a command runs: Main reports it as a usage error
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> CliTest.run("--config",
                        dir.resolve("absent.properties").toString(), "--port", "0"))
                .hasMessageEndingWith("absent.properties: no such file or directory");
    }

    @Test
    void aNegativeOrInfiniteHostRateAndANoughtBurstAreRefused() {
        for (String[] bad : new String[][] {{"--host-rate", "-1"}, {"--host-rate", "Infinity"},
                {"--host-rate", "NaN"}, {"--host-burst", "0"}}) {
            CliTest.Run run = CliTest.run("--port", "0", bad[0], bad[1]);
            assertThat(run.code()).as(String.join(" ", bad)).isEqualTo(ExitCodes.USAGE);
            assertThat(run.err()).contains(bad[0] + " must be");
        }
    }

    @Test
    void anUnreadableCertificateIsRefusedBeforeTheJournalIsCreated() throws Exception {
        Path db = dir.resolve("tls.db");
        Path bad = Files.writeString(dir.resolve("bad.pem"), "not a certificate\n");
        CliTest.Run run = CliTest.run("--port", "0", "--db", db.toString(), "--tls-certfile", bad.toString(),
                "--tls-keyfile", bad.toString());
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("--tls-certfile").contains(bad.toString());
        assertThat(db).doesNotExist();
    }

    @Test
    void aFrameBoundPastOneGibibyteIsAUsageError() {
        CliTest.Run run = CliTest.run("--port", "0", "--max-msg-kb", "3000000");
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("--max-msg-kb must be within 1..1048576");
    }

    @Test
    void operatorCommandOptionsThatCannotWorkAreUsageErrorsNotAnUnreachableHub() {
        String url = "ws://127.0.0.1:9"; // nothing is reached: each is refused before connecting
        CliTest.Run tokenFile = CliTest.run("state", "--url", url, "--token-file", dir.resolve("absent").toString());
        assertThat(tokenFile.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(tokenFile.err()).contains("--token-file").contains("cannot read it");
        CliTest.Run pin = CliTest.run("state", "--url", url, "--pin", "sha256:zz");
        assertThat(pin.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(pin.err()).contains("--pin");
        for (String timeout : new String[] {"NaN", "-5", "0", "Infinity"}) {
            CliTest.Run run = CliTest.run("state", "--url", url, "--timeout", timeout);
            assertThat(run.code()).as(timeout).isEqualTo(ExitCodes.USAGE);
            assertThat(run.err()).contains("--timeout must be a positive number");
        }
        CliTest.Run watch = CliTest.run("tail", "--url", url, "--timeout", "NaN");
        assertThat(watch.code()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void anUnknownLogLevelIsRefusedRatherThanTakenAsDebug() {
        assertThat(Main.run(new String[] {"--log-level", "warning", "--version"})).isEqualTo(ExitCodes.USAGE);
        assertThat(Main.run(new String[] {"--log-level=verbose", "--version"})).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void aHostNameThatStartsWith127IsNotLoopback() {
        CliTest.Run run = CliTest.run("--host", "127.example.com", "--port", "0");
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("refusing to bind 127.example.com without a connect token");
        assertThat(ServeOptions.isLoopbackV4Literal("127.0.0.1")).isTrue();
        assertThat(ServeOptions.isLoopbackV4Literal("127.1.2.255")).isTrue();
        for (String notLoopback : new String[] {"127.example.com", "127.0.0.256", "127.0.0", "127.0.0.1.", "1127.0.0.1"}) {
            assertThat(ServeOptions.isLoopbackV4Literal(notLoopback)).as(notLoopback).isFalse();
        }
    }
}
