package dev.synapsehub.net.session;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Advisory wait edges waiter → task, for bound waiters only: an edge is added only while its
 * waiter is bound (checked under this monitor) and the waiter's edges go when it leaves.
 */
final class WaitGraph {
    private final Map<String, Set<String>> waits = new HashMap<>();
    private final Predicate<String> bound;

    WaitGraph(Predicate<String> bound) {
        this.bound = bound;
    }

    synchronized void add(String waiter, String taskId) {
        if (bound.test(waiter)) {
            waits.computeIfAbsent(waiter, k -> new LinkedHashSet<>()).add(taskId);
        }
    }

    synchronized void clear(String waiter, String taskId) {
        Set<String> tasks = waits.get(waiter);
        if (tasks != null) {
            tasks.remove(taskId);
            if (tasks.isEmpty()) {
                waits.remove(waiter);
            }
        }
    }

    synchronized void prune(String taskId) {
        waits.values().forEach(s -> s.remove(taskId));
        waits.values().removeIf(Set::isEmpty);
    }

    synchronized void dropWaiter(String waiter) {
        waits.remove(waiter);
    }

    synchronized Map<String, Set<String>> copy() {
        Map<String, Set<String>> copy = new HashMap<>();
        waits.forEach((k, v) -> copy.put(k, Set.copyOf(v)));
        return copy;
    }

    synchronized int waiters() {
        return waits.size();
    }
}
