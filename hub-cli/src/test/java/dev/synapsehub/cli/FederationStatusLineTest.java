package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code federation status}: one line per watched peer, with the round trip and certificate expiry the hub measured. */
class FederationStatusLineTest {
    private static ObjectNode peer() {
        ObjectNode p = new ObjectMapper().createObjectNode();
        p.put("peer", "hub-b").put("cursor", 42).put("lag", 3).put("last_success", 1_796_000_000.0);
        p.putNull("last_error");
        p.put("clock_skew_seconds", 0.25);
        p.put("quarantined", false);
        return p;
    }

    @Test
    void theMeasuredRoundTripAndCertificateExpiryAreShown() {
        ObjectNode p = peer();
        p.put("round_trip_seconds", 0.0123);
        p.put("certificate_not_after", 1_800_000_000.0);
        assertThat(FederationCommands.statusLine(p)).isEqualTo("hub-b: reachable, cursor 42, lag 3, last success "
                + "2026-11-30T00:53:20Z, round trip 12.3 ms, clock skew 0.25 s, certificate expires 2027-01-15T08:00:00Z, "
                + "last error none");
    }

    @Test
    void whatWasNotMeasuredIsUnknownNeverZero() {
        ObjectNode p = peer();
        p.putNull("round_trip_seconds");
        p.putNull("certificate_not_after");
        assertThat(FederationCommands.statusLine(p)).contains("round trip unknown").contains("certificate expires unknown");
    }
}
