package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;

import static org.assertj.core.api.Assertions.assertThat;

/** The load tool finds the hub's CPU counter in its /metrics and reports unknown, never zero, without it. */
class RunCpuTest {
    @Test
    void readsTheUnlabelledCounterFromPrometheusText() {
        String text = "# HELP process_cpu_seconds_total CPU time.\n# TYPE process_cpu_seconds counter\n"
                + "process_cpu_seconds_total_other 9.0\nprocess_cpu_seconds_total 12.5\nsynapse_up 1.0\n";
        assertThat(RunCpu.counter(text, "process_cpu_seconds_total")).hasValue(12.5);
        assertThat(RunCpu.counter(text, "synapse_down")).isEmpty();
        assertThat(RunCpu.counter("process_cpu_seconds_total x\n", "process_cpu_seconds_total")).isEmpty();
    }

    @Test
    void theMetricsUrlIsOnTheHubsPort() {
        assertThat(RunCpu.metricsUrl(URI.create("ws://127.0.0.1:8876"))).hasToString("http://127.0.0.1:8876/metrics");
        assertThat(RunCpu.metricsUrl(URI.create("wss://127.0.0.1:9/x"))).hasToString("https://127.0.0.1:9/metrics");
    }

    @Test
    void aHubThatCannotBeReadIsUnknownAndTheToolsOwnCpuIsMeasured() throws Exception {
        RunCpu cpu = new RunCpu(null);
        cpu.start();
        cpu.stop();
        assertThat(cpu.hubSeconds()).isEmpty();
        assertThat(cpu.selfSeconds()).isPresent();
        assertThat(cpu.selfSeconds().getAsDouble()).isGreaterThanOrEqualTo(0);
        StringWriter text = new StringWriter();
        cpu.print(new PrintWriter(text, true));
        assertThat(text.toString()).contains("hub CPU             unknown (").contains("bench CPU           0.");
    }
}
