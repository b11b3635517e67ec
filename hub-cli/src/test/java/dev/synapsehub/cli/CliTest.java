package dev.synapsehub.cli;

import dev.synapsehub.client.HubClient;
import dev.synapsehub.net.HubConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The synapse-hub command end to end: a real hub on a loopback port, real subcommands against it. */
class CliTest {
    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    /** Output and exit code of one command line. */
    record Run(int code, String out, String err) {
    }

    static Run run(String... args) {
        CommandLine cl = SynapseHubCommand.commandLine(args);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        cl.setParameterExceptionHandler((e, a) -> {
            e.getCommandLine().getErr().println("synapse-hub: " + e.getMessage());
            return ExitCodes.USAGE;
        });
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    /**
     * The hub command with ARGS parsed, built as a start builds it: the --config file read, its keys
     * checked (an unknown one throws) and given as defaults.
     */
    static SynapseHubCommand parsed(String... args) {
        CommandLine cl = SynapseHubCommand.commandLine(args);
        cl.parseArgs(args);
        return cl.getCommand();
    }

    @Test
    void helpAndVersionExitZeroAndUnknownOptionsAreUsageErrors() {
        Run help = run("--help");
        assertThat(help.code()).isEqualTo(ExitCodes.OK);
        assertThat(help.out()).contains("--db=FILE").contains("Exit codes");
        assertThat(run("--version").out()).contains("wire protocol 2");
        assertThat(run("--no-such-flag").code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run("claim", "--help").out()).contains("TASK");
    }

    @Test
    void claimStateReleaseAndHandoffAgainstARunningHub() throws Exception {
        hub.start("--port", "0");
        Run granted = run("claim", "T1", "--url", hub.url(), "--worktree", "wt", "--path", "src", "--ttl", "120");
        assertThat(granted.code()).as(granted.err()).isEqualTo(ExitCodes.OK);
        assertThat(granted.out()).startsWith("granted T1 to operator/cli: epoch 1")
                .containsPattern("lease until 20\\d\\d-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z");

        Run refused = run("claim", "T1", "--url", hub.url(), "--name", "someone/else");
        assertThat(refused.code()).isEqualTo(ExitCodes.REFUSED);
        assertThat(refused.out()).contains("LEASE_LIVE");

        Run state = run("state", "--url", hub.url());
        assertThat(state.code()).isEqualTo(ExitCodes.OK);
        assertThat(state.out()).contains("1 live claim(s)").contains("T1").contains("operator/cli");

        Run json = run("state", "--url", hub.url(), "--json");
        assertThat(json.out()).contains("\"type\":\"state_snapshot\"");

        // The recipient must be online: nobody else is connected, so the handoff is refused.
        Run handoff = run("handoff", "T1", "--to", "ghost/agent", "--url", hub.url());
        assertThat(handoff.code()).isEqualTo(ExitCodes.REFUSED);

        Run release = run("release", "T1", "--url", hub.url(), "--epoch", "99");
        assertThat(release.code()).isEqualTo(ExitCodes.REFUSED);
        assertThat(run("release", "T1", "--url", hub.url()).code()).isEqualTo(ExitCodes.OK);
        assertThat(run("state", "--url", hub.url()).out()).contains("0 live claim(s)");

        Run who = run("who", "--url", hub.url());
        assertThat(who.code()).isEqualTo(ExitCodes.OK);
        // the only agent online is the command itself, which an operator is not asking about
        assertThat(who.out()).startsWith("0 agent(s) online, 0 connection(s), not counting this command's own")
                .doesNotContain("operator/cli");
    }

    @Test
    void whoListsTheOtherAgentsAndNotItself() throws Exception {
        hub.start("--port", "0");
        Duration wait = Duration.ofSeconds(10);
        try (HubClient agent = HubClient.connect(URI.create(hub.url()), wait)) {
            agent.register("team/builder", null, wait);
            // an open hub welcomes at connect, before it binds the name: a reply shows the name bound
            agent.send(agent.frame("who_request"));
            agent.awaitType("who_snapshot", wait);
            Run who = run("who", "--url", hub.url(), "--name", "ops/looking");
            assertThat(who.code()).as(who.err()).isEqualTo(ExitCodes.OK);
            assertThat(who.out()).startsWith("1 agent(s) online, 1 connection(s), not counting this command's own")
                    .contains("  team/builder").doesNotContain("ops/looking");
            // --json stays the hub's reply as it is: the command's own name is in it
            assertThat(run("who", "--url", hub.url(), "--name", "ops/json", "--json").out()).contains("ops/json");
        }
    }

    @Test
    void anUnreachableHubIsExitCodeThree() {
        Run who = run("who", "--url", "ws://127.0.0.1:1", "--timeout", "1");
        assertThat(who.code()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(who.err()).contains("cannot reach");
    }

    @Test
    void durableHubKeepsItsClaimsAndTheJournalToolsReadThem(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        hub.start("--port", "0", "--db", db.toString());
        assertThat(run("claim", "T1", "--url", hub.url(), "--worktree", "a").code()).isEqualTo(ExitCodes.OK);
        assertThat(run("claim", "T2", "--url", hub.url(), "--worktree", "b").code()).isEqualTo(ExitCodes.OK);
        assertThat(run("release", "T2", "--url", hub.url()).code()).isEqualTo(ExitCodes.OK);
        hub.close();

        Run inspect = run("journal", "inspect", "--db", db.toString());
        assertThat(inspect.code()).as(inspect.err()).isEqualTo(ExitCodes.OK);
        assertThat(inspect.out()).contains("live claims    1 (epoch counter 2)").contains("release");
        Run verify = run("journal", "verify", "--db", db.toString());
        assertThat(verify.code()).isEqualTo(ExitCodes.OK);
        assertThat(verify.out()).startsWith("ok: 1 snapshot(s) verified (newest #1 at seq 3 plus 0 rows);")
                .contains("3 rows replayed cleanly, the same state; 1 live claims, last seq 3");

        hub.start("--port", "0", "--db", db.toString());
        Run state = run("state", "--url", hub.url());
        assertThat(state.out()).contains("1 live claim(s)").contains("T1").doesNotContain("T2");
    }

    @Test
    void journalToolsRefuseForeignAndMissingFiles(@TempDir Path dir) throws Exception {
        Path foreign = dir.resolve("notes.txt");
        Files.writeString(foreign, "not a journal");
        Run verify = run("journal", "verify", "--db", foreign.toString());
        assertThat(verify.code()).isEqualTo(ExitCodes.DATA_ERROR);
        assertThat(verify.err()).contains("not an SQLite database");
        assertThat(Files.readString(foreign)).isEqualTo("not a journal");
        assertThat(run("journal", "inspect", "--db", dir.resolve("missing.db").toString()).code())
                .isEqualTo(ExitCodes.DATA_ERROR);
        assertThat(Files.exists(dir.resolve("missing.db"))).isFalse();
    }

    @Test
    void aConfigFileSuppliesDefaultsAndTheCommandLineWins(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("hub.properties");
        Files.writeString(config, "port=0\nmax-claims-per-agent=7\nhub-id=syn-fromfile\n");
        SynapseHubCommand command = parsed("--config", config.toString(), "--hub-id", "syn-cli");
        assertThat(command.serve.registryLimits().maxClaimsPerPrincipal()).isEqualTo(7);
        assertThat(command.serve.hubConfig().hubId()).isEqualTo("syn-cli");
        assertThat(command.serve.hubConfig().port()).isZero();
    }

    @Test
    void broadcastLingerTransportAndBacklogLimitAreValidatedAndReachTheConfig() {
        Run linger = run("--port", "0", "--broadcast-linger-ms", "1001");
        assertThat(linger.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(linger.err()).contains("--broadcast-linger-ms must be within 0..1000");
        Run transport = run("--port", "0", "--transport", "epoll");
        assertThat(transport.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(transport.err()).contains("--transport must be auto or nio");
        Run backlog = run("--port", "0", "--max-fanout-backlog-mb", "0");
        assertThat(backlog.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(backlog.err()).contains("--max-fanout-backlog-mb must be at least 1");
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs("--broadcast-linger-ms", "0", "--transport", "nio");
        assertThat(command.serve.hubConfig().broadcastLinger()).isZero();
        assertThat(command.serve.hubConfig().nativeTransport()).isFalse();
        SynapseHubCommand defaults = new SynapseHubCommand();
        new CommandLine(defaults).parseArgs();
        assertThat(defaults.serve.hubConfig().broadcastLinger()).hasMillis(5);
        assertThat(defaults.serve.hubConfig().nativeTransport()).isTrue();
        assertThat(defaults.serve.hubConfig().maxFanoutBacklogBytes()).isEqualTo(64L * 1024 * 1024);
    }

    @Test
    void offLoopbackWithoutATokenIsRefusedAtStart() {
        Run run = run("--host", "0.0.0.0", "--port", "0");
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("without a connect token");
    }

    @Test
    void offLoopbackAlsoNeedsTlsAndWithMetricsAMetricsToken(@TempDir Path dir) throws Exception {
        Path token = dir.resolve("token");
        Files.writeString(token, "agents-token\n");
        Path metricsToken = dir.resolve("metrics-token");
        Files.writeString(metricsToken, "scrape-token\n");
        dev.synapsehub.client.tls.TestCertificates.PemPair tls =
                dev.synapsehub.client.tls.TestCertificates.selfSigned("hub").write(dir, "server");
        String[] offLoopback = {"--host", "0.0.0.0", "--port", "0", "--token-file", token.toString()};

        Run noTls = run(offLoopback);
        assertThat(noTls.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(noTls.err()).contains("refusing to bind 0.0.0.0 without TLS").contains("--tls-certfile");

        String[] withTls = concat(offLoopback, "--tls-certfile", tls.cert().toString(), "--tls-keyfile", tls.key().toString());
        Run noMetricsToken = run(concat(withTls, "--metrics"));
        assertThat(noMetricsToken.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(noMetricsToken.err()).contains("refusing to serve --metrics on 0.0.0.0 without a metrics token")
                .contains("--metrics-token-file");

        // the complete set validates (not started: tests bind loopback only), as does the explicit opt-out
        HubConfig complete = parsed(concat(withTls, "--metrics", "--metrics-token-file", metricsToken.toString()))
                .serve.hubConfig();
        assertThat(complete.metricsAuth().secured()).isTrue();
        assertThat(complete.metricsAuth().admits("Bearer scrape-token", java.util.Map.of())).isTrue();
        assertThat(complete.metricsAuth().toString()).doesNotContain("scrape-token");
        ServeOptions insecure = parsed("--host", "0.0.0.0", "--port", "0", "--metrics", "--insecure-off-loopback").serve;
        assertThat(insecure.hubConfig().metricsAuth().secured()).isFalse();
        assertThat(insecure.waivedOffLoopback(insecure.hubConfig())).as("each waived requirement is warned of")
                .containsExactly("a connect token", "TLS", "a metrics token");
        ServeOptions completeOptions = parsed(concat(withTls, "--metrics", "--metrics-token-file", metricsToken.toString(),
                "--insecure-off-loopback")).serve;
        assertThat(completeOptions.waivedOffLoopback(completeOptions.hubConfig())).isEmpty();
        assertThat(parsed(withTls).serve.hubConfig().tls()).isNotNull();
    }

    /** A2.5: pins survive restarts; a hub that pins in memory says at start that they will not. */
    @Test
    void pinningWithoutADurableStoreIsWarnedOfAtStart(@TempDir Path dir) throws Exception {
        ServeOptions memory = parsed("--port", "0").serve;
        assertThat(memory.volatilePinsWarning(memory.hubConfig())).contains("in memory only").contains("--db FILE")
                .contains("--no-identity-pinning").contains("--identity-pins");
        ServeOptions journaled = parsed("--port", "0", "--db", dir.resolve("hub.db").toString()).serve;
        assertThat(journaled.volatilePinsWarning(journaled.hubConfig())).isNull();
        ServeOptions off = parsed("--port", "0", "--no-identity-pinning").serve;
        assertThat(off.volatilePinsWarning(off.hubConfig())).isNull();
    }

    private static String warning(ServeOptions serve) {
        return serve.emptyTokenWarning(serve.hubConfig());
    }

    @Test
    void anEmptyTokenOpensTheHubAsInTheReferenceButSaysSo(@TempDir Path dir) throws Exception {
        assertThat(warning(parsed("--token", "").serve)).as("the reference reads it as no token")
                .contains("--token is empty").contains("the hub is open");
        assertThat(parsed("--token", "").serve.hubConfig().token()).isNull();
        Path file = Files.writeString(dir.resolve("connect.token"), "from-file\n");
        assertThat(warning(parsed("--token", "", "--token-file", file.toString()).serve))
                .as("the next source names one").isNull();
        assertThat(warning(parsed("--token", "abc").serve)).isNull();
        assertThat(warning(parsed().serve)).as("no --token given").isNull();
    }

    @Test
    void aMetricsTokenIsReadOnlyWithMetricsAndTheQueryFormOnlyWithAToken(@TempDir Path dir) throws Exception {
        Run noMetrics = run("--port", "0", "--metrics-token", "t");
        assertThat(noMetrics.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(noMetrics.err()).contains("--metrics-token is read only with --metrics");
        Path tokenFile = Files.writeString(dir.resolve("metrics.token"), "t\n");
        Run fileWithoutMetrics = run("--port", "0", "--metrics-token-file", tokenFile.toString());
        assertThat(fileWithoutMetrics.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(fileWithoutMetrics.err()).contains("--metrics-token-file is read only with --metrics");
        Run queryAlone = run("--port", "0", "--metrics", "--metrics-query-token-ok");
        assertThat(queryAlone.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(queryAlone.err()).contains("--metrics-query-token-ok needs a metrics token");
        Path empty = dir.resolve("empty");
        Files.writeString(empty, "\n");
        Run emptyFile = run("--port", "0", "--metrics", "--metrics-token-file", empty.toString());
        assertThat(emptyFile.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(emptyFile.err()).contains("--metrics-token-file " + empty + " is empty");
    }

    @Test
    void aHubWithAMetricsTokenServesItsEndpointsOnlyToTheBearer(@TempDir Path dir) throws Exception {
        Path metricsToken = dir.resolve("metrics-token");
        Files.writeString(metricsToken, "scrape-token\n");
        hub.start("--port", "0", "--metrics", "--metrics-token-file", metricsToken.toString());
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        URI health = URI.create(hub.url().replace("ws://", "http://").replaceAll("/$", "") + "/health");
        java.net.http.HttpResponse<String> refused = http.send(java.net.http.HttpRequest.newBuilder(health).GET().build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).isEqualTo(401);
        assertThat(refused.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"synapse-metrics\"");
        java.net.http.HttpResponse<String> served = http.send(java.net.http.HttpRequest.newBuilder(health)
                .header("Authorization", "Bearer scrape-token").GET().build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(served.statusCode()).isEqualTo(200);
        assertThat(served.body()).contains("\"status\"");
    }

    private static String[] concat(String[] first, String... more) {
        String[] all = java.util.Arrays.copyOf(first, first.length + more.length);
        System.arraycopy(more, 0, all, first.length, more.length);
        return all;
    }

    @Test
    void benchDrivesClaimsAndReportsPercentiles() throws Exception {
        hub.start("--port", "0", "--max-claims-per-agent", "64");
        // Bounded by count (and by time as a backstop), so a slow machine still sees who requests.
        Run bench = run("bench", "--url", hub.url(), "--agents", "2", "--count", "20", "--duration", "60",
                "--warmup", "0", "--who-every", "2", "--quiet");
        assertThat(bench.code()).as(bench.err()).isEqualTo(ExitCodes.OK);
        assertThat(bench.out()).contains("claims granted").contains("claim->grant        p50")
                .contains("p99.9").contains("who->snapshot");
        assertThat(bench.out()).containsPattern("claims denied\\s+0").containsPattern("claims granted\\s+(2\\d|[3-9]\\d)\\b");
    }

    @Test
    void completionScriptIsGenerated() {
        Run completion = run("generate-completion");
        assertThat(completion.code()).isEqualTo(ExitCodes.OK);
        assertThat(completion.out()).contains("synapse-hub").contains("complete");
    }
}
