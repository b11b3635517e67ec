package dev.synapsehub.cli;

import dev.synapsehub.client.HubClient.CloseStatus;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Close codes read as the contract classifies them (§3.2): by code and by the words of the reason. */
class CloseReasonsTest {

    private static CloseReasons of(int code, String reason) {
        return CloseReasons.of(new CloseStatus(code, reason), "team/a");
    }

    @Test
    void fourThousandTenIsAuthenticationOnlyWithTheWordAuth() {
        assertThat(of(4010, "auth denied").explanation()).contains("--token");
        assertThat(of(4010, "auth denied").exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(of(4010, "superseded").explanation()).contains("took over the name team/a").doesNotContain("token");
        assertThat(of(4010, "superseded").exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
    }

    @Test
    void fourThousandFourteenIsATakeoverRefusalWithTheWordTakeover() {
        assertThat(of(4014, "takeover cooldown").explanation()).contains("takeover").contains("team/a")
                .doesNotContain("--max-unauth-clients");
        assertThat(of(4014, "too many unauthenticated connections").explanation()).contains("--max-unauth-clients");
    }

    @Test
    void fourThousandFourteenForFailedAuthenticationIsABackOffToWaitOut() {
        CloseReasons throttled = of(4014, "too many failed authentication attempts");
        assertThat(throttled.explanation()).contains("--auth-fail-limit").contains("retry later")
                .doesNotContain("--max-unauth-clients");
        assertThat(throttled.exitCode()).as("retryable, not a bad token").isEqualTo(ExitCodes.UNAVAILABLE);
    }

    @Test
    void fourThousandThirteenIsIdentityOnlyWithTheWordIdentity() {
        assertThat(of(4013, "identity pin mismatch").exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(of(4013, "hub at capacity").explanation()).contains("--max-clients");
        assertThat(of(4013, "hub at capacity").line("ws://h", new CloseStatus(4013, "hub at capacity")))
                .isEqualTo("ws://h: the hub closed the connection (4013 hub at capacity): "
                        + of(4013, "hub at capacity").explanation());
    }
}
