package dev.synapsehub.core.claim;

import dev.synapsehub.core.SpecConstants;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A claim that keeps a held claim ({@link ClaimCommand#keepingHeld()}, an unkeyed retry of a
 * forwarded claim): the claimant's live claim under the same principal is answered as it stands
 * in the same decision, with no event; anything else is decided as a plain claim.
 */
class KeepHeldClaimTest {
    private final ClaimRegistry registry = new ClaimRegistry();

    private Decision run(ClaimCommand command, double t) {
        Decision d = registry.decide(command, t);
        for (CoordinationEvent e : d.events()) {
            registry.apply(e);
        }
        return d;
    }

    private static ClaimCommand claim(String agent, String principal, String task) {
        return new ClaimCommand(agent, principal, task, null, 600.0, "wt", List.of("src/" + task), null);
    }

    private Claim granted(ClaimCommand command, double t) {
        Decision d = run(command, t);
        assertThat(d.reply()).isInstanceOf(Reply.Granted.class);
        return ((Reply.Granted) d.reply()).claim();
    }

    @Test
    void aClaimHeldBySameAgentAndPrincipalIsAnsweredAsItStandsWithNoEvent() {
        Claim first = granted(claim("peer/a", "peer:hub-b", "T1"), 10);

        Decision retry = run(claim("peer/a", "peer:hub-b", "T1").keepingHeld(), 20);

        assertThat(retry.events()).isEmpty();
        assertThat(retry.reply()).isInstanceOf(Reply.AlreadyHeld.class);
        Reply.AlreadyHeld held = (Reply.AlreadyHeld) retry.reply();
        assertThat(held.claim()).isEqualTo(first);
        assertThat(held.claim().epoch()).isEqualTo(first.epoch());
        assertThat(held.claim().leaseExpiresAt()).isEqualTo(first.leaseExpiresAt());
        assertThat(held.message()).isEqualTo("Task 'T1' already claimed by peer/a.");
        assertThat(held.granted()).isTrue();
        assertThat(registry.liveClaim("T1", 20)).contains(first);
        assertThat(registry.charged("peer:hub-b")).isEqualTo(1);
    }

    @Test
    void withoutTheFlagTheSameRetryRenews() {
        Claim first = granted(claim("peer/a", "peer:hub-b", "T1"), 10);

        Claim renewed = granted(claim("peer/a", "peer:hub-b", "T1"), 20);

        assertThat(renewed.epoch()).isGreaterThan(first.epoch());
        assertThat(renewed.leaseExpiresAt()).isGreaterThan(first.leaseExpiresAt());
    }

    @Test
    void heldBySameAgentUnderAnotherPrincipalIsDecidedAsToday() {
        Claim first = granted(claim("peer/a", "peer/a", "T1"), 10);

        Decision d = run(claim("peer/a", "peer:hub-b", "T1").keepingHeld(), 20);

        assertThat(d.reply()).isInstanceOf(Reply.Granted.class);
        Claim renewed = ((Reply.Granted) d.reply()).claim();
        assertThat(renewed.epoch()).isGreaterThan(first.epoch());
        assertThat(renewed.principal()).isEqualTo("peer:hub-b");
        assertThat(((Reply.Granted) d.reply()).message()).isEqualTo("Task 'T1' renewed by peer/a.");
        assertThat(d.events()).singleElement().isInstanceOf(ClaimSnapshotEvent.class);
    }

    @Test
    void aNullPrincipalResolvesToTheAgentAsTheDecisionDoes() {
        Claim first = granted(claim("peer/a", null, "T1"), 10);

        Decision d = run(claim("peer/a", "", "T1").keepingHeld(), 20);

        assertThat(d.reply()).isEqualTo(new Reply.AlreadyHeld(first, "Task 'T1' already claimed by peer/a."));
        assertThat(d.events()).isEmpty();
    }

    @Test
    void heldByAnotherAgentIsRefusedLeaseLive() {
        granted(claim("peer/b", "peer:hub-b", "T1"), 10);

        Decision d = run(claim("peer/a", "peer:hub-b", "T1").keepingHeld(), 20);

        assertThat(d.reply()).isInstanceOf(Reply.Denied.class);
        assertThat(((Reply.Denied) d.reply()).refusal()).isEqualTo(Refusal.LEASE_LIVE);
        assertThat(((Reply.Denied) d.reply()).holder()).isEqualTo("peer/b");
    }

    @Test
    void notHeldIsGrantedAsAPlainClaim() {
        Decision d = run(claim("peer/a", "peer:hub-b", "T1").keepingHeld(), 10);

        assertThat(d.reply()).isInstanceOf(Reply.Granted.class);
        assertThat(((Reply.Granted) d.reply()).message()).isEqualTo("Task 'T1' claimed by peer/a.");
        assertThat(d.events()).singleElement().isInstanceOf(ClaimSnapshotEvent.class);
        assertThat(registry.liveClaim("T1", 10)).isPresent();
    }

    @Test
    void anExpiredClaimIsNotHeld() {
        double ttl = SpecConstants.MINIMUM_TTL_SECONDS;
        Claim first = granted(new ClaimCommand("peer/a", "peer:hub-b", "T1", null, ttl, "wt", List.of(), null), 10);

        Decision d = run(claim("peer/a", "peer:hub-b", "T1").keepingHeld(), 10 + ttl + 1);

        assertThat(d.reply()).isInstanceOf(Reply.Granted.class);
        assertThat(((Reply.Granted) d.reply()).claim().epoch()).isGreaterThan(first.epoch());
    }
}
