package dev.synapsehub.net.protocol;

import dev.synapsehub.core.messaging.AddressMatcher;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The identities a {@code who_snapshot} lists in {@code mailbox_pending} besides those with
 * pending mail (contract A11 M1): the logical identity of every connection online at a
 * {@code who_request}, kept after it disconnects, at most {@link #CAPACITY}, least recently
 * touched evicted first. In memory only: a restart forgets them, as the contract says.
 */
final class KnownIdentities {
    static final int CAPACITY = 512;

    private final LinkedHashMap<String, Boolean> lru = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > CAPACITY;
        }
    };

    /** Touches the logical identity of each online connection ({@code X-rx}, {@code X-pane-rx} count as {@code X}). */
    synchronized void touchOnline(Collection<String> online) {
        for (String name : online) {
            lru.put(AddressMatcher.logicalName(name), Boolean.TRUE);
        }
    }

    /** {@code pending} plus every known identity without pending mail at 0, sorted. */
    synchronized Map<String, Integer> withZeros(Map<String, Integer> pending) {
        Map<String, Integer> out = new TreeMap<>(pending);
        for (String identity : lru.keySet()) {
            out.putIfAbsent(identity, 0);
        }
        return out;
    }
}
