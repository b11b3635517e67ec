package dev.synapsehub.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** An operator command the hub refuses says why at once, with the documented exit code. */
class RefusedConnectionCliTest {
    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    @Test
    void aRefusedTokenIsToldAtOnceNotAsNoAnswer(@TempDir Path dir) throws Exception {
        Path token = dir.resolve("token.txt");
        Files.writeString(token, "the-right-token-0123456789abcdef\n");
        hub.start("--port", "0", "--token-file", token.toString());
        for (String[] args : new String[][] {
                {"who", "--url", hub.url(), "--token", "wrong", "--timeout", "60"},
                {"who", "--url", hub.url(), "--timeout", "60"},
                {"tail", "--url", hub.url(), "--token", "wrong", "--duration", "1", "--timeout", "60"}}) {
            long start = System.nanoTime();
            CliTest.Run run = CliTest.run(args);
            double seconds = (System.nanoTime() - start) / 1e9;
            assertThat(run.code()).as(String.join(" ", args) + ": " + run.err()).isEqualTo(ExitCodes.USAGE);
            assertThat(run.err()).as(String.join(" ", args))
                    .contains("synapse-hub: " + hub.url() + ": auth denied: ")
                    .contains("--token, --token-file or SYNAPSE_TOKEN").doesNotContain("no answer");
            assertThat(seconds).as("at once, not after the 60 s --timeout").isLessThan(30);
        }
        assertThat(CliTest.run("who", "--url", hub.url(), "--token-file", token.toString()).code())
                .isEqualTo(ExitCodes.OK);
    }

    @Test
    void aNameInUseIsToldWithTheFixNotAsNull() throws Exception {
        hub.start("--port", "0");
        try (dev.synapsehub.client.HubClient tail = dev.synapsehub.client.HubClient.connect(
                java.net.URI.create(hub.url()), java.time.Duration.ofSeconds(5))) {
            tail.register("operator/cli", null, java.time.Duration.ofSeconds(5)); // as a running `tail` holds it
            // an open hub welcomes at connect, before it binds the name: a reply shows the name bound
            tail.send(tail.frame("who_request"));
            tail.awaitType("who_snapshot", java.time.Duration.ofSeconds(5));
            for (String[] args : new String[][] {{"who", "--url", hub.url()},
                    {"claim", "Z1", "--path", "z", "--url", hub.url()},
                    {"tail", "--url", hub.url(), "--duration", "1"}}) {
                CliTest.Run run = CliTest.run(args);
                assertThat(run.code()).as(String.join(" ", args) + ": " + run.err()).isEqualTo(ExitCodes.USAGE);
                assertThat(run.err()).as(String.join(" ", args))
                        .contains(hub.url() + ": the hub closed the connection (4009 name conflict)")
                        .contains("pass a unique --name").doesNotContain("null");
            }
        }
        // the hub unbinds the name once it sees the close: retry until then (bounded)
        int code = -1;
        for (long deadline = System.nanoTime() + 10_000_000_000L; code != ExitCodes.OK && System.nanoTime() < deadline; ) {
            code = CliTest.run("who", "--url", hub.url()).code();
            if (code != ExitCodes.OK) {
                Thread.sleep(50);
            }
        }
        assertThat(code).as("once the name is free").isEqualTo(ExitCodes.OK);
    }

    @Test
    void aHubAtCapacityIsToldWithTheFixNotAsNull() throws Exception {
        hub.start("--port", "0", "--max-clients", "1");
        try (dev.synapsehub.client.HubClient holder = dev.synapsehub.client.HubClient.connect(
                java.net.URI.create(hub.url()), java.time.Duration.ofSeconds(5))) {
            holder.register("team/holder", null, java.time.Duration.ofSeconds(5));
            for (String[] args : new String[][] {{"who", "--url", hub.url()},
                    {"tail", "--url", hub.url(), "--duration", "1"}}) {
                CliTest.Run run = CliTest.run(args);
                assertThat(run.code()).as(String.join(" ", args) + ": " + run.err()).isEqualTo(ExitCodes.UNAVAILABLE);
                assertThat(run.err()).as(String.join(" ", args))
                        .contains(hub.url() + ": the hub closed the connection (4013 hub at capacity)")
                        .contains("--max-clients").doesNotContain("null");
            }
        }
    }

    @Test
    void tooManyConnectionsFromOneHostIsToldWithTheFix() throws Exception {
        hub.start("--port", "0", "--max-connections-per-host", "1");
        try (dev.synapsehub.client.HubClient holder = dev.synapsehub.client.HubClient.connect(
                java.net.URI.create(hub.url()), java.time.Duration.ofSeconds(5))) {
            holder.register("team/holder", null, java.time.Duration.ofSeconds(5));
            CliTest.Run run = CliTest.run("who", "--url", hub.url());
            assertThat(run.code()).as(run.err()).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(run.err()).contains("(4015 too many connections from host)")
                    .contains("--max-connections-per-host 0").doesNotContain("null");
        }
    }

    @Test
    void aPlainConnectionToATlsHubSuggestsWss(@TempDir Path dir) throws Exception {
        dev.synapsehub.client.tls.TestCertificates.PemPair files =
                dev.synapsehub.client.tls.TestCertificates.selfSigned("hub").write(dir, "server");
        hub.start("--port", "0", "--tls-certfile", files.cert().toString(), "--tls-keyfile", files.key().toString());
        String plain = hub.url(); // ws://, the hub serves wss://
        CliTest.Run run = CliTest.run("who", "--url", plain);
        assertThat(run.code()).as(run.err()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(run.err()).contains("try wss://").contains("--pin");
    }
}
