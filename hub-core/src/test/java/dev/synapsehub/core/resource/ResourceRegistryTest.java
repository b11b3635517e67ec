package dev.synapsehub.core.resource;

import dev.synapsehub.core.undo.UndoLog;
import dev.synapsehub.core.SpecConstants;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ResourceOfferCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.Durability;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.reply.ResourceOfferReply;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ResourceRegistryTest {
    private final List<CoordinationEvent> log = new ArrayList<>();

    private Reply offer(ResourceRegistry r, String agent, String kind, String name, Integer cap, double t) {
        Decision d = r.decide(new ResourceOfferCommand(agent, kind, name, cap, null), t);
        d.events().forEach(r::apply);
        log.addAll(d.events());
        return d.reply();
    }

    @Test
    void offerIsKeyedAndDefaulted() {
        ResourceRegistry r = new ResourceRegistry();
        Reply reply = offer(r, "alice", " gpu ", " a100 ", null, 10);
        ResourceOffer o = ((ResourceOfferReply) reply).offer();
        assertThat(o).isEqualTo(new ResourceOffer("alice", "gpu", "a100", 1, "{}", 10));
        assertThat(o.key()).isEqualTo("alice:gpu:a100");
        assertThat(((ResourceOfferReply) reply).refreshed()).isFalse();
        assertThat(log.get(0).kind()).isEqualTo("resource");
        assertThat(log.get(0).durability()).isEqualTo(Durability.NORMAL);
        assertThat(((ResourceOfferReply) offer(r, "alice", "gpu", "a100", -5, 20)).refreshed()).isTrue();
        assertThat(r.snapshot(20)).containsExactly(new ResourceOffer("alice", "gpu", "a100", 1, "{}", 20));
    }

    @Test
    void kindAndNameAreRequired() {
        ResourceRegistry r = new ResourceRegistry();
        assertThat(((Reply.Denied) offer(r, "a", " ", "n", 1, 1)).refusal()).isEqualTo(Refusal.KIND_REQUIRED);
        assertThat(((Reply.Denied) offer(r, "a", "k", null, 1, 1)).refusal()).isEqualTo(Refusal.NAME_REQUIRED);
        assertThat(log).isEmpty();
    }

    @Test
    void quotaRefusesNewOffersButAllowsRefreshAtTheCap() {
        ResourceRegistry r = new ResourceRegistry();
        for (int i = 0; i < 64; i++) {
            assertThat(offer(r, "a", "k", "n" + i, 2, 1).granted()).isTrue();
        }
        assertThat(((Reply.Denied) offer(r, "a", "k", "n64", 1, 2)).refusal()).isEqualTo(Refusal.QUOTA_EXCEEDED);
        assertThat(offer(r, "a", "k", "n3", 5, 2).granted()).isTrue();
        assertThat(offer(r, "b", "k", "n64", 1, 2).granted()).isTrue();
        assertThat(r.offersBy("a")).isEqualTo(64);
    }

    @Test
    void offersExpireWithoutRefreshAndFreeQuota() {
        ResourceRegistry r = new ResourceRegistry(new ResourceLimits(1, SpecConstants.DEFAULT_RESOURCE_TTL_SECONDS));
        offer(r, "a", "k", "x", 1, 0);
        offer(r, "a", "k", "x", 1, 200);
        assertThat(r.snapshot(499.9)).hasSize(1);
        assertThat(r.snapshot(500)).isEmpty();
        assertThat(r.offersBy("a")).isZero();
        assertThat(offer(r, "a", "k", "y", 1, 501).granted()).isTrue();
    }

    @Test
    void replayYieldsTheSameOffersAndExpiry() {
        ResourceRegistry live = new ResourceRegistry(new ResourceLimits(3, 50));
        for (int i = 0; i < 200; i++) {
            offer(live, "agent" + (i % 4), "k", "n" + (i % 5), i % 3, i * 7);
        }
        ResourceRegistry replayed = new ResourceRegistry(new ResourceLimits(3, 50));
        log.forEach(replayed::apply);
        assertThat(replayed.snapshot(1400)).isEqualTo(live.snapshot(1400));
        for (int a = 0; a < 4; a++) {
            assertThat(replayed.offersBy("agent" + a)).isEqualTo(live.offersBy("agent" + a)).isLessThanOrEqualTo(3);
        }
    }

    @Test
    void rollbackRestoresExactly() {
        UndoLog undo = new UndoLog();
        ResourceRegistry r = new ResourceRegistry(ResourceLimits.DEFAULTS, undo);
        offer(r, "a", "k", "x", 1, 0);
        List<ResourceOffer> before = r.snapshot(0);
        undo.begin();
        offer(r, "a", "k", "x", 9, 1);
        offer(r, "a", "k", "y", 1, 1);
        undo.rollback();
        assertThat(r.snapshot(1)).isEqualTo(before);
        assertThat(r.offersBy("a")).isEqualTo(1);
        assertThat(r.snapshot(300)).isEmpty();
    }
}
