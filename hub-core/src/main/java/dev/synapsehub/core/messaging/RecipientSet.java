package dev.synapsehub.core.messaging;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Who a chat's target matched among the online connections (§8.1): by logical name, sidecars
 * folded into their owner (roles merged) unless the owner is the sender; the sender excluded.
 *
 * @param matched logical recipients the target addresses, sorted
 * @param live matched recipients that are consume-live, sorted
 * @param stale matched recipients that are not, sorted
 * @param wakeCapabilities logical recipient to declared wake capability (first non-unknown wins)
 */
public record RecipientSet(List<String> matched, List<String> live, List<String> stale,
        Map<String, String> wakeCapabilities) {
    public RecipientSet {
        matched = List.copyOf(matched);
        live = List.copyOf(live);
        stale = List.copyOf(stale);
        wakeCapabilities = java.util.Collections.unmodifiableMap(new TreeMap<>(wakeCapabilities));
    }

    private static final class Logical {
        final Set<String> names = new LinkedHashSet<>();
        final Set<String> roles = new LinkedHashSet<>();
        boolean live;
        String wake = "unknown";
    }

    /** Resolves {@code target} sent by {@code sender} against the online connections. */
    public static RecipientSet resolve(String target, String sender, List<OnlineAgent> online) {
        Map<String, Logical> byLogical = new TreeMap<>();
        for (OnlineAgent agent : online) {
            if (agent.name().equals(sender)) {
                continue;
            }
            String logical = AddressMatcher.logicalName(agent.name());
            if (logical.equals(sender)) {
                continue; // the sender's own sidecar is not a recipient
            }
            Logical l = byLogical.computeIfAbsent(logical, k -> new Logical());
            l.names.add(agent.name());
            l.roles.addAll(agent.roles());
            l.live |= agent.live();
            if ("unknown".equals(l.wake)) {
                l.wake = agent.wakeCapability();
            }
        }
        List<String> matched = new ArrayList<>();
        List<String> live = new ArrayList<>();
        List<String> stale = new ArrayList<>();
        Map<String, String> wake = new TreeMap<>();
        for (Map.Entry<String, Logical> e : byLogical.entrySet()) {
            String logical = e.getKey();
            Logical l = e.getValue();
            boolean hit = AddressMatcher.addresses(target, logical, l.roles);
            for (String name : l.names) {
                hit |= AddressMatcher.addresses(target, name, List.of());
            }
            if (hit) {
                matched.add(logical);
                (l.live ? live : stale).add(logical);
                wake.put(logical, l.wake);
            }
        }
        return new RecipientSet(matched, live, stale, wake);
    }
}
