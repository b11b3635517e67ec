package dev.synapsehub.net.session;

import java.util.ArrayList;
import java.util.List;

/**
 * A name whose admission still waits for its first-use pin decision (from just before its bind
 * makes it visible until the welcome): deliveries addressed to the name that find the session meanwhile wait here, so
 * none reaches the client before its welcome (or an impostor that then loses the pin race), and
 * it remembers whether the bind will announce the name {@code joined}. Thread-safe: deliveries
 * arrive on the outbox thread, the decision on the session's event loop.
 */
final class PendingAdmission {
    /** A delivery held: {@code deliver} once admitted, {@code drop} when the session is refused or gone. */
    record Held(Runnable deliver, Runnable drop) {
    }

    /** Known once bound: the bind announces the name {@code joined} when admitted. */
    private boolean announcesJoin;
    /** Null once decided. */
    private List<Held> held = new ArrayList<>();
    private boolean admitted;

    /** The bind that made the name visible announces it {@code joined} once admitted. */
    synchronized void announcesJoin(boolean announces) {
        announcesJoin = announces;
    }

    /** Keeps {@code h} until the decision; false when it was made (deliver now). */
    synchronized boolean hold(Held h) {
        if (held == null) {
            return false;
        }
        held.add(h);
        return true;
    }

    /** The decision: the deliveries held so far, in order; later ones are not held. */
    synchronized List<Held> decide(boolean admit) {
        admitted |= admit;
        List<Held> out = held == null ? List.of() : held;
        held = null;
        return out;
    }

    /** True when the bind announces {@code joined} and that announcement has not gone out (it never will if refused). */
    synchronized boolean joinUnannounced() {
        return announcesJoin && !admitted;
    }
}
