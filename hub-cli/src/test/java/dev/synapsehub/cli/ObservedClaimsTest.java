package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The bench observer counts a claim by the phase it was sent in, and forgets all at the end. */
class ObservedClaimsTest {
    @Test
    void aClaimSentInTheWarmUpIsNotCountedThoughItsGrantArrivesWhileMeasuring() {
        ObservedClaims claims = new ObservedClaims();
        claims.sent("warm", 100, false);
        assertThat(claims.granted("warm", 900)).isEmpty();
        assertThat(claims.size()).isZero();
    }

    @Test
    void aClaimSentWhileMeasuringCountsFromItsSendThoughItsGrantArrivesAfter() {
        ObservedClaims claims = new ObservedClaims();
        claims.sent("t1", 1_000, true);
        assertThat(claims.granted("t1", 1_250)).hasValue(250);
        assertThat(claims.granted("t1", 1_300)).as("a second copy of the grant").isEmpty();
    }

    @Test
    void clearForgetsTheClaimsStillWaiting() {
        ObservedClaims claims = new ObservedClaims();
        claims.sent("a", 1, true);
        claims.sent("b", 2, false);
        claims.clear();
        assertThat(claims.size()).isZero();
        assertThat(claims.granted("a", 5)).isEmpty();
    }
}
