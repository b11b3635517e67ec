package dev.synapsehub.spec.invariants;

import dev.synapsehub.core.SpecConstants;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.claim.TtlPolicy;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.reply.Refusal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Random;

import static dev.synapsehub.spec.invariants.Registries.checkpoint;
import static dev.synapsehub.spec.invariants.Registries.claimIn;
import static dev.synapsehub.spec.invariants.Registries.claimTtl;
import static dev.synapsehub.spec.invariants.Registries.fresh;
import static dev.synapsehub.spec.invariants.Registries.handoff;
import static dev.synapsehub.spec.invariants.Registries.release;
import static dev.synapsehub.spec.invariants.Registries.ttl;
import static dev.synapsehub.spec.invariants.Registries.update;
import static dev.synapsehub.spec.invariants.Registries.with;
import static org.assertj.core.api.Assertions.assertThat;

/** Pins INV-LL-1, INV-LL-2, INV-LL-3 and INV-LL-4 (lease liveness, expiry, TTL clamp, renewal). */
class LeaseLivenessTest {

    private static final double MIN = SpecConstants.MINIMUM_TTL_SECONDS;
    private static final double MAX = SpecConstants.MAXIMUM_TTL_SECONDS;

    // ---- INV-LL-1 ---------------------------------------------------------------------------

    @Test
    void leaseIsClaimTimePlusEffectiveTtl() {
        var h = with(ttl(300));
        assertThat(h.grant(claimIn("A", "T1", "wt"), 1000).leaseExpiresAt()).isEqualTo(1300.0);
    }

    @Test
    void expiryExactlyAtNowIsNotLive() {
        var h = fresh();
        h.grant(claimTtl("A", "T1", 100.0), 0);
        assertThat(h.live("T1", 99.999)).isPresent();
        h.deny(claimTtl("B", "T1", 100.0), 99.999, Refusal.LEASE_LIVE);
        assertThat(h.live("T1", 100)).isEmpty();
        assertThat(h.grant(claimTtl("B", "T1", 100.0), 100).owner()).isEqualTo("B");
    }

    @Test
    void everyLiveLeaseIsInTheFuture() {
        var h = with(ttl(1000));
        Random random = new Random(11);
        for (int step = 0; step < 1500; step++) {
            String agent = "A" + random.nextInt(3);
            String task = "T" + random.nextInt(4);
            double ttlSeconds = 30 + random.nextInt(200);
            if (random.nextBoolean()) {
                h.run(claimTtl(agent, task, ttlSeconds), step);
            } else {
                h.run(release(agent, task), step);
            }
            for (Claim c : h.registry.snapshot(step)) {
                assertThat(c.leaseExpiresAt()).isGreaterThan(step);
            }
        }
    }

    // ---- INV-LL-2 ---------------------------------------------------------------------------

    @Test
    void renewalLeavesAStaleIndexEntryThatDoesNotExpireTheNewLease() {
        var h = fresh();
        Claim first = h.grant(claimTtl("A", "T1", 100.0), 0);
        Claim renewed = h.grant(claimTtl("A", "T1", 100.0), 50);
        assertThat(first.epoch()).isEqualTo(1);
        assertThat(renewed.epoch()).isEqualTo(2);
        assertThat(renewed.leaseExpiresAt()).isEqualTo(150.0);
        Claim at120 = h.owned("T1", 120);
        assertThat(at120.epoch()).isEqualTo(2);
        assertThat(h.live("T1", 150)).isEmpty();
    }

    @Test
    void releasedTaskLeavesNoTraceAfterItsOldExpiry() {
        var h = fresh();
        h.grant(claimTtl("A", "T1", 100.0), 0);
        h.grant(release("A", "T1"), 1);
        assertThat(h.registry.snapshot(10_000)).isEmpty();
        assertThat(h.registry.retainedCheckpoint("T1")).isEmpty();
    }

    @Test
    void manyRenewalsKeepOneClaimAndAFarReadExpiresIt() {
        var h = fresh();
        for (int i = 0; i < 40; i++) {
            h.grant(claimTtl("A", "T1", 100.0), i);
        }
        assertThat(h.registry.snapshot(40)).hasSize(1);
        assertThat(h.registry.charged("A")).isEqualTo(1);
        assertThat(h.registry.snapshot(1e7)).isEmpty();
        assertThat(h.registry.charged("A")).isZero();
    }

