package dev.synapsehub.cli;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static dev.synapsehub.cli.CliTest.run;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code synapse-hub bench --workload ...} against an in-process hub on a loopback port: small
 * runs bounded by count (and by --duration as a backstop), checking the correctness counters.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BenchCommandTest {
    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    private CliTest.Run bench(String... args) {
        String[] all = new String[args.length + 7];
        all[0] = "bench";
        all[1] = "--url";
        all[2] = hub.url();
        all[3] = "--warmup";
        all[4] = "0";
        all[5] = "--quiet";
        all[6] = "--duration=60";
        System.arraycopy(args, 0, all, 7, args.length);
        return run(all);
    }

    @Test
    void broadcastDeliversEveryMessageToEveryReceiver() throws Exception {
        hub.start("--port", "0");
        CliTest.Run r = bench("--workload", "broadcast", "--agents", "3", "--count", "50");
        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("workload            broadcast")
                .contains("senders             1 (closed loop)")
                .containsPattern("messages sent\\s+50\\s")
                .containsPattern("deliveries\\s+150\\s")
                .containsPattern("expected\\s+150\\n")
                .containsPattern("lost deliveries\\s+0\\n")
                .containsPattern("errors\\s+0\\n")
                .contains("delivery latency    p50").contains("p99.9");
    }

    @Test
    void broadcastAtAFixedRateWithSeveralSendersAndIdleConnections() throws Exception {
        hub.start("--port", "0");
        CliTest.Run r = bench("--workload", "broadcast", "--agents", "2", "--senders", "2", "--rate", "400",
                "--count", "40", "--idle", "5");
        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("senders             2 (open loop at 400 msgs/s)")
                .contains("receivers           2 (+5 idle)")
                .containsPattern("messages sent\\s+40\\s")
                .containsPattern("deliveries\\s+80\\s")
                .containsPattern("lost deliveries\\s+0\\n");
    }

    @Test
    void directedPairsCloseTheLoopOnDeliveryReceipts(@TempDir Path dir) throws Exception {
        hub.start("--port", "0", "--db", dir.resolve("hub.db").toString());
        CliTest.Run r = bench("--workload", "directed", "--agents", "4", "--count", "40");
        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("agents              4 in 2 pairs")
                .containsPattern("chats sent\\s+40\\n")
                .containsPattern("receipts\\s+40\\s+\\(")
                .containsPattern("missing receipts\\s+0\\n")
                .containsPattern("delivered=false\\s+0\\n")
                .contains("send->receipt       p50");
    }

    @Test
    void directedNeedsAnEvenNumberOfAgents() throws Exception {
        hub.start("--port", "0");
        CliTest.Run r = bench("--workload", "directed", "--agents", "3", "--count", "4");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("must be even");
    }

    @Test
    void mailboxReplaysTheWholeBacklogOnceInOrder(@TempDir Path dir) throws Exception {
        hub.start("--port", "0", "--db", dir.resolve("hub.db").toString());
        CliTest.Run r = bench("--workload", "mailbox", "--count", "200");
        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("workload            mailbox")
                .containsPattern("replayed\\s+200 of 200\\n")
                .containsPattern("duplicates\\s+0\\n")
                .containsPattern("out of order\\s+0\\n")
                .contains("replay time").contains("msgs/s")
                .containsPattern("pages\\s+1\\s")
                .contains("every chat replayed exactly once, in seq order");
    }

    @Test
    void mailboxCpuSharesAreOverTheReplaysRealDuration(@TempDir Path dir) throws Exception {
        hub.start("--port", "0", "--db", dir.resolve("hub.db").toString(), "--metrics");
        CliTest.Run r = bench("--workload", "mailbox", "--count", "200");
        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(ExitCodes.OK);
        java.util.regex.Matcher replay = java.util.regex.Pattern.compile("replay time\\s+([0-9.]+) s").matcher(r.out());
        java.util.regex.Matcher hubCpu = java.util.regex.Pattern
                .compile("hub CPU\\s+([0-9.]+) s\\s+\\(([0-9]+) % of one core over ([0-9.]+) s\\)").matcher(r.out());
        assertThat(replay.find()).as(r.out()).isTrue();
        assertThat(hubCpu.find()).as(r.out()).isTrue();
        // the CPU was read around the replay: its window covers the replay, so no share is beyond the machine's
        assertThat(Double.parseDouble(hubCpu.group(3))).as(r.out()) // printed to 0.01 s, the replay to 0.001 s
                .isGreaterThanOrEqualTo(Double.parseDouble(replay.group(1)) - 0.005);
        assertThat(Long.parseLong(hubCpu.group(2))).as(r.out())
                .isLessThanOrEqualTo(200L * Runtime.getRuntime().availableProcessors()); // twice the machine: nonsense, not noise
    }

    @Test
    void mailboxGetsABacklogLargerThanTheContractsScanWindowInOneReplay(@TempDir Path dir) throws Exception {
        hub.start("--port", "0", "--db", dir.resolve("hub.db").toString());
        CliTest.Run r = bench("--workload", "mailbox", "--count", "2100");
        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).containsPattern("replayed\\s+2,100 of 2,100\\n")
                .containsPattern("duplicates\\s+0\\n")
                .containsPattern("out of order\\s+0\\n")
                .containsPattern("pages\\s+1\\s+\\(1000 of 1000 chats each at most; 0 re-requested")
                .contains("every chat replayed exactly once, in seq order");
    }

    @Test
    void mailboxAgainstAHubWithoutAJournalFailsClearly() throws Exception {
        hub.start("--port", "0");
        CliTest.Run r = bench("--workload", "mailbox", "--count", "10");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("no journal").contains("--db");
    }

    @Test
    void aHubAtCapacityGetsAHint() throws Exception {
        hub.start("--port", "0", "--max-clients", "2");
        CliTest.Run r = bench("--workload", "broadcast", "--agents", "3", "--count", "5");
        assertThat(r.code()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(r.err()).contains("4013").contains("--max-clients 4 or more");
    }

    @Test
    void aPerHostLimitGetsAHint() throws Exception {
        hub.start("--port", "0", "--max-connections-per-host", "2");
        CliTest.Run r = bench("--agents", "3", "--count", "5");
        assertThat(r.code()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(r.err()).contains("4015").contains("--max-connections-per-host 0");
    }

    @Test
    void claimsWithSeveralInFlightPerAgentIdleConnectionsAndAPaceAllComplete() throws Exception {
        hub.start("--port", "0", "--max-claims-per-agent", "64");
        // 2 agents x 3 slots, paced at 100 claims/s: 30 grants take about 0.3 s, and
        // every one of them needs its own claim_granted picked out of the others' broadcasts.
        CliTest.Run r = bench("--agents", "2", "--in-flight", "3", "--idle", "5", "--rate", "100", "--count", "30");
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("2 x 3 in flight (+5 idle), paced at 100 claims/s")
                .containsPattern("claims denied\\s+0").containsPattern("errors\\s+0")
                .containsPattern("claims granted\\s+(3\\d|[4-9]\\d)\\b");
    }

    @Test
    void anIdleAgentObservesEachGrantAndTheToolPrintsHowLongAfterTheClaimItCame() throws Exception {
        // the observer is one of the idle connections: it must see every claimant's grant broadcast
        hub.start("--port", "0", "--broadcast-linger-ms", "30");
        CliTest.Run r = bench("--agents", "1", "--idle", "3", "--rate", "50", "--count", "20");
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).containsPattern("errors\\s+0")
                .containsPattern("observer's grant\\s+p50 \\d+(µs|\\.\\dms)  p99 ");
        // it measures the observer's copy, not the claimant's: that one waits in the 30 ms linger
        // window (a bound the hub's schedule sets, not a speed), while the claimant is answered at once.
        // A broadcast that opens a window waits the whole linger; one that joins an open window waits
        // only its rest, so the median lies anywhere up to 30 ms (only claims sent while measuring count,
        // ObservedClaims), and the maximum is at least the linger.
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                "observer's grant\\s+p50 (\\d+(?:\\.\\d)?)(µs|ms) .* max (\\d+)\\.\\dms").matcher(r.out());
        assertThat(m.find()).as(r.out()).isTrue();
        assertThat(Integer.parseInt(m.group(3))).as(r.out()).isGreaterThanOrEqualTo(25);
        java.util.regex.Matcher claimant = java.util.regex.Pattern.compile("from actual send\\s+p50 (\\d+(?:\\.\\d)?)(µs|ms)")
                .matcher(r.out());
        assertThat(claimant.find()).as(r.out()).isTrue();
        assertThat(micros(m.group(1), m.group(2))).as(r.out()).isGreaterThan(micros(claimant.group(1), claimant.group(2)));
    }

    @Test
    void idleConnectionsReadInPassesGetTheirFramesUpToAnIntervalLaterWhileTheClaimantIsAnsweredAtOnce() throws Exception {
        hub.start("--port", "0", "--broadcast-linger-ms", "0");
        CliTest.Run r = bench("--agents", "1", "--idle", "3", "--idle-read-interval-ms", "250", "--rate", "50",
                "--count", "40");
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("1 x 1 in flight (+3 idle, read every 250 ms)").containsPattern("errors\\s+0")
                .containsPattern("claims granted\\s+([4-9]\\d|\\d{3,})\\b");
        // the observer reads on the idle loop: a grant broadcast (no linger) waits there for the next
        // pass, a wait spread evenly over the 250 ms interval, so its median is far above 40 ms (read as
        // frames come, it is the hub's fan-out: about a millisecond); the claimant's own loop is not paced
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("observer's grant\\s+p50 (\\d+(?:\\.\\d)?)(µs|ms) ")
                .matcher(r.out());
        assertThat(m.find()).as(r.out()).isTrue();
        assertThat(micros(m.group(1), m.group(2))).as(r.out()).isGreaterThanOrEqualTo(40_000);
        java.util.regex.Matcher claimant = java.util.regex.Pattern.compile("from actual send\\s+p50 (\\d+(?:\\.\\d)?)(µs|ms)")
                .matcher(r.out());
        assertThat(claimant.find()).as(r.out()).isTrue();
        assertThat(micros(claimant.group(1), claimant.group(2))).as(r.out()).isLessThan(micros(m.group(1), m.group(2)));
        CliTest.Run bad = bench("--agents", "1", "--idle", "1", "--count", "1", "--idle-read-interval-ms", "-1");
        assertThat(bad.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(bad.err()).contains("--idle-read-interval-ms 0..1000");
    }

    @Test
    void claimsResendWhatABusyHubRefusedAndStillSucceed() throws Exception {
        // A 1-byte broadcast backlog limit with a 200 ms linger: while one agent's grant or release
        // waits to reach the other agent, every request that changes state is answered busy.
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), new InMemoryJournal(), Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        try (HubServer server = new HubServer(HubConfig.builder().host("127.0.0.1").port(0)
                .broadcastLinger(Duration.ofMillis(200)).maxFanoutBacklogBytes(1).build(), actor, Clock.system())) {
            int port = server.start();
            CliTest.Run r = run("bench", "--url", "ws://127.0.0.1:" + port, "--warmup", "0", "--quiet", "--duration=60",
                    "--agents", "2", "--count", "6", "--who-every", "2");
            assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
            assertThat(r.out()).containsPattern("claims granted\\s+([6-9]|\\d\\d)\\b").containsPattern("errors\\s+0")
                    .containsPattern("busy refusals\\s+[1-9]\\d*\\s+\\(requests resent after a pause: [1-9]")
                    .containsPattern("who->snapshot .*\\([1-9]\\d* requests\\)");
            assertThat(server.services().metrics().fanoutBusyRefusals.get()).isPositive();
            // every resent claim was released in the end: the hub holds none
            try (HubClient observer = HubClient.connect(URI.create("ws://127.0.0.1:" + port + "/"), Duration.ofSeconds(10))) {
                observer.register("p/observer", null, Duration.ofSeconds(10));
                // queries are refused busy too while the observer's own presence update lingers
                com.fasterxml.jackson.databind.node.ObjectNode answer;
                int attempts = 0;
                do {
                    if (attempts++ > 0) {
                        Thread.sleep(250); // as the bench does after a busy refusal
                    }
                    observer.send(observer.frame("state_request"));
                    answer = observer.await(f -> "state_snapshot".equals(f.path("type").asText())
                            || "busy".equals(f.path("error_code").asText()), Duration.ofSeconds(10));
                } while (!"state_snapshot".equals(answer.path("type").asText()) && attempts < 40);
                assertThat(answer.path("type").asText()).isEqualTo("state_snapshot");
                assertThat(answer.path("snapshot").path("active_claims")).isEmpty();
            }
        } finally {
            actor.close();
        }
    }

    @Test
    void aPacedRunReportsLatencyFromTheIntendedAndTheActualSendAndBothCpus() throws Exception {
        hub.start("--port", "0", "--metrics");
        CliTest.Run r = bench("--agents", "2", "--rate", "200", "--count", "20");
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).containsPattern("claim->grant        p50 .* max .*\\(from the intended send time\\)\\n")
                .containsPattern("  from actual send  p50 .* max ")
                .containsPattern("hub CPU             \\d+\\.\\d\\d s  \\(\\d+ % of one core over \\d+\\.\\d\\d s\\)")
                .containsPattern("bench CPU           \\d+\\.\\d\\d s  \\(");
    }

    @Test
    void withoutMetricsTheHubsCpuIsUnknownNotZero() throws Exception {
        hub.start("--port", "0");
        CliTest.Run r = bench("--workload", "broadcast", "--agents", "1", "--rate", "200", "--count", "10");
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("delivery latency    p50").contains("(from the intended send time)")
                .contains("  from actual send  p50")
                .containsPattern("hub CPU             unknown \\(.*403.*--metrics\\)");
    }

    @Test
    void aRunWhoseConnectionsWereDroppedPrintsNoFigureAndFails() throws Exception {
        HubDaemon daemon = hub.start("--port", "0", "--max-claims-per-agent", "64");
        String url = hub.url();
        java.util.concurrent.CompletableFuture<CliTest.Run> run = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> run("bench", "--url", url, "--warmup", "0", "--quiet", "--duration=60", "--agents", "2"));
        // once claims flow in the measured phase (no warm-up), the hub goes away under the agents
        long before = daemon.actor().metrics().commands();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (daemon.actor().metrics().commands() < before + 20 && System.nanoTime() < deadline && !run.isDone()) {
            Thread.sleep(10);
        }
        assertThat(run).as("the bench ended before the hub was stopped").isNotDone();
        hub.close();
        CliTest.Run r = run.get(90, TimeUnit.SECONDS);
        assertThat(r.code()).isEqualTo(ExitCodes.REFUSED);
        assertThat(r.err()).contains("connection(s) were dropped during the run").contains("no figure is printed");
        assertThat(r.out()).doesNotContain("claims granted").doesNotContain("p99").doesNotContain("CPU");
    }

    @Test
    void spreadUrlsPutsTheAgentsRoundRobinOnEveryHubAndAddsUpTheirCpu() throws Exception {
        hub.start("--port", "0", "--metrics", "--max-claims-per-agent", "64");
        try (LoopbackHub second = new LoopbackHub()) {
            second.start("--port", "0", "--metrics", "--max-claims-per-agent", "64");
            CliTest.Run r = run("bench", "--spread-urls", hub.url() + "," + second.url(), "--warmup", "0", "--quiet",
                    "--duration=60", "--agents", "4", "--count", "40");
            assertThat(r.code()).as(r.out() + r.err()).isEqualTo(ExitCodes.OK);
            assertThat(r.err()).contains("(round-robin)");
            assertThat(r.out()).containsPattern("claims granted\\s+([4-9]\\d|\\d{3,})\\b").containsPattern("errors\\s+0")
                    .containsPattern("hub CPU             \\d+\\.\\d\\d s  \\(");
            // two agents on each hub, each claiming there: both hubs granted claims, 40 or more in all
            double onFirst = grantedOn(hub.url());
            double onSecond = grantedOn(second.url());
            assertThat(onFirst).isPositive();
            assertThat(onSecond).isPositive();
            assertThat(onFirst + onSecond).isGreaterThanOrEqualTo(40);
        }
    }

    /** The hub's {@code synapse_claims_granted_total}, read from its /metrics. */
    private static double grantedOn(String hubUrl) throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(RunCpu.metricsUrl(URI.create(hubUrl))).GET().build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        return RunCpu.counter(r.body(), "synapse_claims_granted_total").orElseThrow();
    }

    @Test
    void spreadUrlsIsForTheClaimsWorkloadOnly() throws Exception {
        hub.start("--port", "0");
        CliTest.Run r = bench("--workload", "broadcast", "--spread-urls", hub.url() + "," + hub.url(), "--count", "1");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--spread-urls is for --workload claims only");
    }

    @Test
    void aWarmupPastTheHourOrADurationThatIsNoNumberIsAUsageErrorBeforeAnyConnection() {
        String url = "ws://127.0.0.1:9"; // nothing listens: a run that is not refused fails to connect instead
        String[][] refused = {{"--warmup", "3601", "--warmup must be a number of seconds within 0..3600"},
                {"--warmup", "-1", "--warmup must be"}, {"--duration", "NaN", "--duration must be a number of seconds"},
                {"--duration", "Infinity", "--duration must be"}, {"--drain", "NaN", "--drain must be"},
                {"--connect-timeout", "NaN", "--connect-timeout must be"}};
        for (String[] bad : refused) {
            CliTest.Run r = run("bench", "--url", url, "--quiet", "--count", "1", bad[0], bad[1]);
            assertThat(r.code()).as(bad[0] + " " + bad[1]).isEqualTo(ExitCodes.USAGE);
            assertThat(r.err()).as(bad[0] + " " + bad[1]).contains(bad[2]);
        }
    }

    @Test
    void inFlightOutOfRangeIsAUsageError() throws Exception {
        hub.start("--port", "0");
        CliTest.Run r = bench("--in-flight", "0", "--count", "1");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--in-flight 1..1024");
    }

    @Test
    void sourceAddressesBindTheSocketsAndNonsenseIsAUsageError() throws Exception {
        hub.start("--port", "0", "--max-claims-per-agent", "64");
        CliTest.Run r = bench("--agents", "2", "--idle", "3", "--count", "10", "--source-addresses", "127.0.0.1-127.0.0.1");
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).containsPattern("errors\\s+0").containsPattern("claims granted\\s+([1-9]\\d|\\d{3,})\\b");
        CliTest.Run bad = bench("--agents", "1", "--count", "1", "--source-addresses", "127.0.0.9-127.0.0.2");
        assertThat(bad.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(bad.err()).contains("--source-addresses").contains("ends before");
    }

    @Test
    void aPacedWarmupKeepsEverySlotOnOneScheduleIntoTheMeasuredPhase() throws Exception {
        hub.start("--port", "0", "--max-claims-per-agent", "64");
        CliTest.Run r = run("bench", "--url", hub.url(), "--quiet", "--duration=60", "--warmup", "0.5", "--paced-warmup",
                "--agents", "4", "--rate", "40", "--count", "20");
        assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("paced at 40 claims/s").containsPattern("errors\\s+0")
                .containsPattern("claims granted\\s+([2-9]\\d|\\d{3,})\\b").contains("from the intended send time");
    }

    private static double micros(String number, String unit) {
        return Double.parseDouble(number) * ("ms".equals(unit) ? 1000 : 1);
    }
}
