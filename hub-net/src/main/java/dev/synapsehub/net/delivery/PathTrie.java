package dev.synapsehub.net.delivery;

import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Keys anchored at normalised paths, one node per path segment, so that the keys whose path
 * overlaps a given path (an ancestor of it, the path itself, or below it) are found by walking
 * that path and the subtree under it: never by scanning every key. Single-threaded.
 */
final class PathTrie<K> {
    private static final class Node<K> {
        final Node<K> parent;
        final String segment;
        Map<String, Node<K>> children;
        Set<K> here;
        /** Anchors at or below this node. */
        int total;

        Node(Node<K> parent, String segment) {
            this.parent = parent;
            this.segment = segment;
        }
    }

    private final Node<K> root = new Node<>(null, "");

    /** Anchors {@code key} at {@code path} (a non-empty normalised path). */
    void add(String path, K key) {
        // one split and one walk: the nodes passed are kept for the totals (a start seeds scoped
        // delivery's view with every live claim's paths, and the second split and walk were a
        // third of it)
        String[] segments = path.split("/");
        @SuppressWarnings("unchecked")
        Node<K>[] walked = new Node[segments.length];
        Node<K> node = root;
        for (int i = 0; i < segments.length; i++) {
            if (node.children == null) {
                node.children = new HashMap<>(4);
            }
            Node<K> child = node.children.get(segments[i]);
            if (child == null) {
                child = new Node<>(null, segments[i]);
                node.children.put(segments[i], child);
            }
            walked[i] = child;
            node = child;
        }
        if (node.here == null) {
            node.here = new LinkedHashSet<>(2);
        }
        if (node.here.add(key)) {
            root.total++;
            for (Node<K> n : walked) {
                n.total++;
            }
        }
    }

    /** Removes {@code key}'s anchor at {@code path}, pruning emptied nodes. */
    void remove(String path, K key) {
        String[] segments = path.split("/");
        Node<K> node = root;
        @SuppressWarnings("unchecked")
        Node<K>[] walked = new Node[segments.length + 1];
        walked[0] = root;
        for (int i = 0; i < segments.length; i++) {
            node = node.children == null ? null : node.children.get(segments[i]);
            if (node == null) {
                return;
            }
            walked[i + 1] = node;
        }
        if (node.here == null || !node.here.remove(key)) {
            return;
        }
        for (int i = segments.length; i >= 0; i--) {
            Node<K> n = walked[i];
            if (--n.total == 0 && i > 0) {
                walked[i - 1].children.remove(segments[i - 1]);
            }
        }
    }

    /** Adds every key anchored at an ancestor of {@code path}, at it, or below it. */
    void overlapping(String path, Collection<K> out) {
        Node<K> node = root;
        for (String segment : path.split("/")) {
            addAll(node, out);
            node = node.children == null ? null : node.children.get(segment);
            if (node == null) {
                return;
            }
        }
        subtree(node, out);
    }

    /** Adds every key. */
    void all(Collection<K> out) {
        subtree(root, out);
    }

    boolean isEmpty() {
        return root.total == 0;
    }

    private static <K> void subtree(Node<K> node, Collection<K> out) {
        addAll(node, out);
        if (node.children != null) {
            for (Node<K> child : node.children.values()) {
                subtree(child, out);
            }
        }
    }

    private static <K> void addAll(Node<K> node, Collection<K> out) {
        if (node.here != null) {
            out.addAll(node.here);
        }
    }
}
