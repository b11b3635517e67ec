package dev.synapsehub.core.scope;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Finds file-scope conflicts (INV-ME-2..4) without scanning every live claim: one trie per
 * worktree over path segments, each node counting the holdings below it by owner.
 *
 * <p>Whether a request conflicts costs O(declared paths × depth). Naming the first conflicting
 * holding in insertion order walks the conflicting subtree, which only happens on refusal.
 */
public final class ScopeIndex {

    /**
     * What the index keeps of a claim.
     *
     * @param order insertion order in the registry; the first conflict reported is the lowest
     */
    public record Holding(String taskId, String owner, long order, Scope scope) {
    }

    private static final class Node {
        final String path;
        final Node parent;
        Map<String, Node> children;
        List<Holding> here;
        int total;
        final Map<String, Integer> byOwner = new HashMap<>(2);

        Node(String path, Node parent) {
            this.path = path;
            this.parent = parent;
        }

        int ownedBy(String owner) {
            return byOwner.getOrDefault(owner, 0);
        }
    }

    private final Map<String, Node> roots = new HashMap<>();

    /** Indexes a holding under each of its declared paths (the root for a whole-worktree scope). */
    public void add(Holding holding) {
        Node root = roots.computeIfAbsent(holding.scope().worktree(), w -> new Node("", null));
        for (String path : anchors(holding.scope())) {
            Node node = root;
            count(node, holding.owner(), 1);
            if (!path.isEmpty()) {
                for (String segment : path.split("/", -1)) {
                    if (node.children == null) {
                        node.children = new HashMap<>(4);
                    }
                    Node parent = node;
                    String childPath = parent.path.isEmpty() ? segment : parent.path + "/" + segment;
                    node = node.children.computeIfAbsent(segment, s -> new Node(childPath, parent));
                    count(node, holding.owner(), 1);
                }
            }
            if (node.here == null) {
                node.here = new ArrayList<>(1);
            }
            node.here.add(holding);
        }
    }

    /** Removes a holding previously added; prunes nodes left empty. */
    public void remove(Holding holding) {
        Node root = roots.get(holding.scope().worktree());
        if (root == null) {
            return;
        }
        for (String path : anchors(holding.scope())) {
            Node node = find(root, path);
            if (node == null || node.here == null || !node.here.remove(holding)) {
                continue;
            }
            for (Node n = node; n != null; n = n.parent) {
                count(n, holding.owner(), -1);
                if (n.total == 0 && n.parent != null) {
                    n.parent.children.remove(lastSegment(n.path));
                }
            }
        }
        if (root.total == 0) {
            roots.remove(holding.scope().worktree());
        }
    }

    /**
     * The first holding (lowest order) whose scope conflicts with {@code request}, skipping the
     * actor's own holdings and {@code exclude} (the task being handed off, or null).
     */
    public Optional<Holding> firstConflict(Scope request, String actor, Holding exclude) {
        Node root = roots.get(request.worktree());
        if (root == null || !conflicts(root, request, actor, exclude)) {
            return Optional.empty();
        }
        List<Holding> candidates = new ArrayList<>();
        if (request.wholeWorktree()) {
            collectSubtree(root, candidates);
        } else {
            for (String path : request.paths()) {
                Node node = root;
                addAll(candidates, node.here);
                for (String segment : path.split("/", -1)) {
                    node = node.children == null ? null : node.children.get(segment);
                    if (node == null) {
                        break;
                    }
                    addAll(candidates, node.here);
                }
                if (node != null) {
                    collectSubtree(node, candidates);
                }
            }
        }
        Holding first = null;
        for (Holding h : candidates) {
            if (contends(h, actor, exclude) && h.scope().conflictsWith(request)
                    && (first == null || h.order() < first.order())) {
                first = h;
            }
        }
        return Optional.ofNullable(first);
    }

    /** Number of worktrees with at least one holding. */
    public int worktreeCount() {
        return roots.size();
    }

    private boolean conflicts(Node root, Scope request, String actor, Holding exclude) {
        String worktree = request.worktree();
        if (request.wholeWorktree()) {
            return others(root, worktree, actor, exclude) > 0;
        }
        for (String path : request.paths()) {
            Node node = root;
            boolean reached = true;
            for (String segment : path.split("/", -1)) {
                if (anyContending(node.here, actor, exclude)) {
                    return true;
                }
                node = node.children == null ? null : node.children.get(segment);
                if (node == null) {
                    reached = false;
                    break;
                }
            }
            if (reached && others(node, worktree, actor, exclude) > 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Holdings in the subtree of {@code node} (in {@code worktree}) that are neither the actor's
     * nor excluded. An excluded holding in another worktree is not counted here, so it must not
     * be subtracted either.
     */
    private static int others(Node node, String worktree, String actor, Holding exclude) {
        int n = node.total - node.ownedBy(actor);
        if (exclude != null && !exclude.owner().equals(actor) && exclude.scope().worktree().equals(worktree)) {
            for (String p : anchors(exclude.scope())) {
                if (node.path.isEmpty() ? true : (p.equals(node.path) || p.startsWith(node.path + "/"))) {
                    n--;
                }
            }
        }
        return n;
    }

    private static boolean anyContending(List<Holding> holdings, String actor, Holding exclude) {
        if (holdings != null) {
            for (Holding h : holdings) {
                if (contends(h, actor, exclude)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean contends(Holding h, String actor, Holding exclude) {
        return !h.owner().equals(actor) && (exclude == null || !h.taskId().equals(exclude.taskId()));
    }

    private static void collectSubtree(Node node, List<Holding> out) {
        addAll(out, node.here);
        if (node.children != null) {
            for (Node child : node.children.values()) {
                collectSubtree(child, out);
            }
        }
    }

    private static void addAll(List<Holding> out, List<Holding> in) {
        if (in != null) {
            out.addAll(in);
        }
    }

    private static Node find(Node root, String path) {
        Node node = root;
        if (path.isEmpty()) {
            return node;
        }
        for (String segment : path.split("/", -1)) {
            node = node.children == null ? null : node.children.get(segment);
            if (node == null) {
                return null;
            }
        }
        return node;
    }

    private static void count(Node node, String owner, int delta) {
        node.total += delta;
        node.byOwner.merge(owner, delta, (a, b) -> a + b == 0 ? null : a + b);
    }

    private static String lastSegment(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }

    /** The paths a scope is anchored at: the root for a whole-worktree scope. */
    private static List<String> anchors(Scope scope) {
        return scope.wholeWorktree() ? PathNormalizer.WHOLE_WORKTREE : scope.paths();
    }
}
