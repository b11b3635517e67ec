package dev.synapsehub.core.claim;

import java.util.Arrays;

/**
 * Min-heap of lease expiries with lazy deletion: an entry names the registry's record of one
 * lease, and is acted on only if that record is still live, so renewals and releases never
 * search the heap.
 *
 * <p>The heap is array-backed: expiry instants in a {@code double[]}, the tie-break (the
 * claim's insertion order, unique among live claims) in a {@code long[]} and the entries in a
 * parallel array, so sifting compares primitives in contiguous memory instead of dereferencing
 * one object per comparison. Entries due at the same instant come out in insertion order,
 * whatever the heap's history, so expiry order never depends on when the heap was rebuilt.
 *
 * @param <E> the entry type (the registry's record of a live lease)
 */
final class ExpiryQueue<E> {
    private double[] keys = new double[16];
    private long[] orders = new long[16];
    private Object[] entries = new Object[16];
    private int size;
    /** At least the largest key in the heap (the largest pushed since it was last empty). */
    private double maxKey = Double.NEGATIVE_INFINITY;

    /** Adds {@code entry}, due at {@code expiresAt}, tie-broken by {@code order}. */
    void push(double expiresAt, long order, E entry) {
        if (size == keys.length) {
            int capacity = size + (size >> 1) + 16;
            keys = Arrays.copyOf(keys, capacity);
            orders = Arrays.copyOf(orders, capacity);
            entries = Arrays.copyOf(entries, capacity);
        }
        siftUp(size++, expiresAt, order, entry);
        if (expiresAt > maxKey) {
            maxKey = expiresAt;
        }
    }

    /**
     * True when the heap is non-empty and every entry in it is due at or before {@code now}
     * (a NaN key, ordered last, counts as due once it is reached, as in {@link #hasDue}).
     */
    boolean allDue(double now) {
        return size > 0 && !(maxKey > now);
    }

    /** True when an entry is due at or before {@code now}. */
    boolean hasDue(double now) {
        return size > 0 && !(keys[0] > now);
    }

    /** Removes and returns the head entry; only call after {@link #hasDue} answered true. */
    @SuppressWarnings("unchecked")
    E poll() {
        E head = (E) entries[0];
        int last = --size;
        double key = keys[last];
        long order = orders[last];
        Object entry = entries[last];
        entries[last] = null;
        if (last > 0) {
            siftDown(0, key, order, entry);
        } else {
            maxKey = Double.NEGATIVE_INFINITY;
        }
        return head;
    }

    int size() {
        return size;
    }

    /** What {@link #forEach} hands over: one heap entry with its key and tie-break. */
    interface Visitor<E> {
        void visit(double expiresAt, long order, E entry);
    }

    /** Visits every entry, live and stale, in array (not expiry) order; the heap is left as it is. */
    @SuppressWarnings("unchecked")
    void forEach(Visitor<E> visitor) {
        for (int i = 0; i < size; i++) {
            visitor.visit(keys[i], orders[i], (E) entries[i]);
        }
    }

    /**
     * Entries not due at {@code now} (a key after it, or NaN) that {@code counted} accepts: a
     * linear pass over the keys, reading an entry only when its key is not due.
     */
    @SuppressWarnings("unchecked")
    int countNotDue(double now, java.util.function.Predicate<E> counted) {
        int n = 0;
        for (int i = 0; i < size; i++) {
            if (!(keys[i] <= now) && counted.test((E) entries[i])) {
                n++;
            }
        }
        return n;
    }

    /** Drops every entry; the caller then pushes the live ones again. */
    void clear() {
        Arrays.fill(entries, 0, size, null);
        size = 0;
        maxKey = Double.NEGATIVE_INFINITY;
    }

    private static boolean before(double k1, long o1, double k2, long o2) {
        // Double.compare, as the boxed heap used: total order, NaN last, -0.0 before 0.0.
        int c = Double.compare(k1, k2);
        return c < 0 || (c == 0 && o1 < o2);
    }

    private void siftUp(int i, double key, long order, Object entry) {
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            double pk = keys[parent];
            if (!before(key, order, pk, orders[parent])) {
                break;
            }
            keys[i] = pk;
            orders[i] = orders[parent];
            entries[i] = entries[parent];
            i = parent;
        }
        keys[i] = key;
        orders[i] = order;
        entries[i] = entry;
    }

    private void siftDown(int i, double key, long order, Object entry) {
        int n = size;
        int half = n >>> 1;
        double[] ks = keys;
        long[] os = orders;
        Object[] es = entries;
        while (i < half) {
            int child = 2 * i + 1;
            int right = child + 1;
            double ck = ks[child];
            if (right < n) {
                double rk = ks[right];
                if (before(rk, os[right], ck, os[child])) {
                    child = right;
                    ck = rk;
                }
            }
            if (!before(ck, os[child], key, order)) {
                break;
            }
            ks[i] = ck;
            os[i] = os[child];
            es[i] = es[child];
            i = child;
        }
        ks[i] = key;
        os[i] = order;
        es[i] = entry;
    }
}
