package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.IdentityPinCommand;
import dev.synapsehub.core.identity.IdentityPin;
import dev.synapsehub.core.identity.IdentityPinRegistry;
import dev.synapsehub.core.reply.IdentityPinReply;
import dev.synapsehub.net.auth.SigningTime;
import dev.synapsehub.net.identity.IdentityPinSettings;
import dev.synapsehub.net.identity.IdentityProof;
import dev.synapsehub.net.identity.IdentityTrust;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.wire.HubFrames;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Identity pinning at registration (wire contract A2.1–A2.4, decision A10.3). Only a socket's
 * first frame is examined, after the reserved-name and token checks and before name binding: a
 * pinned name needs a proof by its pinned key, a broken first-use proof is refused, and a valid
 * first-use proof pins the name once its binding succeeded; the frame applies only once the pin
 * is decided, and first frames for one name are admitted one at a time ({@link #turn}). Refusals
 * are a private {@code error} with {@code verification_result}, then close 4013. On by default
 * (single hub and mesh node); {@code --no-identity-pinning} turns it off. In the operator-bundle posture
 * ({@code --require-identity-binding}) the bundle's key replaces pins for every name.
 */
final class IdentityPinGate {
    private static final Logger LOG = LoggerFactory.getLogger(IdentityPinGate.class);

    /** What the first frame may do next. */
    record Admission(boolean admitted, IdentityPinCommand.Pin pin) {
        static final Admission ADMIT = new Admission(true, null);
        static final Admission REFUSED = new Admission(false, null);
    }

    private final IdentityPinSettings pins;
    private final CoordinationActor actor;
    private final Outbox outbox;
    private final HubFrames frames;
    private final HubMetrics metrics;
    private final Clock clock;
    private final IdentityProof proof = new IdentityProof();
    /** The full pin store is logged once per hub; every admission it leaves unpinned is counted. */
    private final AtomicBoolean storeFullLogged = new AtomicBoolean();
    /** The names whose first frame is being admitted ({@link #turn}), each with its turn's end. */
    private final ConcurrentHashMap<String, CompletableFuture<Void>> turns = new ConcurrentHashMap<>();

    /** The gate under {@code pins}: committed pins are read from, and new ones submitted to, {@code actor}. */
    IdentityPinGate(IdentityPinSettings pins, CoordinationActor actor, Outbox outbox, HubFrames frames,
            HubMetrics metrics, Clock clock) {
        this.pins = pins;
        this.actor = actor;
        this.outbox = outbox;
        this.frames = frames;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** True when the first frame must be kept as received (with its token) for the proof check. */
    boolean wantsReceived(ObjectNode frame) {
        return (pins.enabled() || pins.requiresBinding())
                && frame.has("signature");
    }

    /**
     * Checks a first frame before its name binds; after a refusal the socket is closing.
     *
     * @param received the frame as received (token included) when {@link #wantsReceived}, else null
     */
    Admission check(Session session, ObjectNode received, String sender, double now) {
        JsonNode signature = received == null ? null : received.get("signature");
        boolean signed = signature != null && signature.isObject();
        IdentityTrust trust = pins.trust();
        if (trust != null) {
            return bundle(trust, session, signed ? received : null, sender, now);
        }
        if (!pins.enabled()) {
            return Admission.ADMIT;
        }
        Optional<IdentityPin> pinned = actor.committedPin(sender);
        if (pinned.isPresent()) {
            IdentityPin pin = pinned.get();
            String result = signed ? proof.verify(received, sender, pin.keyId(), pin.publicKey(), SigningTime.of(clock))
                    : "signature missing";
            if ("ok".equals(result)) {
                return Admission.ADMIT;
            }
            refusePinned(session, sender, pin.keyId(), result, now);
            return Admission.REFUSED;
        }
        JsonNode key = received == null ? null : received.get("identity_public_key");
        boolean keyPresent = key != null && !key.isNull() && !(key.isTextual() && key.textValue().isEmpty());
        if (!signed || !keyPresent) {
            return Admission.ADMIT; // nothing to pin (A2.3, last row)
        }
        String keyText = key.isTextual() ? key.textValue() : "";
        IdentityProof.Result result = proof.verifyFirstUse(received, sender, keyText, SigningTime.of(clock),
                session.remoteHost());
        if (!result.ok()) {
            metrics.authFailures.incrementAndGet();
            refuse(session, sender, "identity signature invalid: " + result.result(), result.result(),
                    "identity binding failed", now);
            return Admission.REFUSED;
        }
        if (!result.pinnable()) {
            // the first-use replay pool was full (a flood): admitted as an unsigned frame would be, pinned later
            metrics.identityProofsUnpinned.incrementAndGet();
            LOG.debug("first-use proof of '{}' admitted without a pin: the first-use replay pool is full", sender);
            return Admission.ADMIT;
        }
        return new Admission(true, new IdentityPinCommand.Pin(sender, signature.get("key_id").textValue(), keyText));
    }

    /**
     * The operator-bundle posture (A2.2, A2.4): every first frame proves the bundle's key for its
     * name; no pin is read or made. No {@code signature} object is {@code missing_signature}, a
     * name the bundle does not hold is {@code unknown_key}.
     */
    private Admission bundle(IdentityTrust trust, Session session, ObjectNode signed, String sender, double now) {
        Optional<IdentityTrust.TrustedKey> key = trust.keyOf(sender);
        String result = signed == null ? "missing_signature"
                : key.isEmpty() ? "unknown_key"
                : proof.verify(signed, sender, key.get().keyId(), key.get().publicKey(), SigningTime.of(clock));
        if ("ok".equals(result)) {
            return Admission.ADMIT;
        }
        metrics.authFailures.incrementAndGet();
        refuse(session, sender, "identity binding failed: " + result, result, "identity binding failed", now);
        return Admission.REFUSED;
    }

    /**
     * Takes {@code name}'s admission turn, or null when no turns are kept (trust-on-first-use
     * pinning is off). Under pinning, the first frames for one name are admitted one at a time,
     * from the pin check until the writer decided the pin a bound frame brought, so that a socket
     * racing another for an unpinned name is checked against the pin the other left, before it
     * binds or changes anything. The turn is the caller's when {@link Turn#taken()}: it must
     * {@link Turn#end()} it once its first frame is refused, admitted without a pin, or its pin
     * decided. Otherwise it is another socket's, to wait for ({@link Turn#ended()}) and ask again.
     */
    Turn turn(String name) {
        if (!pins.enabled() || pins.trust() != null) {
            return null;
        }
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> current = turns.putIfAbsent(name, mine);
        return current == null ? new Turn(name, mine, true) : new Turn(name, current, false);
    }

    /** A name's admission turn ({@link #turn}): this caller's, or another socket's to wait for. */
    final class Turn {
        private final String name;
        private final CompletableFuture<Void> ended;
        private final boolean taken;

        private Turn(String name, CompletableFuture<Void> ended, boolean taken) {
            this.name = name;
            this.ended = ended;
            this.taken = taken;
        }

        /** True when the turn is the caller's. */
        boolean taken() {
            return taken;
        }

        /** Completes once the turn ended: the first frame it admitted is refused, admitted or pinned. */
        CompletableFuture<Void> ended() {
            return ended;
        }

        /** Ends the caller's turn (again: nothing); the sockets waiting for it ask again. */
        void end() {
            if (taken) {
                turns.remove(name, ended);
                ended.complete(null);
            }
        }
    }

    /**
     * The name bound with a valid first-use proof: pin it (decision A10.3). The answer is true
     * when the socket may go on with its first frame, false when it was refused: another key got
     * pinned first (a pin made through another mesh node, or one this node's turns did not
     * order), so the socket is refused as a pin mismatch, and its first frame must not apply.
     * Completes on the writer's thread, once the pin is committed and visible to {@link #check}.
     * {@code beforeRefusal} runs just before a refused socket is closed (the caller revokes the
     * lease its bind made there: once the socket's close unbinds the name, no lease of it is left
     * for the pin's owner to meet).
     */
    CompletableFuture<Boolean> pinAfterBinding(Session session, IdentityPinCommand.Pin pin, Runnable beforeRefusal) {
        return actor.submit(Mutation.of(pin)).handle((outcome, failure) -> {
            if (failure != null) {
                metrics.faults.incrementAndGet();
                LOG.error("cannot pin '{}' to key {}: the name stays unpinned", pin.agent(), pin.keyId(), failure);
                return true;
            }
            if (!(outcome instanceof Outcome.Decided decided) || !(decided.reply() instanceof IdentityPinReply reply)) {
                metrics.unansweredRefusals.incrementAndGet();
                LOG.warn("pinning '{}' to key {} was refused ({}): the name stays unpinned", pin.agent(), pin.keyId(),
                        outcome);
                return true;
            }
            switch (reply.outcome()) {
                case MISMATCH -> {
                    String result = reply.pin().keyId().equals(pin.keyId()) ? "bad_signature" : "unknown_key";
                    beforeRefusal.run();
                    refusePinned(session, pin.agent(), reply.pin().keyId(), result, clock.nowSeconds());
                    return false;
                }
                case STORE_FULL -> {
                    // admitted unpinned, as a first frame without a proof would be (A2.3): refusing every
                    // new signed agent once 65,536 names were pinned would let a flood of names lock the hub
                    metrics.pinsStoreFull.incrementAndGet();
                    if (storeFullLogged.compareAndSet(false, true)) {
                        LOG.warn("identity pin store is full ({} pins, which never expire): '{}' and every later "
                                + "first-use proof are admitted without a pin; counted in "
                                + "synapse_identity_pin_store_full_total, logged once; an operator reclaim frees "
                                + "a place", IdentityPinRegistry.MAX_PINS, pin.agent());
                    } else {
                        LOG.debug("identity pin store is full: '{}' stays unpinned", pin.agent());
                    }
                    return true;
                }
                default -> {
                    LOG.debug("pinned '{}' to key {}", pin.agent(), pin.keyId());
                    return true;
                }
            }
        });
    }

    private void refusePinned(Session session, String name, String keyId, String result, double now) {
        metrics.authFailures.incrementAndGet();
        String store = pins.pinStore();
        String payload = "identity pin: name '" + name + "' is pinned to key " + keyId + " (" + result
                + "). Connect from the machine holding that key, or ask an identity-pin-reclaim ACL operator to run "
                + "synapse identity reclaim --operator=OPERATOR_IDENTITY --expected-key-id=" + keyId
                + " --reason=REASON -- " + name + " after inspecting "
                + (store == null ? "the in-memory pin through the hub operator" : store)
                + "; the hub needs --db for the mandatory audit.";
        refuse(session, name, payload, result, "identity pin mismatch", now);
    }

    private void refuse(Session session, String name, String payload, String result, String reason, double now) {
        ObjectNode e = frames.error(name, payload, now);
        e.put("verification_result", result);
        outbox.close(session, e, 4013, reason);
    }
}
