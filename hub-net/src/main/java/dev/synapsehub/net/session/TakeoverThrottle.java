package dev.synapsehub.net.session;

import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Takeover throttling (contract §3.2, close 4014) per name: a cooldown after each takeover, and
 * a quarantine once too many came within a window. Remembers at most
 * {@link SessionRegistry#MAX_REMEMBERED_NAMES} names (the least recently added forgotten first).
 * Consulted only while the registry binds, under its name lock.
 */
final class TakeoverThrottle {
    private final SessionRegistry.TakeoverPolicy policy;
    /** Per name, the times of its recent takeovers (at most the quarantine threshold kept). */
    private final LinkedHashMap<String, ArrayDeque<Double>> takeovers = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, ArrayDeque<Double>> eldest) {
            return size() > SessionRegistry.MAX_REMEMBERED_NAMES;
        }
    };
    /** Names pinned to their holder, with the end of the pin. */
    private final LinkedHashMap<String, Double> quarantinedUntil = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Double> eldest) {
            return size() > SessionRegistry.MAX_REMEMBERED_NAMES;
        }
    };
    private long quarantinesStarted;

    TakeoverThrottle(SessionRegistry.TakeoverPolicy policy) {
        this.policy = policy;
    }

    /** Null when a takeover of {@code name} may proceed now (and records it), else the refusal. */
    synchronized SessionRegistry.Bind.Kind admit(String name, double now) {
        Double pinnedUntil = quarantinedUntil.get(name);
        if (pinnedUntil != null) {
            if (pinnedUntil > now) {
                return SessionRegistry.Bind.Kind.TAKEOVER_QUARANTINE;
            }
            quarantinedUntil.remove(name);
        }
        ArrayDeque<Double> times = takeovers.computeIfAbsent(name, k -> new ArrayDeque<>());
        while (!times.isEmpty() && times.peekFirst() <= now - policy.windowSeconds()) {
            times.removeFirst();
        }
        if (!times.isEmpty() && now - times.peekLast() < policy.cooldownSeconds()) {
            return SessionRegistry.Bind.Kind.TAKEOVER_COOLDOWN;
        }
        times.addLast(now);
        if (times.size() >= policy.threshold()) {
            quarantinedUntil.put(name, now + policy.quarantineSeconds());
            quarantinesStarted++;
            times.clear();
        }
        return null;
    }

    /** Quarantines started since the hub started. */
    synchronized long quarantinesStarted() {
        return quarantinesStarted;
    }
}
