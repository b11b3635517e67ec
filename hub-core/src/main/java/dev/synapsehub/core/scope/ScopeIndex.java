package dev.synapsehub.core.scope;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Finds file-scope conflicts (INV-ME-2..4) without scanning every live claim: one trie per
 * worktree over path segments, each node counting the anchors below it.
 *
 * <p>Whether a request conflicts costs O(declared paths × depth), plus the actor's own anchors
 * in that worktree (they are subtracted from a node's count by walking up from each of the
 * actor's leaves). Naming the first conflicting holding in insertion order walks the
 * conflicting subtree, which only happens on refusal.
 *
 * <p>{@link #index} returns an {@link Entry} that remembers the trie nodes the holding sits on,
 * so {@link #remove(Entry)} walks parent pointers instead of splitting and searching paths,
 * and touches no per-owner hash map: owners are tracked once per worktree, not on every node.
 */
public final class ScopeIndex {

    /**
     * What the index keeps of a claim.
     *
     * @param order insertion order in the registry; the first conflict reported is the lowest
     */
    public record Holding(String taskId, String owner, long order, Scope scope) {
    }

    /** An indexed holding: returned by {@link #index}, the cheap way to {@link #remove(Entry)} it. */
    public static final class Entry {
        private final Holding holding;
        private final Root root;
        private final Owner owner;
        /** The node each anchor ends at, one per anchor, in anchor order. */
        private final Node[] leaves;
        /** A trie holding with a path not in NFC (counted in its root's {@link Root#notNfc}). */
        private final boolean textNotNfc;
        private boolean removed;

        private Entry(Holding holding, Root root, Owner owner, Node[] leaves, boolean textNotNfc) {
            this.holding = holding;
            this.root = root;
            this.owner = owner;
            this.leaves = leaves;
            this.textNotNfc = textNotNfc;
        }

        /** The holding this entry indexes. */
        public Holding holding() {
            return holding;
        }
    }

    private static class Node {
        final String segment;
        /** {@code segment.hashCode()}, kept for the parent's {@link Children} table. */
        final int hash;
        final Node parent;
        final int depth;
        Children children;
        /**
         * The first entry anchored exactly here, then the others in the order they were added
         * ({@link #more}); null when none (then {@link #more} is empty too). Most anchors hold one
         * entry: a list per anchor was two objects per declared path at a restore.
         */
        Entry first;
        List<Entry> more;
        /** Anchors at or below this node. */
        int total;

        Node(String segment, Node parent) {
            this.segment = segment;
            this.hash = segment.hashCode();
            this.parent = parent;
            this.depth = parent == null ? 0 : parent.depth + 1;
        }

        /**
         * The path from the root to this node ("" at the root). Built when asked (only a handoff's
         * conflict check asks), not stored: a restart indexing 100,000 claims made one such String
         * per trie node.
         */
        String path() {
            if (parent == null) {
                return "";
            }
            // iteratively, in one buffer: linear in the path's length however deep it is (a recursive
            // concatenation copied the prefix once per level, quadratic for a deep path on a handoff)
            Node[] chain = new Node[depth];
            int length = -1;
            for (Node n = this; n.parent != null; n = n.parent) {
                chain[n.depth - 1] = n;
                length += n.segment.length() + 1;
            }
            StringBuilder out = new StringBuilder(length);
            for (Node n : chain) {
                if (out.length() > 0) {
                    out.append('/');
                }
                out.append(n.segment);
            }
            return out.toString();
        }
    }

    /**
     * A node's children by segment: an open-addressing table (linear probing) of the child nodes
     * themselves. A path being indexed is looked up segment by segment as a region of the path, so
     * only a new node makes a substring; a restore of 100,000 claims made a substring and a
     * {@code HashMap} entry per segment and grew each directory's map from 4 by doubling, which
     * was most of the claims' restore thread (JFR: {@code HashMap.getNode}/{@code resize}).
     * The hash is {@code String.hashCode} of the segment, so whole-segment lookups use the
     * String's cached hash.
     */
    private static final class Children {
        private Node[] slots = new Node[4];
        private int size;

        /** The child whose segment is {@code path[from, to)}, or null. */
        Node get(String path, int from, int to) {
            int h = 0;
            for (int i = from; i < to; i++) {
                h = 31 * h + path.charAt(i);
            }
            int length = to - from;
            int mask = slots.length - 1;
            for (int i = spread(h) & mask; ; i = (i + 1) & mask) {
                Node n = slots[i];
                if (n == null) {
                    return null;
                }
                if (n.hash == h && n.segment.length() == length && path.startsWith(n.segment, from)) {
                    return n;
                }
            }
        }

        /** The child named {@code segment}, or null. */
        Node get(String segment) {
            int h = segment.hashCode();
            int mask = slots.length - 1;
            for (int i = spread(h) & mask; ; i = (i + 1) & mask) {
                Node n = slots[i];
                if (n == null) {
                    return null;
                }
                if (n.hash == h && n.segment.equals(segment)) {
                    return n;
                }
            }
        }

        /** Adds a child whose segment is not in the table yet. */
        void add(Node child) {
            if ((size + 1) * 2 > slots.length) { // at most half full: short probe runs
                Node[] old = slots;
                slots = new Node[old.length * 2];
                for (Node n : old) {
                    if (n != null) {
                        place(n);
                    }
                }
            }
            place(child);
            size++;
        }

        private void place(Node n) {
            int mask = slots.length - 1;
            int i = spread(n.hash) & mask;
            while (slots[i] != null) {
                i = (i + 1) & mask;
            }
            slots[i] = n;
        }

        /** Removes {@code child} (by identity) if present. */
        void remove(Node child) {
            int mask = slots.length - 1;
            int i = spread(child.hash) & mask;
            while (slots[i] != child) {
                if (slots[i] == null) {
                    return;
                }
                i = (i + 1) & mask;
            }
            // backward-shift deletion: move up every later entry of the run that may not be left
            // behind the hole (its home slot is not cyclically in (hole, its slot]), so no lookup
            // stops early at the hole
            int hole = i;
            for (int j = (i + 1) & mask; slots[j] != null; j = (j + 1) & mask) {
                int home = spread(slots[j].hash) & mask;
                boolean stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
                if (!stays) {
                    slots[hole] = slots[j];
                    hole = j;
                }
            }
            slots[hole] = null;
            size--;
        }

        private static int spread(int h) {
            return h ^ (h >>> 16);
        }
    }

    /** A worktree's trie root, with the worktree's owners. */
    private static final class Root extends Node {
        final String worktree;
        /** Whether {@link #worktree} is in NFC (roots whose label is not are counted in {@code notNfcRoots}). */
        final boolean worktreeNfc;
        /** Holdings here with a path not in NFC. */
        int notNfc;
        final Map<String, Owner> owners = new HashMap<>();
        /** Owners in {@link #owners} with no anchor left; swept in bulk, never one by one. */
        int emptyOwners;

        Root(String worktree) {
            super("", null);
            this.worktree = worktree;
            this.worktreeNfc = isNfc(worktree);
        }
    }

    /** The anchor nodes of one owner's holdings in one worktree (a multiset, unordered). */
    private static final class Owner {
        Node[] leaves = new Node[2];
        int size;

        void add(Node leaf) {
            if (size == leaves.length) {
                leaves = Arrays.copyOf(leaves, size * 2);
            }
            leaves[size++] = leaf;
        }

        void remove(Node leaf) {
            for (int i = size - 1; i >= 0; i--) {
                if (leaves[i] == leaf) {
                    leaves[i] = leaves[--size];
                    leaves[size] = null;
                    return;
                }
            }
        }

        /** Anchors of this owner at or below {@code node}. */
        int under(Node node) {
            int n = 0;
            for (int i = 0; i < size; i++) {
                Node leaf = leaves[i];
                for (int up = leaf.depth - node.depth; up > 0; up--) {
                    leaf = leaf.parent;
                }
                if (leaf == node) {
                    n++;
                }
            }
            return n;
        }
    }

    private final Map<String, Root> roots = new HashMap<>();
    /**
     * Holdings that carry a path identity (contract A8): they can contend across worktree labels
     * and through object ids (hard links) whatever their paths, so no trie finds them; they are
     * checked one by one. Clients that send identities pay a linear scan over identity holdings.
     */
    private final java.util.Set<Entry> identities = new java.util.LinkedHashSet<>();
    /**
     * Worktrees whose label is not in NFC. An identity compares legacy text after NFC (contract
     * §7.7), so while there is none, and its worktree holds no path that is not NFC, the
     * worktree and paths an identity's NFC text names in the tries are the only places a legacy
     * holding it contends with can be.
     */
    private int notNfcRoots;

    /**
     * Indexes a holding under each of its declared paths (the root for a whole-worktree scope),
     * returning the entry to pass to {@link #remove(Entry)}.
     */
    public Entry index(Holding holding) {
        if (holding.scope().identity() != null) {
            Entry entry = new Entry(holding, null, null, new Node[0], false);
            identities.add(entry);
            return entry;
        }
        String worktree = holding.scope().worktree();
        Root root = roots.get(worktree);
        if (root == null) {
            root = new Root(worktree);
            roots.put(worktree, root);
            if (!root.worktreeNfc) {
                notNfcRoots++;
            }
        }
        Owner owner = root.owners.get(holding.owner());
        if (owner == null) {
            owner = new Owner();
            root.owners.put(holding.owner(), owner);
        } else if (owner.size == 0) {
            root.emptyOwners--;
        }
        List<String> anchors = anchors(holding.scope());
        Node[] leaves = new Node[anchors.size()];
        boolean textNotNfc = false;
        for (String anchor : anchors) {
            if (!isNfc(anchor)) {
                textNotNfc = true;
                root.notNfc++;
                break;
            }
        }
        Entry entry = new Entry(holding, root, owner, leaves, textNotNfc);
        for (int a = 0; a < leaves.length; a++) {
            String path = anchors.get(a);
            Node node = root;
            node.total++;
            if (!path.isEmpty()) {
                int start = 0;
                while (true) {
                    int slash = path.indexOf('/', start);
                    int end = slash < 0 ? path.length() : slash;
                    if (node.children == null) {
                        node.children = new Children();
                    }
                    Node child = node.children.get(path, start, end);
                    if (child == null) {
                        child = new Node(path.substring(start, end), node);
                        node.children.add(child);
                    }
                    node = child;
                    node.total++;
                    if (slash < 0) {
                        break;
                    }
                    start = slash + 1;
                }
            }
            if (node.first == null) {
                node.first = entry;
            } else {
                if (node.more == null) {
                    node.more = new ArrayList<>(2);
                }
                node.more.add(entry);
            }
            leaves[a] = node;
            owner.add(node);
        }
        return entry;
    }

    /** Removes an entry returned by {@link #index}; prunes nodes left empty. Idempotent. */
    public void remove(Entry entry) {
        if (entry == null || entry.removed) {
            return;
        }
        entry.removed = true;
        if (entry.root == null) {
            identities.remove(entry);
            return;
        }
        Root root = entry.root;
        if (entry.textNotNfc) {
            root.notNfc--; // an entry from before a clear() touches only its own detached root
        }
        Owner owner = entry.owner;
        for (Node leaf : entry.leaves) {
            if (leaf.first == entry) {
                leaf.first = leaf.more == null || leaf.more.isEmpty() ? null : leaf.more.remove(0);
            } else {
                removeFromList(leaf.more, entry);
            }
            owner.remove(leaf);
            Node emptied = null;
            for (Node n = leaf; n != null; n = n.parent) {
                if (--n.total == 0) {
                    emptied = n;
                }
            }
            // Only the highest node left empty needs unlinking; its subtree goes with it.
            if (emptied != null && emptied.parent != null) {
                emptied.parent.children.remove(emptied);
            }
        }
        if (root.total == 0) {
            if (roots.get(root.worktree) == root) {
                roots.remove(root.worktree);
                if (!root.worktreeNfc) {
                    notNfcRoots--;
                }
            }
            return;
        }
        if (owner.size == 0 && ++root.emptyOwners > (root.owners.size() >> 1) + 16) {
            root.owners.values().removeIf(o -> o.size == 0);
            root.emptyOwners = 0;
        }
    }

    /**
     * The first holding (lowest order) whose scope conflicts with {@code request}, skipping the
     * actor's own holdings and {@code exclude} (the task being handed off, or null).
     */
    public Optional<Holding> firstConflict(Scope request, String actor, Holding exclude) {
        Holding first = firstTrieConflict(request, actor, exclude).orElse(null);
        for (Entry e : identities) {
            Holding h = e.holding;
            if ((first == null || h.order() < first.order()) && contends(h, actor, exclude)
                    && h.scope().conflictsWith(request)) {
                first = h;
            }
        }
        return Optional.ofNullable(first);
    }

    /**
     * The first conflicting holding without a path identity: for a plain request, those sharing
     * its worktree label, found through that worktree's trie; for an identity, see
     * {@link #legacyProbe} and {@link #firstFoldedConflict}.
     */
    private Optional<Holding> firstTrieConflict(Scope request, String actor, Holding exclude) {
        PathIdentity identity = request.identity();
        if (identity == null) {
            return firstTrieConflict(request, request, actor, exclude);
        }
        if (!identity.caseSensitive() || notNfcRoots > 0) {
            return firstFoldedConflict(request, actor, exclude);
        }
        // every label is NFC: only the worktree labelled with the identity's (NFC) path can hold a contender
        Root root = roots.get(identity.worktreePath());
        if (root == null) {
            return Optional.empty();
        }
        if (root.notNfc > 0) {
            return firstConflictIn(root, request, actor, exclude);
        }
        return firstTrieConflict(legacyProbe(identity, request.wholeWorktree()), request, actor, exclude);
    }

    /**
     * Where the tries hold every legacy holding a case-sensitive identity can contend with, when
     * all trie text is NFC: the identity's worktree, and each row's git path and file-system path
     * in NFC (a legacy row is its display path as both, compared by ancestry; contract A8 rule 5).
     */
    private static Scope legacyProbe(PathIdentity identity, boolean whole) {
        List<String> paths = new ArrayList<>();
        for (PathIdentity.Row row : identity.rows()) {
            String git = PathIdentity.fold(row.gitPath(), true);
            String fs = PathIdentity.fold(row.filesystemPath(), true);
            if (whole || git.isEmpty() || fs.isEmpty()) { // "" is the whole worktree by the ancestor rule
                return new Scope(identity.worktreePath(), List.of());
            }
            paths.add(git);
            paths.add(fs);
        }
        return new Scope(identity.worktreePath(), paths.isEmpty() ? List.of() : paths);
    }

    /**
     * The first trie holding contending with {@code request} among those overlapping
     * {@code probe} (the request itself, or for an identity its {@link #legacyProbe}).
     */
    private Optional<Holding> firstTrieConflict(Scope probe, Scope request, String actor, Holding exclude) {
        Root root = roots.get(probe.worktree());
        if (root == null || !conflicts(root, probe, actor, exclude)) {
            return Optional.empty();
        }
        List<Entry> candidates = new ArrayList<>();
        if (probe.wholeWorktree()) {
            collectSubtree(root, candidates);
        } else {
            for (String path : probe.paths()) {
                Node node = root;
                addHere(candidates, node);
                for (String segment : path.split("/", -1)) {
                    node = node.children == null ? null : node.children.get(segment);
                    if (node == null) {
                        break;
                    }
                    addHere(candidates, node);
                }
                if (node != null) {
                    collectSubtree(node, candidates);
                }
            }
        }
        Holding first = null;
        for (Entry e : candidates) {
            Holding h = e.holding;
            if (contends(h, actor, exclude) && h.scope().conflictsWith(request)
                    && (first == null || h.order() < first.order())) {
                first = h;
            }
        }
        return Optional.ofNullable(first);
    }

    /**
     * The first conflicting holding without a path identity for a request whose identity is
     * case-insensitive, or any identity while some worktree label is not NFC (contract A8 rules 2 and
     * 3): a legacy worktree label or path that differs only in case or normalisation is the same,
     * which the tries, keyed by exact text, cannot see. So every holding of each worktree whose
     * folded label is the identity's worktree is compared; only such a request pays for it.
     */
    private Optional<Holding> firstFoldedConflict(Scope request, String actor, Holding exclude) {
        String worktree = request.identity().worktreePath();
        boolean caseSensitive = request.identity().caseSensitive();
        Holding first = null;
        for (Map.Entry<String, Root> r : roots.entrySet()) {
            if (!PathIdentity.fold(r.getKey(), caseSensitive).equals(worktree)) {
                continue;
            }
            Holding h = firstConflictIn(r.getValue(), request, actor, exclude).orElse(null);
            if (h != null && (first == null || h.order() < first.order())) {
                first = h;
            }
        }
        return Optional.ofNullable(first);
    }

    /** The first holding of {@code root} that contends with {@code request}, comparing each (a scan). */
    private static Optional<Holding> firstConflictIn(Root root, Scope request, String actor, Holding exclude) {
        List<Entry> all = new ArrayList<>();
        collectSubtree(root, all);
        Holding first = null;
        for (Entry e : all) {
            Holding h = e.holding;
            if (contends(h, actor, exclude) && h.scope().conflictsWith(request)
                    && (first == null || h.order() < first.order())) {
                first = h;
            }
        }
        return Optional.ofNullable(first);
    }

    /**
     * Drops every holding at once. Entries handed out before are detached: removing one
     * afterwards only touches its own discarded trie, never the live index.
     */
    public void clear() {
        roots.clear();
        identities.clear();
        notNfcRoots = 0;
    }

    /** True when {@code s} is in NFC (ASCII always is: checked first, as most paths are ASCII). */
    private static boolean isNfc(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return java.text.Normalizer.isNormalized(s, java.text.Normalizer.Form.NFC);
            }
        }
        return true;
    }

    /** Number of worktrees with at least one holding. */
    public int worktreeCount() {
        return roots.size();
    }

    private boolean conflicts(Root root, Scope request, String actor, Holding exclude) {
        String worktree = request.worktree();
        if (request.wholeWorktree()) {
            return others(root, root, worktree, actor, exclude) > 0;
        }
        for (String path : request.paths()) {
            Node node = root;
            boolean reached = true;
            for (String segment : path.split("/", -1)) {
                if (anyContending(node, actor, exclude)) {
                    return true;
                }
                node = node.children == null ? null : node.children.get(segment);
                if (node == null) {
                    reached = false;
                    break;
                }
            }
            if (reached && others(root, node, worktree, actor, exclude) > 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Anchors in the subtree of {@code node} (in {@code worktree}) that are neither the actor's
     * nor excluded. An excluded holding in another worktree is not counted here, so it must not
     * be subtracted either.
     */
    private static int others(Root root, Node node, String worktree, String actor, Holding exclude) {
        Owner own = root.owners.get(actor);
        int n = node.total - (own == null ? 0 : own.under(node));
        // an excluded holding with a path identity is not in the tries: nothing of it to subtract
        if (exclude != null && !exclude.owner().equals(actor) && exclude.scope().identity() == null
                && exclude.scope().worktree().equals(worktree)) {
            String path = node.path();
            for (String p : anchors(exclude.scope())) {
                if (path.isEmpty() ? true : (p.equals(path) || p.startsWith(path + "/"))) {
                    n--;
                }
            }
        }
        return n;
    }

    /** Whether an entry anchored exactly at {@code node} contends with the actor. */
    private static boolean anyContending(Node node, String actor, Holding exclude) {
        if (node.first == null) {
            return false;
        }
        if (contends(node.first.holding, actor, exclude)) {
            return true;
        }
        if (node.more != null) {
            for (Entry e : node.more) {
                if (contends(e.holding, actor, exclude)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean contends(Holding h, String actor, Holding exclude) {
        return !h.owner().equals(actor) && (exclude == null || !h.taskId().equals(exclude.taskId()));
    }

    private static void collectSubtree(Node node, List<Entry> out) {
        addHere(out, node);
        if (node.children != null) {
            for (Node child : node.children.slots) {
                if (child != null) {
                    collectSubtree(child, out);
                }
            }
        }
    }

    /** Adds the entries anchored exactly at {@code node}, in the order they were added. */
    private static void addHere(List<Entry> out, Node node) {
        if (node.first != null) {
            out.add(node.first);
            if (node.more != null) {
                out.addAll(node.more);
            }
        }
    }

    private static void removeFromList(List<Entry> list, Entry entry) {
        if (list == null) {
            return;
        }
        for (int i = list.size() - 1; i >= 0; i--) {
            if (list.get(i) == entry) {
                list.remove(i);
                return;
            }
        }
    }

    /** The paths a scope is anchored at: the root for a whole-worktree scope. */
    private static List<String> anchors(Scope scope) {
        return scope.wholeWorktree() ? PathNormalizer.WHOLE_WORKTREE : scope.paths();
    }
}
