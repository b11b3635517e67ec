package dev.synapsehub.net.protocol;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PrometheusTextTest {
    @Test
    void aCounterNamesItsFullSampleNameInHelpAndType() {
        StringBuilder s = new StringBuilder();
        PrometheusText.counter(s, "synapse_x_total", "Things.", 3);
        assertThat(s.toString()).isEqualTo("# HELP synapse_x_total Things.\n# TYPE synapse_x_total counter\nsynapse_x_total 3\n");
    }

    @Test
    void aLabelledFamilyWritesItsMetadataOnceAndEscapesLabelValues() {
        StringBuilder s = new StringBuilder();
        PrometheusText.sample(s, "synapse_lag", "Lag.", "gauge", "{peer=\"" + PrometheusText.escapeLabel("a\"b\\c\nd") + "\"}", 2);
        PrometheusText.sample(s, "synapse_lag", "Lag.", "gauge", "{peer=\"n2\"}", 0.25);
        assertThat(s.toString()).isEqualTo("# HELP synapse_lag Lag.\n# TYPE synapse_lag gauge\n"
                + "synapse_lag{peer=\"a\\\"b\\\\c\\nd\"} 2\nsynapse_lag{peer=\"n2\"} 0.25\n");
    }

    @Test
    void integralValuesCarryNoFractionAndHugeOnesKeepTheirExponent() {
        StringBuilder s = new StringBuilder();
        PrometheusText.gauge(s, "g", "G.", -7);
        PrometheusText.gauge(s, "h", "H.", 1e16);
        assertThat(s.toString()).contains("\ng -7\n").contains("\nh 1.0E16\n");
    }
}
