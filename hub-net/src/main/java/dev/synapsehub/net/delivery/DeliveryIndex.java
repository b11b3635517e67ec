package dev.synapsehub.net.delivery;

import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The scoped subscribers of a hub, indexed so that a claim change finds the subscribers that
 * want it without looking at the others: worktrees in a hash map, task id prefixes in a hash
 * map probed once per distinct prefix length, path prefixes in a {@link PathTrie}. Subscribers
 * in broadcast mode are not kept here (they take every broadcast). Single-threaded: the hub's
 * outbox thread owns it.
 *
 * @param <K> the subscriber (a connection in the hub, a name in tests)
 */
public final class DeliveryIndex<K> {
    private final Map<K, Delivery> declared = new HashMap<>();
    private final Map<String, Set<K>> byWorktree = new HashMap<>();
    private final Map<String, Set<K>> byTaskPrefix = new HashMap<>();
    /** Distinct task prefix lengths in use, with how many prefixes have each. */
    private final TreeMap<Integer, Integer> prefixLengths = new TreeMap<>();
    private final PathTrie<K> byPath = new PathTrie<>();

    /** Records {@code key}'s declaration, replacing any earlier one; a broadcast one just removes it. */
    public void put(K key, Delivery delivery) {
        remove(key);
        if (!delivery.scoped()) {
            return;
        }
        declared.put(key, delivery);
        for (String w : delivery.worktrees()) {
            byWorktree.computeIfAbsent(w, x -> new LinkedHashSet<>(2)).add(key);
        }
        for (String p : delivery.taskPrefixes()) {
            if (byTaskPrefix.computeIfAbsent(p, x -> new LinkedHashSet<>(2)).add(key)
                    && byTaskPrefix.get(p).size() == 1) {
                prefixLengths.merge(p.length(), 1, Integer::sum);
            }
        }
        for (String p : delivery.pathPrefixes()) {
            byPath.add(p, key);
        }
    }

    /** Forgets {@code key}. */
    public void remove(K key) {
        Delivery old = declared.remove(key);
        if (old == null) {
            return;
        }
        for (String w : old.worktrees()) {
            removeFrom(byWorktree, w, key);
        }
        for (String p : old.taskPrefixes()) {
            if (removeFrom(byTaskPrefix, p, key)) {
                prefixLengths.merge(p.length(), -1, (a, b) -> a + b == 0 ? null : a + b);
            }
        }
        for (String p : old.pathPrefixes()) {
            byPath.remove(p, key);
        }
    }

    /** {@code key}'s scoped declaration, or null when it has none here. */
    public Delivery get(K key) {
        return declared.get(key);
    }

    /** Scoped subscribers. */
    public int size() {
        return declared.size();
    }

    /**
     * Adds to {@code out} every subscriber whose declaration matches a change of {@code taskId}
     * in {@code worktree} over {@code paths} (normalised; empty or {@code [""]}: the whole
     * worktree, which every path prefix touches).
     */
    public void match(String taskId, String worktree, List<String> paths, Collection<K> out) {
        matchWorktree(worktree, out);
        for (Map.Entry<Integer, Integer> length : prefixLengths.headMap(taskId.length(), true).entrySet()) {
            Set<K> keys = byTaskPrefix.get(taskId.substring(0, length.getKey()));
            if (keys != null) {
                out.addAll(keys);
            }
        }
        if (byPath.isEmpty()) {
            return;
        }
        if (paths.isEmpty() || paths.contains("")) {
            byPath.all(out);
            return;
        }
        for (String path : paths) {
            byPath.overlapping(path, out);
        }
    }

    /** Adds to {@code out} every subscriber to {@code worktree}. */
    public void matchWorktree(String worktree, Collection<K> out) {
        Set<K> keys = byWorktree.get(worktree);
        if (keys != null) {
            out.addAll(keys);
        }
    }

    private static <K> boolean removeFrom(Map<String, Set<K>> map, String key, K value) {
        Set<K> set = map.get(key);
        if (set == null || !set.remove(value)) {
            return false;
        }
        if (set.isEmpty()) {
            map.remove(key);
            return true;
        }
        return false;
    }
}
