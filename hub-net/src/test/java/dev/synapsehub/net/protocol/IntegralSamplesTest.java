package dev.synapsehub.net.protocol;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class IntegralSamplesTest {
    @Test
    void integralValuesLoseTheirDecimalPointAndOthersStayAsWritten() {
        String in = """
                # HELP synapse_up 1.0 means up
                # TYPE synapse_up gauge
                synapse_up 1.0
                synapse_active_claims 1.0E7
                synapse_commit_latency_seconds_sum 0.0125
                synapse_commit_latency_seconds_bucket{le="0.005"} 12.0
                synapse_commit_latency_seconds_bucket{le="+Inf"} 13.0
                synapse_x{peer="a} 2.0",kind="b\\"c"} -3.0 1700000000000
                synapse_nan NaN
                synapse_inf +Inf
                synapse_huge 1.0E300
                synapse_neg_zero -0.0
                """;
        assertThat(IntegralSamples.rewrite(in)).isEqualTo("""
                # HELP synapse_up 1.0 means up
                # TYPE synapse_up gauge
                synapse_up 1
                synapse_active_claims 10000000
                synapse_commit_latency_seconds_sum 0.0125
                synapse_commit_latency_seconds_bucket{le="0.005"} 12
                synapse_commit_latency_seconds_bucket{le="+Inf"} 13
                synapse_x{peer="a} 2.0",kind="b\\"c"} -3 1700000000000
                synapse_nan NaN
                synapse_inf +Inf
                synapse_huge 1.0E300
                synapse_neg_zero 0
                """);
    }
}
