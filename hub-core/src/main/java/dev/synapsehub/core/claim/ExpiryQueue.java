package dev.synapsehub.core.claim;

import java.util.PriorityQueue;

/**
 * Min-heap of lease expiries with lazy deletion: an entry is acted on only if the task still
 * carries the epoch it was pushed with, so renewals and releases never search the heap.
 */
final class ExpiryQueue {
    record Due(double expiresAt, String taskId, long epoch) {
    }

    private final PriorityQueue<Due> heap = new PriorityQueue<>(
            (a, b) -> Double.compare(a.expiresAt(), b.expiresAt()));

    void push(Claim claim) {
        heap.add(new Due(claim.leaseExpiresAt(), claim.taskId(), claim.epoch()));
    }

    /** The next entry due at or before {@code now}, removed; null when nothing is due. */
    Due pollDue(double now) {
        Due head = heap.peek();
        if (head == null || head.expiresAt() > now) {
            return null;
        }
        return heap.poll();
    }

    int size() {
        return heap.size();
    }

    /** Drops stale entries by rebuilding from the live claims. */
    void rebuild(Iterable<Claim> live) {
        heap.clear();
        for (Claim claim : live) {
            push(claim);
        }
    }
}
