package dev.synapsehub.core.messaging;

import dev.synapsehub.core.undo.UndoLog;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * A bounded map ordered by last write, evicting the least recently written entry. Every change
 * records its exact undo (including order) in the shared {@link UndoLog}.
 */
final class StampedLru<K, V> {
    private record Slot<V>(V value, long stamp) {
    }

    private final int capacity;
    private final UndoLog undo;
    private final Map<K, Slot<V>> slots = new HashMap<>();
    private final TreeMap<Long, K> order = new TreeMap<>();
    private long clock;

    StampedLru(int capacity, UndoLog undo) {
        this.capacity = capacity;
        this.undo = undo;
    }

    V get(K key) {
        Slot<V> slot = slots.get(key);
        return slot == null ? null : slot.value();
    }

    boolean containsKey(K key) {
        return slots.containsKey(key);
    }

    /** Writes {@code value} under {@code key} as the most recent entry, evicting the eldest beyond capacity. */
    void put(K key, V value) {
        Slot<V> previous = slots.get(key);
        if (previous != null) {
            order.remove(previous.stamp());
        }
        long stamp = ++clock;
        slots.put(key, new Slot<>(value, stamp));
        order.put(stamp, key);
        undo.record(() -> {
            slots.remove(key);
            order.remove(stamp);
            if (previous != null) {
                restore(key, previous);
            }
        });
        while (slots.size() > capacity) {
            remove(order.firstEntry().getValue());
        }
    }

    /** Removes {@code key}, recording its restoration at its original position. */
    V remove(K key) {
        Slot<V> slot = slots.remove(key);
        if (slot == null) {
            return null;
        }
        order.remove(slot.stamp());
        undo.record(() -> restore(key, slot));
        return slot.value();
    }

    private void restore(K key, Slot<V> slot) {
        slots.put(key, slot);
        order.put(slot.stamp(), key);
    }

    /** The least recently written key, or null. */
    K eldest() {
        Map.Entry<Long, K> first = order.firstEntry();
        return first == null ? null : first.getValue();
    }

    int size() {
        return slots.size();
    }

    /** Entries from least to most recently written. */
    Map<K, V> view() {
        Map<K, V> out = new java.util.LinkedHashMap<>();
        for (K key : order.values()) {
            out.put(key, slots.get(key).value());
        }
        return out;
    }
}
