package dev.synapsehub.core.state;

import dev.synapsehub.core.event.IdempotencyRecordedEvent;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The first approvals of two-person operator relays (contract A5.1) decided by the writer, held
 * in the idempotency ledger: it is the state's journaled, replicated and snapshotted store of
 * "what was answered first", and an approval is exactly that, a first answer awaiting its second.
 * So an approval taken by one mesh node counts when the second arrives at another, and survives a
 * failover and a snapshot install. Keys start with NUL, which no request key does (a sender is
 * never empty), so they never meet an agent's keyed request; they are bounded and evicted with
 * the ledger's other keys (oldest first).
 */
public final class RelayApprovals {
    private static final String PREFIX = "\0operator_relay_approval\0";
    /** The stored response of an approval awaiting its second operator. */
    static final String PENDING = "{\"operator_relay_approval\":\"pending\"}";
    /** The stored response of an approval a second operator consumed (the release was decided). */
    static final String CONSUMED = "{\"operator_relay_approval\":\"consumed\"}";

    private RelayApprovals() {
    }

    /** One approval awaiting a second operator. */
    public record Pending(String action, String namespace, String taskId, String requester) {
    }

    /** The ledger key of the approval of {@code action} on {@code taskId} in {@code namespace}. */
    static String key(String action, String namespace, String taskId) {
        return PREFIX + action + '\0' + namespace + '\0' + taskId;
    }

    /** The principal whose approval awaits a second operator, if any. */
    static Optional<String> first(IdempotencyLedger ledger, String key) {
        return ledger.find(key).filter(e -> PENDING.equals(e.response())).map(IdempotencyLedger.Entry::requestDigest);
    }

    /** The record of {@code principal}'s first approval under {@code key}. */
    static IdempotencyRecordedEvent recorded(double t, String key, String principal) {
        return new IdempotencyRecordedEvent(t, key, principal, PENDING);
    }

    /** The record that a second operator consumed the approval under {@code key}. */
    static IdempotencyRecordedEvent consumed(double t, String key, String principal) {
        return new IdempotencyRecordedEvent(t, key, principal, CONSUMED);
    }

    /**
     * The approvals awaiting a second operator, oldest first (in the order the writer recorded
     * them, as a single hub lists its in-memory ones), from the committed view (any thread): what
     * {@code state_snapshot.pending_relay_approvals} lists on a mesh.
     */
    public static List<Pending> pending(IdempotencyLedger ledger) {
        List<IdempotencyLedger.Recorded> held = new ArrayList<>();
        for (IdempotencyLedger.Recorded r : ledger.committedRecorded()) {
            if (r.entry().key().startsWith(PREFIX) && PENDING.equals(r.entry().response())) {
                held.add(r);
            }
        }
        held.sort(java.util.Comparator.comparingLong(IdempotencyLedger.Recorded::order));
        List<Pending> out = new ArrayList<>(held.size());
        for (IdempotencyLedger.Recorded r : held) {
            String[] parts = r.entry().key().substring(PREFIX.length()).split("\0", 3);
            if (parts.length == 3) {
                out.add(new Pending(parts[0], parts[1], parts[2], r.entry().requestDigest()));
            }
        }
        return out;
    }
}