    @Test
    void everyDueLeaseExpiresAtOnce() {
        var h = fresh();
        for (int i = 0; i < 30; i++) {
            h.grant(claimTtl("agent" + i, "T" + i, 100.0), 0);
        }
        assertThat(h.registry.snapshot(200)).isEmpty();
        assertThat(h.registry.liveCount()).isZero();
    }

    @Test
    void afterExpiryTheFormerOwnerSeesNoClaim() {
        var h = fresh();
        h.grant(claimTtl("A", "T1", 60.0), 1000);
        h.grant(checkpoint("A", "T1", "cursor=1"), 1001);
        h.deny(release("A", "T1"), 1060, Refusal.NOT_CLAIMED);
        h.deny(checkpoint("A", "T1", "x"), 1060, Refusal.NOT_FOUND);
        h.deny(update("A", "T1", "working"), 1060, Refusal.NOT_FOUND);
        h.deny(handoff("A", "T1", "B"), 1060, Refusal.NOT_CLAIMED);
        assertThat(h.registry.retainedCheckpoint("T1")).contains("cursor=1");
    }

    // ---- INV-LL-3 ---------------------------------------------------------------------------

    @ParameterizedTest(name = "requested {0} -> {1}")
    @CsvSource({
            "1, 30", "29.999, 30", "30, 30", "30.001, 30.001", "120, 120", "0, 30", "-5, 30",
            "2592000, 2592000", "2592000.5, 2592000", "1e15, 2592000", "1.7976931348623157E308, 2592000"})
    void requestedTtlIsClampedIntoTheWindow(double requested, double expected) {
        var h = with(ttl(300));
        Claim c = h.grant(claimTtl("A", "T1", requested), 1000);
        assertThat(c.leaseExpiresAt()).isEqualTo(1000 + expected);
    }

    @Test
    void nonFiniteOrAbsentTtlFallsBackToTheDefault() {
        for (Double bad : new Double[] {Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NaN, null}) {
            var h = with(ttl(300));
            assertThat(h.grant(claimTtl("A", "T1", bad), 1000).leaseExpiresAt()).as("%s", bad).isEqualTo(1300.0);
        }
        assertThat(with(ttl(100)).grant(claimTtl("A", "T1", Double.NaN), 0).leaseExpiresAt()).isEqualTo(100.0);
    }

    @Test
    void theDefaultItselfIsClamped() {
        assertThat(with(ttl(1e15)).grant(claimTtl("A", "T1", null), 0).leaseExpiresAt()).isEqualTo(MAX);
        assertThat(with(ttl(1)).grant(claimTtl("A", "T1", null), 0).leaseExpiresAt()).isEqualTo(MIN);
        assertThat(with(ttl(Double.POSITIVE_INFINITY)).registry.limits()).isEqualTo(RegistryLimits.DEFAULTS);
        assertThat(with(ttl(Double.NaN)).grant(claimTtl("A", "T1", Double.NEGATIVE_INFINITY), 0).leaseExpiresAt())
                .isEqualTo(SpecConstants.DEFAULT_LEASE_TTL_SECONDS);
    }

    @Test
    void handoffLeaseUsesTheClampedDefault() {
        var h = with(ttl(1));
        h.grant(claimTtl("A", "T1", 1000.0), 0);
        assertThat(h.grant(handoff("A", "T1", "B"), 10).leaseExpiresAt()).isEqualTo(10 + MIN);
    }

    // ---- INV-LL-4 ---------------------------------------------------------------------------

    @Test
    void renewalExtendsTheLeaseWithAFreshEpochAndOneRecord() {
        var h = with(ttl(300));
        Claim first = h.grant(claimIn("A", "T1", "wt"), 1000);
        Claim renewed = h.grant(claimIn("A", "T1", "wt"), 1050);
        assertThat(renewed.leaseExpiresAt()).isGreaterThan(first.leaseExpiresAt());
        assertThat(renewed.epoch()).isGreaterThan(first.epoch());
        assertThat(renewed.owner()).isEqualTo("A");
        assertThat(h.registry.snapshot(1050)).containsExactly(renewed);
        assertThat(h.registry.charged("A")).isEqualTo(1);
    }

    @Test
    void renewalWithAShorterTtlShortensTheLease() {
        var h = fresh();
        h.grant(new ClaimCommand("A", "A", "T1", null, 1000.0, "wt", List.of(), null), 0);
        assertThat(h.grant(new ClaimCommand("A", "A", "T1", null, 30.0, "wt", List.of(), null), 10).leaseExpiresAt())
                .isEqualTo(40.0);
        assertThat(h.live("T1", 40)).isEmpty();
    }
}
