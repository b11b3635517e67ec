package dev.synapsehub.net.session;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * When each name that is not bound now was last seen, bounded (the least recently seen name is
 * forgotten first). A bound name's time lives on its {@link Session}, written by its own frames
 * without a shared lock; it moves here when the name leaves and back when it binds again.
 */
final class SeenNames {
    private final LinkedHashMap<String, Double> offline;

    SeenNames(int capacity) {
        this.offline = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Double> eldest) {
                return size() > capacity;
            }
        };
    }

    /** {@code name} left, last seen at {@code at} (NaN: never seen, nothing to remember). */
    synchronized void left(String name, double at) {
        offline.remove(name);
        if (!Double.isNaN(at)) {
            offline.put(name, at);
        }
    }

    /** {@code name} is bound again: its session holds the time from now on. */
    synchronized void bound(String name) {
        offline.remove(name);
    }

    /** Copies every remembered offline name into {@code into} (existing keys are kept). */
    synchronized void copyInto(Map<String, Double> into) {
        offline.forEach(into::putIfAbsent);
    }

    /** Names remembered. */
    synchronized int size() {
        return offline.size();
    }
}
