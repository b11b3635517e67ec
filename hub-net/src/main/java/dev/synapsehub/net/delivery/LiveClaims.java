package dev.synapsehub.net.delivery;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * The live claims as the hub's own publications describe them (grants, renewals, handoffs,
 * releases, in commit order), kept where delivery is decided so that "whose live claim touches
 * this change" is answered without asking the writer. Leases lapse silently, so every answer
 * skips claims whose lease has ended, and a heap sweeps them out. Single-threaded: the hub's
 * outbox thread owns it.
 *
 * <p>Two scopes touch when they share a path (equal, or one a directory of the other) in any
 * worktree (the same files in two checkouts meet at merge time), or when one covers its whole
 * worktree and the other is in that worktree.
 */
public final class LiveClaims {
    /** What is kept of one live claim. */
    public record Held(String taskId, String owner, String worktree, List<String> paths, double expiresAt) {
        public Held {
            paths = List.copyOf(paths);
        }

        boolean wholeWorktree() {
            return paths.isEmpty() || paths.contains("");
        }
    }

    private record Expiry(double at, String taskId) {
    }

    private final Map<String, Held> byTask = new HashMap<>();
    private final Map<String, Set<String>> tasksByOwner = new HashMap<>();
    /** Every claim of a worktree (a whole-worktree change touches them all). */
    private final Map<String, Set<String>> tasksByWorktree = new HashMap<>();
    /** Whole-worktree claims, by worktree. */
    private final Map<String, Set<String>> wholeByWorktree = new HashMap<>();
    /** Path-scoped claims by path, every worktree in one trie. */
    private final PathTrie<String> byPath = new PathTrie<>();
    private final PriorityQueue<Expiry> expiries = new PriorityQueue<>((a, b) -> Double.compare(a.at, b.at));

    /** Records a live claim (a grant, a renewal, a handoff's new owner, an update), replacing its old form. */
    public void put(Held held) {
        remove(held.taskId());
        byTask.put(held.taskId(), held);
        tasksByOwner.computeIfAbsent(held.owner(), o -> new LinkedHashSet<>(2)).add(held.taskId());
        tasksByWorktree.computeIfAbsent(held.worktree(), w -> new LinkedHashSet<>(2)).add(held.taskId());
        if (held.wholeWorktree()) {
            wholeByWorktree.computeIfAbsent(held.worktree(), w -> new LinkedHashSet<>(2)).add(held.taskId());
        } else {
            for (String p : held.paths()) {
                byPath.add(p, held.taskId());
            }
        }
        expiries.add(new Expiry(held.expiresAt(), held.taskId()));
    }

    /** Forgets a claim (released). */
    public void remove(String taskId) {
        Held old = byTask.remove(taskId);
        if (old == null) {
            return;
        }
        removeFrom(tasksByOwner, old.owner(), taskId);
        removeFrom(tasksByWorktree, old.worktree(), taskId);
        if (old.wholeWorktree()) {
            removeFrom(wholeByWorktree, old.worktree(), taskId);
        } else {
            for (String p : old.paths()) {
                byPath.remove(p, taskId);
            }
        }
    }

    /** Forgets every claim whose lease ended by {@code now}. */
    public void expire(double now) {
        while (!expiries.isEmpty() && expiries.peek().at() <= now) {
            Expiry e = expiries.poll();
            Held held = byTask.get(e.taskId());
            if (held != null && held.expiresAt() <= now) {
                remove(e.taskId()); // a renewal left a later expiry of its own in the heap
            }
        }
    }

    /** Live claims. */
    public int size() {
        return byTask.size();
    }

    /** {@code owner}'s claims live at {@code now}. */
    public List<Held> of(String owner, double now) {
        Set<String> tasks = tasksByOwner.get(owner);
        if (tasks == null) {
            return List.of();
        }
        List<Held> out = new ArrayList<>(tasks.size());
        for (String t : tasks) {
            Held h = byTask.get(t);
            if (h.expiresAt() > now) {
                out.add(h);
            }
        }
        return out;
    }

    /** Adds to {@code out} the owners of claims live at {@code now} that touch the scope {@code worktree}/{@code paths}. */
    public void ownersTouching(String worktree, List<String> paths, double now, Collection<String> out) {
        Set<String> tasks = new LinkedHashSet<>();
        if (paths.isEmpty() || paths.contains("")) {
            addAll(tasksByWorktree.get(worktree), tasks);
        } else {
            addAll(wholeByWorktree.get(worktree), tasks);
            for (String p : paths) {
                byPath.overlapping(p, tasks);
            }
        }
        for (String t : tasks) {
            Held h = byTask.get(t);
            if (h != null && h.expiresAt() > now) {
                out.add(h.owner());
            }
        }
    }

    private static void addAll(Set<String> from, Set<String> to) {
        if (from != null) {
            to.addAll(from);
        }
    }

    private static void removeFrom(Map<String, Set<String>> map, String key, String value) {
        Set<String> set = map.get(key);
        if (set != null && set.remove(value) && set.isEmpty()) {
            map.remove(key);
        }
    }
}
