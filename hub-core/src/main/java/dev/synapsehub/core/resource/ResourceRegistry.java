package dev.synapsehub.core.resource;

import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ResourceOfferCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.ResourceOfferedEvent;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.reply.ResourceOfferReply;
import dev.synapsehub.core.state.StateImage;
import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;

/**
 * Resource offers keyed {@code agent:kind:name}, capped per agent and expired lazily after
 * {@link ResourceLimits#ttlSeconds()} without a refresh (silently, like leases). Expiry runs
 * before every decision and read and inside {@link #apply} at the event's time, so replay
 * rebuilds exactly the live view; being a function of time it is not undone by rollback.
 */
public final class ResourceRegistry {
    private record Due(double expiresAt, String key, double offeredAt) {
    }

    private final ResourceLimits limits;
    private final UndoLog undo;
    private final Map<String, ResourceOffer> offers = new HashMap<>();
    private final Map<String, Integer> perAgent = new HashMap<>();
    private final PriorityQueue<Due> expiry = new PriorityQueue<>(Comparator.comparingDouble(Due::expiresAt));
    private double now = Double.NEGATIVE_INFINITY;

    /** A registry with the given bounds, recording its changes in {@code undo}. */
    public ResourceRegistry(ResourceLimits limits, UndoLog undo) {
        this.limits = limits;
        this.undo = undo;
    }

    /** A registry with the given bounds and an undo log of its own. */
    public ResourceRegistry(ResourceLimits limits) {
        this(limits, new UndoLog());
    }

    /** A registry with the default bounds. */
    public ResourceRegistry() {
        this(ResourceLimits.DEFAULTS);
    }

    /** Decides an offer at {@code at}; expires what is due first, changes nothing else. */
    public Decision decide(ResourceOfferCommand c, double at) {
        double t = advanceTo(at);
        String kind = strip(c.kind());
        String name = strip(c.name());
        if (kind.isEmpty()) {
            return denied(Refusal.KIND_REQUIRED, "A resource offer needs a kind.");
        }
        if (name.isEmpty()) {
            return denied(Refusal.NAME_REQUIRED, "A resource offer needs a name.");
        }
        String key = ResourceOffer.key(c.agent(), kind, name);
        boolean refresh = offers.containsKey(key);
        if (!refresh && perAgent.getOrDefault(c.agent(), 0) >= limits.maxOffersPerAgent()) {
            return denied(Refusal.QUOTA_EXCEEDED, "Resource offer quota exceeded: maximum "
                    + limits.maxOffersPerAgent() + " offers per agent.");
        }
        int capacity = c.capacity() == null ? 1 : c.capacity();
        ResourceOffer offer = new ResourceOffer(c.agent(), kind, name, capacity, c.meta(), t);
        return new Decision(new ResourceOfferReply(offer, refresh), List.of(new ResourceOfferedEvent(t, offer)));
    }

    private static Decision denied(Refusal refusal, String message) {
        return new Decision(new Reply.Denied("", refusal, message), List.of());
    }

    private static String strip(String s) {
        return s == null ? "" : PythonWhitespace.strip(s);
    }

    /** Applies one event: the only way offers change. Events of other families are ignored. */
    public void apply(CoordinationEvent event) {
        if (event instanceof ResourceOfferedEvent e) {
            advanceTo(e.ts());
            ResourceOffer offer = e.offer();
            ResourceOffer previous = put(offer);
            undo.record(() -> {
                remove(offer.key());
                if (previous != null) {
                    put(previous);
                }
            });
        }
    }

    private ResourceOffer put(ResourceOffer offer) {
        ResourceOffer previous = offers.put(offer.key(), offer);
        if (previous == null) {
            perAgent.merge(offer.agent(), 1, Integer::sum);
        }
        expiry.add(new Due(offer.offeredAt() + limits.ttlSeconds(), offer.key(), offer.offeredAt()));
        if (expiry.size() > 2 * offers.size() + 16) {
            expiry.clear();
            for (ResourceOffer o : offers.values()) {
                expiry.add(new Due(o.offeredAt() + limits.ttlSeconds(), o.key(), o.offeredAt()));
            }
        }
        return previous;
    }

    private void remove(String key) {
        ResourceOffer removed = offers.remove(key);
        if (removed != null) {
            perAgent.merge(removed.agent(), -1, (a, b) -> a + b == 0 ? null : a + b);
        }
    }

    /**
     * Advances the clock (never backwards) and drops every offer not refreshed within the TTL.
     *
     * @return the registry's time after the call
     */
    public double advanceTo(double at) {
        if (at > now) {
            now = at;
        }
        for (Due head = expiry.peek(); head != null && head.expiresAt() <= now; head = expiry.peek()) {
            expiry.poll();
            ResourceOffer offer = offers.get(head.key());
            if (offer != null && offer.offeredAt() == head.offeredAt()
                    && offer.offeredAt() + limits.ttlSeconds() <= now) {
                remove(head.key());
            }
        }
        return now;
    }

    /** The clock and every offer held (sorted like {@link #snapshot}), as data; expires nothing. */
    public StateImage.Resources image() {
        List<ResourceOffer> list = new ArrayList<>(offers.values());
        list.sort(Comparator.comparing(ResourceOffer::agent).thenComparing(ResourceOffer::kind)
                .thenComparing(ResourceOffer::name));
        return new StateImage.Resources(now, list);
    }

    /** Loads an image into this empty registry; nothing expires until the clock next advances. */
    public void restore(StateImage.Resources image) {
        if (!offers.isEmpty()) {
            throw new IllegalStateException("restore needs an empty registry");
        }
        for (ResourceOffer offer : image.offers()) {
            put(offer);
        }
        now = image.now();
    }

    /** Live offers at {@code at}, sorted by (agent, kind, name), as {@code state_snapshot.resources}. */
    public List<ResourceOffer> snapshot(double at) {
        advanceTo(at);
        List<ResourceOffer> list = new ArrayList<>(offers.values());
        list.sort(Comparator.comparing(ResourceOffer::agent).thenComparing(ResourceOffer::kind)
                .thenComparing(ResourceOffer::name));
        return list;
    }

    /** How many offers are live at {@code at} (no copy, no sort: {@code /metrics} reads it). */
    public int liveCount(double at) {
        advanceTo(at);
        return offers.size();
    }

    /** The live offer under {@code key} at {@code at}. */
    public Optional<ResourceOffer> offer(String key, double at) {
        advanceTo(at);
        return Optional.ofNullable(offers.get(key));
    }

    /** Live offers held by {@code agent} (as of the last expiry). */
    public int offersBy(String agent) {
        return perAgent.getOrDefault(agent, 0);
    }

    /** The bounds in force. */
    public ResourceLimits limits() {
        return limits;
    }
}
