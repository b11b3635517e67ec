package dev.synapsehub.core.identity;

import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.IdentityPinCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.IdentityPinEvent;
import dev.synapsehub.core.event.IdentityPinReclaimEvent;
import dev.synapsehub.core.reply.IdentityPinReply;
import dev.synapsehub.core.undo.UndoLog;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Identity pins (wire contract A2): which name is bound to which Ed25519 key. Decided and
 * applied on the writer thread; every change is a journaled {@link IdentityPinEvent}. The edge
 * checks a registration against {@link #findCommitted}, a view that holds committed pins only
 * and is safe from any thread, so a pin that a failed batch rolls back never refuses anyone.
 */
public final class IdentityPinRegistry {
    /** Pins held at most; beyond, a valid first-use proof admits without pinning (pins never expire). */
    public static final int MAX_PINS = 65_536;

    /** Reclaim refusal texts that depend on pins (contract A2.6, checks 7, 9, 10). */
    public static final String NOT_BOUND = "the operator identity is not cryptographically bound";
    public static final String NO_PIN = "the target has no identity pin";
    public static final String KEY_MISMATCH = "the current pin does not match the expected key id";
    public static final String RECLAIMED = "identity pin reclaimed; the next valid proof may pin the name";

    private final LinkedHashMap<String, IdentityPin> pins = new LinkedHashMap<>(); // the order pinned
    private final ConcurrentHashMap<String, IdentityPin> committed = new ConcurrentHashMap<>();
    private final Set<String> touched = new HashSet<>();
    private final UndoLog undo;

    /** A registry recording its changes in {@code undo}. */
    public IdentityPinRegistry(UndoLog undo) {
        this.undo = undo;
    }

    /** A registry with an undo log of its own. */
    public IdentityPinRegistry() {
        this(new UndoLog());
    }

    /**
     * Decides a pin or a reclaim; refusals change nothing.
     *
     * @param lastSeq the state's last journal seq: a reclaim's records take the next three
     */
    public Decision decide(IdentityPinCommand command, double t, long lastSeq) {
        if (command instanceof IdentityPinCommand.Pin p) {
            return decidePin(p, t);
        }
        return decideReclaim((IdentityPinCommand.Reclaim) command, t, lastSeq);
    }

    private Decision decidePin(IdentityPinCommand.Pin p, double t) {
        IdentityPin existing = pins.get(p.agent());
        if (existing == null) {
            if (pins.size() >= MAX_PINS) {
                return new Decision(new IdentityPinReply(IdentityPinReply.Outcome.STORE_FULL, null, "", 0), List.of());
            }
            IdentityPin pin = new IdentityPin(p.agent(), p.keyId(), p.publicKey(), t);
            return new Decision(new IdentityPinReply(IdentityPinReply.Outcome.PINNED, pin, "", 0),
                    List.of(new IdentityPinEvent(t, IdentityPinEvent.Op.PIN, p.agent(), p.keyId(), p.publicKey())));
        }
        boolean same = existing.keyId().equals(p.keyId()) && existing.publicKey().equals(p.publicKey());
        return new Decision(new IdentityPinReply(same ? IdentityPinReply.Outcome.ALREADY_PINNED
                : IdentityPinReply.Outcome.MISMATCH, existing, "", 0), List.of());
    }

    private Decision decideReclaim(IdentityPinCommand.Reclaim r, double t, long lastSeq) {
        IdentityPin pinned = pins.get(r.agent());
        String operatorKeyId = r.boundKeyId() != null ? r.boundKeyId() : pinned == null ? null : pinned.keyId();
        IdentityPin target = pins.get(r.pinName());
        String refusal = operatorKeyId == null ? NOT_BOUND
                : target == null ? NO_PIN
                : !target.keyId().equals(r.expectedKeyId()) ? KEY_MISMATCH : null;
        if (refusal != null) {
            return new Decision(new IdentityPinReply(IdentityPinReply.Outcome.RECLAIM_REFUSED, target, refusal, 0),
                    List.of());
        }
        boolean evicted = r.ownerOnline(); // the edge got here only if eviction is allowed (11/12)
        long approvedSeq = lastSeq + 1;
        long appliedSeq = lastSeq + 3;
        IdentityPinReclaimEvent approved = audit(r, operatorKeyId, t, "approved", null, null);
        IdentityPinEvent unpin = new IdentityPinEvent(t, IdentityPinEvent.Op.UNPIN, target.name(), target.keyId(),
                target.publicKey());
        IdentityPinReclaimEvent applied = audit(r, operatorKeyId, t, "applied", approvedSeq, evicted);
        return new Decision(new IdentityPinReply(IdentityPinReply.Outcome.RECLAIMED, target, RECLAIMED, appliedSeq),
                List.of(approved, unpin, applied));
    }

    private static IdentityPinReclaimEvent audit(IdentityPinCommand.Reclaim r, String operatorKeyId, double t,
            String status, Long approvedSeq, Boolean evicted) {
        return new IdentityPinReclaimEvent(t, r.agent(), operatorKeyId, r.pinName(), r.expectedKeyId(), r.reason(),
                r.breakGlass(), r.ownerOnline(), r.leaseLive(), r.staleOwnerReclaimable(), status,
                "applied".equals(status), approvedSeq, evicted);
    }

    /** The one path by which pins change, live and on replay; other events are ignored. */
    public void apply(CoordinationEvent event) {
        if (!(event instanceof IdentityPinEvent e)) {
            return;
        }
        if (e.op() == IdentityPinEvent.Op.PIN) {
            put(e.name(), new IdentityPin(e.name(), e.keyId(), e.publicKey(), e.ts()));
        } else {
            put(e.name(), null);
        }
    }

    private void put(String name, IdentityPin value) {
        if (value == null) {
            undo.removeInPlace(pins, name); // an unpin rolled back puts the pin back in its place
        } else {
            IdentityPin before = pins.put(name, value);
            undo.record(() -> {
                if (before == null) {
                    pins.remove(name);
                } else {
                    pins.put(name, before); // an existing key keeps its place
                }
            });
        }
        boolean firstInBatch = touched.isEmpty();
        touched.add(name);
        if (firstInBatch) {
            // the edge sees the batch's pins once it ends (at once outside a batch)
            undo.atBatchEnd(this::publishTouched);
        }
    }

    private void publish(String name) {
        IdentityPin now = pins.get(name);
        if (now == null) {
            committed.remove(name);
        } else {
            committed.put(name, now);
        }
    }

    /** The pin of {@code name} as the writer sees it (uncommitted changes included). */
    public Optional<IdentityPin> find(String name) {
        return Optional.ofNullable(pins.get(name));
    }

    /** The committed pin of {@code name}; safe from any thread. */
    public Optional<IdentityPin> findCommitted(String name) {
        return Optional.ofNullable(name == null ? null : committed.get(name));
    }

    /** The number of pins. */
    public int size() {
        return pins.size();
    }

    /** Every pin, in the order pinned. */
    public List<IdentityPin> image() {
        return List.copyOf(pins.values());
    }

    /** Loads an image into this empty registry. */
    public void restore(List<IdentityPin> image) {
        if (!pins.isEmpty()) {
            throw new IllegalStateException("restore needs an empty pin registry");
        }
        for (IdentityPin pin : image) {
            pins.put(pin.name(), pin);
            committed.put(pin.name(), pin);
        }
    }

    /**
     * The batch ended: committed changes become visible to the edge; after a rollback the
     * touched names publish their restored pins, which the edge already saw.
     */
    private void publishTouched() {
        touched.forEach(this::publish);
        touched.clear();
    }
}
