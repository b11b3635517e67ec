package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.InMemoryJournal;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.state.CoordinationState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import static dev.synapsehub.net.TestHub.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code /health} reports what is true of the running hub, with the HTTP status a probe acts on. */
class HealthTest {
    private static final ObjectMapper JSON = new ObjectMapper();


    static JsonNode healthBody(String response) throws Exception {
        return JSON.readTree(response.substring(response.indexOf("\r\n\r\n") + 4));
    }

    @Test
    void aDeadWriterIsReportedFailedWith503AndRequestsAreAnsweredWithTheReason() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true))) {
            HubClient a = hub.agent("p/alpha");
            String before = HttpGet.body(hub.port, "/health");
            assertThat(before).startsWith("HTTP/1.1 200");
            assertThat(healthBody(before).path("status").asText()).isEqualTo("ok");

            hub.actor.read(s -> {
                throw new InjectedError();
            });

            String after = HttpGet.body(hub.port, "/health");
            assertThat(after).startsWith("HTTP/1.1 503");
            JsonNode body = healthBody(after);
            assertThat(body.path("status").asText()).isEqualTo("failed");
            assertThat(body.path("reasons").toString()).contains("writer_failed");
            assertThat(body.path("writer").asText()).isEqualTo("failed");

            a.send(claim(a, "T1"));
            ObjectNode refused = a.awaitType("error", WAIT);
            assertThat(refused.path("error_code").asText()).isEqualTo("writer_failed");
            assertThat(a.isOpen()).isTrue();
        }
    }

    @Test
    void aJournalThatSkippedRowsAtStartIsDegradedAndCountsThemTruly(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("hub.db");
        try (TestHub hub = journaled(db)) {
            HubClient a = hub.agent("p/alpha");
            a.send(claim(a, "T1"));
            a.awaitType("claim_granted", WAIT);
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.execute("INSERT INTO events(ts, kind, durability, payload) VALUES (11, 'claim', 'FULL', '{not json')");
        }
        try (TestHub hub = journaled(db)) {
            String response = HttpGet.body(hub.port, "/health");
            assertThat(response).startsWith("HTTP/1.1 200"); // degraded still serves
            JsonNode body = healthBody(response);
            assertThat(body.path("status").asText()).isEqualTo("degraded");
            assertThat(body.path("reasons").toString()).contains("journal_rows_skipped");
            assertThat(body.path("journal_corrupt_rows").asLong()).isEqualTo(1);
            assertThat(body.path("active_claims").asInt()).isEqualTo(1);
            assertThat(HttpGet.body(hub.port, "/metrics")).contains("synapse_journal_corrupt_rows 1\n")
                    .contains("synapse_health_status{status=\"degraded\"} 1\n");
        }
    }

    @Test
    void aWriterThatDoesNotAnswerMakesTheHubDegradedAndTheClaimCountUnknownNotZero() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true))) {
            HubClient a = hub.agent("p/alpha");
            a.send(claim(a, "T1"));
            a.awaitType("claim_granted", WAIT);
            CountDownLatch release = new CountDownLatch(1);
            hub.actor.read(s -> {
                try {
                    return release.await(10, TimeUnit.SECONDS); // the writer is stuck here
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            try {
                JsonNode body = healthBody(HttpGet.body(hub.port, "/health"));
                assertThat(body.path("status").asText()).isEqualTo("degraded");
                assertThat(body.path("reasons").toString()).contains("actor_behind");
                assertThat(body.path("active_claims").isNull()).isTrue();
                String metrics = HttpGet.body(hub.port, "/metrics");
                assertThat(metrics).doesNotContain("synapse_active_claims ").contains("synapse_writer_up 1\n");
            } finally {
                release.countDown();
            }
            JsonNode after = healthBody(HttpGet.body(hub.port, "/health"));
            assertThat(after.path("status").asText()).isEqualTo("ok");
            assertThat(after.path("active_claims").asInt()).isEqualTo(1);
        }
    }

    @Test
    void aFailingJournalIsReported503UntilAnAppendSucceedsAgain() throws Exception {
        AtomicBoolean fail = new AtomicBoolean();
        InMemoryJournal memory = new InMemoryJournal();
        Journal journal = new Journal() {
            @Override
            public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
                if (fail.get()) {
                    throw new JournalException("injected: disk I/O error");
                }
                return memory.append(batch);
            }

            @Override
            public void replay(Consumer<JournaledEvent> sink) {
            }

            @Override
            public long lastSeq() {
                return memory.lastSeq();
            }

            @Override
            public void close() {
            }
        };
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), journal, Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true), actor, Clock.system())) {
            HubClient a = hub.agent("p/alpha");
            fail.set(true);
            a.send(claim(a, "T1"));
            assertThat(a.awaitType("error", WAIT).path("error_code").asText()).isEqualTo("journal_failed");
            String failing = HttpGet.body(hub.port, "/health");
            assertThat(failing).startsWith("HTTP/1.1 503");
            assertThat(healthBody(failing).path("reasons").toString()).contains("journal_failing");
            assertThat(HttpGet.body(hub.port, "/metrics")).contains("synapse_journal_append_failures_total 1\n");

            fail.set(false);
            a.send(claim(a, "T1"));
            a.awaitType("claim_granted", WAIT);
            assertThat(HttpGet.body(hub.port, "/health")).startsWith("HTTP/1.1 200");
        }
    }

    @Test
    void anExtensionThatCannotDoItsJobHoldsTheHubFailedWith503UntilItCan() throws Exception {
        java.util.concurrent.atomic.AtomicReference<List<String>> failed = new java.util.concurrent.atomic.AtomicReference<>(
                List.of());
        dev.synapsehub.net.extension.HubExtension part = new dev.synapsehub.net.extension.HubExtension() {
            @Override
            public List<String> failedReasons() {
                return failed.get();
            }

            @Override
            public List<String> degradedReasons() {
                return List.of("part_lagging");
            }
        };
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true),
                new dev.synapsehub.net.extension.HubExtensions(List.of(part)))) {
            String degraded = HttpGet.body(hub.port, "/health");
            assertThat(degraded).startsWith("HTTP/1.1 200");
            assertThat(healthBody(degraded).path("status").asText()).isEqualTo("degraded");

            failed.set(List.of("part_failed"));
            String response = HttpGet.body(hub.port, "/health");
            assertThat(response).startsWith("HTTP/1.1 503");
            JsonNode body = healthBody(response);
            assertThat(body.path("status").asText()).isEqualTo("failed");
            assertThat(body.path("reasons").toString()).isEqualTo("[\"part_failed\",\"part_lagging\"]");
            assertThat(HttpGet.body(hub.port, "/metrics")).contains("synapse_health_status{status=\"failed\"} 1\n");

            failed.set(List.of());
            assertThat(HttpGet.body(hub.port, "/health")).startsWith("HTTP/1.1 200");
        }
    }

    @Test
    void aFaultWhileBuildingHealthOrMetricsIsAnswered500CountedAndLogged() throws Exception {
        AtomicBoolean broken = new AtomicBoolean(true);
        dev.synapsehub.net.extension.HubExtension faulty = new dev.synapsehub.net.extension.HubExtension() {
            @Override
            public List<String> degradedReasons() {
                if (broken.get()) {
                    throw new IllegalStateException("injected: cannot tell");
                }
                return List.of();
            }

            @Override
            public void appendMetrics(StringBuilder out) {
                if (broken.get()) {
                    throw new IllegalStateException("injected: cannot count");
                }
            }
        };
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true),
                new dev.synapsehub.net.extension.HubExtensions(List.of(faulty)))) {
            String health = HttpGet.body(hub.port, "/health");
            assertThat(health).startsWith("HTTP/1.1 500").contains("Internal Server Error");
            String metrics = HttpGet.body(hub.port, "/metrics");
            assertThat(metrics).startsWith("HTTP/1.1 500").contains("Internal Server Error");

            broken.set(false);
            assertThat(HttpGet.body(hub.port, "/health")).startsWith("HTTP/1.1 200");
            assertThat(HttpGet.body(hub.port, "/metrics")).contains("synapse_faults_total 2\n");
        }
    }

    @Test
    void aReplayThatFellBackToOneThreadIsCountedOnMetrics() throws Exception {
        InMemoryJournal memory = new InMemoryJournal();
        Journal fellBack = new Journal() { // a journal whose start-up replay could not start its threads
            @Override
            public List<JournaledEvent> append(List<CoordinationEvent> batch) throws JournalException {
                return memory.append(batch);
            }

            @Override
            public void replay(Consumer<JournaledEvent> sink) {
            }

            @Override
            public long lastSeq() {
                return memory.lastSeq();
            }

            @Override
            public long replayThreadFallbacks() {
                return 1;
            }

            @Override
            public void close() {
            }
        };
        CoordinationActor actor = new CoordinationActor(new CoordinationState(), fellBack, Clock.system(),
                ActorSettings.DEFAULTS);
        actor.start();
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true), actor, Clock.system(), fellBack)) {
            assertThat(HttpGet.body(hub.port, "/metrics"))
                    .contains("# TYPE synapse_journal_replay_thread_fallbacks_total counter")
                    .contains("synapse_journal_replay_thread_fallbacks_total 1\n");
        }
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true))) {
            assertThat(HttpGet.body(hub.port, "/metrics")).contains("synapse_journal_replay_thread_fallbacks_total 0\n");
        }
    }

    @Test
    void metricsExportLatencyHistogramsAndRateCounters() throws Exception {
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true))) {
            HubClient a = hub.agent("p/alpha");
            for (int i = 0; i < 3; i++) {
                a.send(claim(a, "T" + i));
                a.awaitType("claim_granted", WAIT);
            }
            hub.awaitBroadcastsHandedOut();
            String metrics = HttpGet.body(hub.port, "/metrics");
            assertThat(metrics).contains("# TYPE synapse_commit_latency_seconds histogram")
                    .contains("synapse_commit_latency_seconds_bucket{le=\"+Inf\"}")
                    .contains("synapse_claim_decide_seconds_count 3")
                    .contains("# TYPE synapse_commit_batch_size histogram")
                    .contains("# TYPE synapse_fanout_delay_seconds histogram")
                    .contains("synapse_claims_granted_total 3\n")
                    .contains("synapse_actor_commands_total ")
                    .contains("synapse_journal_commits_total ")
                    .contains("synapse_active_claims 3\n")
                    .doesNotContain("synapse_commit_latency_mean_microseconds");
            assertThat(count(metrics, "synapse_commit_latency_seconds_count")).isGreaterThanOrEqualTo(1);
            assertThat(count(metrics, "synapse_commit_batch_size_sum")).isGreaterThanOrEqualTo(3);
            assertThat(count(metrics, "synapse_fanout_delay_seconds_count")).isGreaterThanOrEqualTo(1);
        }
    }

    @Test
    void metricsReportTheCpuTimeTheProcessHasUsedAsTheJvmMeasuresIt() throws Exception {
        var os = (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean();
        try (TestHub hub = new TestHub(HubConfig.builder().metricsEnabled(true))) {
            double first = count(HttpGet.body(hub.port, "/metrics"), "process_cpu_seconds_total");
            double between = os.getProcessCpuTime() / 1e9; // the hub runs in this process
            double second = count(HttpGet.body(hub.port, "/metrics"), "process_cpu_seconds_total");
            assertThat(first).isPositive().isLessThanOrEqualTo(between);
            assertThat(second).isGreaterThanOrEqualTo(between);
        }
    }

    private static double count(String metrics, String sample) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(sample + " ")) {
                return Double.parseDouble(line.substring(sample.length() + 1).trim());
            }
        }
        throw new AssertionError(sample + " not in " + metrics);
    }

    private static TestHub journaled(Path db) throws Exception {
        return new TestHub(HubConfig.builder().metricsEnabled(true), db, CoordinationState::new);
    }

    private static ObjectNode claim(HubClient c, String task) {
        ObjectNode f = c.frame("claim");
        f.put("task_id", task);
        f.put("worktree", task);
        return f;
    }
}
