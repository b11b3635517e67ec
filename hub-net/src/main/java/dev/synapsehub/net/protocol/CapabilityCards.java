package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.Clock;
import dev.synapsehub.net.auth.SigningTime;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.card.PersistentCard;
import dev.synapsehub.core.command.CardCommand;
import dev.synapsehub.core.command.CardRemoveCommand;
import dev.synapsehub.core.identity.IdentityPin;
import dev.synapsehub.core.reply.CardRemovedReply;
import dev.synapsehub.core.messaging.AddressMatcher;
import dev.synapsehub.net.wire.FieldCoercion;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Capability cards (contract §5.15–5.16, §6.6). A live card is edge memory: it lives 300 s
 * without a re-advertise and vanishes when the connection that advertised it closes (at most
 * {@link #MAX_CARDS}, oldest dropped). A persistent card ({@code persist: true}) is
 * coordination state: journaled through the writer, it outlives its connection, the 300 s and
 * a restart, and the manifest lists it whenever its identity has no live card.
 */
public final class CapabilityCards {
    /** Live card liveness without a refresh. */
    public static final double LIVENESS_SECONDS = 300.0;
    /** Cards kept at most. */
    public static final int MAX_CARDS = 4096;
    private static final int MAX_LIST = 256;

    private record Card(String advertiser, double advertisedAt, ObjectNode json) {
    }

    private final CoordinationActor actor;
    private final Outbox outbox;
    private final HubFrames frames;
    private final WireJson json;
    private final Clock clock;
    private final LinkedHashMap<String, Card> cards = new LinkedHashMap<>();
    private final CardSignature signatures = new CardSignature();

    /** The cards of one hub: persistent ones read through {@code actor}, every change published via {@code outbox}. */
    public CapabilityCards(CoordinationActor actor, Outbox outbox, HubFrames frames, WireJson json, Clock clock) {
        this.actor = actor;
        this.outbox = outbox;
        this.frames = frames;
        this.json = json;
        this.clock = clock;
    }

    /** {@code advertise}: validate, store, broadcast {@code capability_advertised}. */
    void advertise(Request r, VerbSupport support) {
        for (String field : List.of("description", "model", "manifest_digest", "agent")) {
            if (support.rejectNonText(r, field)) {
                return;
            }
        }
        for (String field : List.of("persist", "dispatchable")) {
            JsonNode v = r.get(field);
            if (v != null && !v.isNull() && !v.isBoolean()) {
                support.malformed(r, field, "Field '" + field + "' must be a boolean.");
                return;
            }
        }
        String agent = FieldCoercion.text(r.get("agent"));
        agent = PythonWhitespace.isBlank(agent) ? r.sender() : PythonWhitespace.strip(agent);
        if (!agent.equals(r.sender()) && !AddressMatcher.logicalName(r.sender()).equals(agent)) {
            ObjectNode e = frames.error(r.sender(), "You may advertise only for yourself or the identity whose"
                    + " -rx sidecar you are.", support.now());
            e.put("error_code", "not_authorised");
            outbox.send(r.session(), e);
            return;
        }
        boolean persist = r.get("persist") != null && r.get("persist").asBoolean(false);
        if (persist && AddressMatcher.projectPrefix(agent).isEmpty()) {
            support.malformed(r, "persist", "A persistent card needs a <project>/<seat> identity.");
            return;
        }
        double now = support.now();
        JsonNode signature = r.get("signature");
        if (signature != null && !signature.isNull() && !signature.isObject()) {
            support.malformed(r, "signature", "Field 'signature' must be an object.");
            return;
        }
        boolean signed = signature != null && signature.isObject() && signature.size() > 0;
        CardSignature.Verification verified = signed ? signatures.verify(r.frame(), agent, SigningTime.of(clock), now) : null;
        if (verified != null && !verified.valid()) {
            // a bad signature changes nothing: no card, no broadcast, no registration
            ObjectNode e = frames.error(r.sender(), "Capability card signature refused: " + verified.result()
                    + " (" + verified.detail() + ").", now);
            e.put("error_code", "bad_signature");
            e.put("field", "signature");
            e.put("verification_result", verified.result());
            outbox.send(r.session(), e);
            return;
        }
        if (verified == null) {
            register(r, support, agent, persist, signature, null, now);
            return;
        }
        // a signed card of a pinned identity must be signed by the pinned key (read from committed state)
        String cardAgent = agent;
        support.afterRead(r, "checking a signed card against the identity pin",
                actor.read(s -> s.pins().find(cardAgent)), pin -> {
                    String mismatch = pin.map(p -> pinMismatch(p, signature)).orElse(null);
                    if (mismatch != null) {
                        refusePinMismatch(r, cardAgent, pin.get(), mismatch);
                    } else {
                        register(r, support, cardAgent, persist, signature, verified, now);
                    }
                });
    }

    /** Why {@code signature} is not by the key {@code pin} holds, or null when it is. */
    private static String pinMismatch(IdentityPin pin, JsonNode signature) {
        String keyId = FieldCoercion.text(signature.get("key_id"));
        String publicKey = FieldCoercion.text(signature.get("public_key"));
        if (!pin.keyId().equals(keyId)) {
            return "the card is signed with key " + keyId + ", the identity is pinned to key " + pin.keyId();
        }
        if (!pin.publicKey().equals(publicKey)) {
            return "the card's public key for " + keyId + " is not the pinned one";
        }
        return null;
    }

    /** {@code error} {@code card_key_not_pinned}: nothing stored, registered or broadcast. */
    private void refusePinMismatch(Request r, String agent, IdentityPin pin, String why) {
        ObjectNode e = frames.error(r.sender(), "Capability card refused: '" + agent + "' is pinned to key "
                + pin.keyId() + " and a signed card must be signed by it (" + why + ").", clock.nowSeconds());
        e.put("error_code", "card_key_not_pinned");
        e.put("field", "signature");
        e.put("pinned_key_id", pin.keyId());
        outbox.send(r.session(), e);
    }

    /** Builds the card and keeps it live, or registers it persistently first ({@code verified} null: unsigned). */
    private void register(Request r, VerbSupport support, String agent, boolean persist, JsonNode signature,
                          CardSignature.Verification verified, double now) {
        boolean signed = verified != null;
        ObjectNode card = json.object();
        card.put("agent", agent);
        card.put("description", orEmpty(FieldCoercion.text(r.get("description"))));
        HubFrames.putStrings(card, "skills", cleanList(r.get("skills")));
        HubFrames.putStrings(card, "task_classes", cleanList(r.get("task_classes")));
        card.put("model", orEmpty(FieldCoercion.text(r.get("model"))));
        card.put("project", AddressMatcher.projectPrefix(agent));
        card.put("manifest_digest", orEmpty(FieldCoercion.text(r.get("manifest_digest"))));
        card.set("contracts", contracts(r.get("contracts")));
        JsonNode meta = r.get("meta");
        card.set("meta", meta != null && meta.isObject() ? meta.deepCopy() : json.object());
        card.set("signature", signed ? signature.deepCopy() : json.object());
        ObjectNode verification = card.putObject("verification");
        if (verified == null) {
            verification.put("result", "missing_signature");
            verification.put("detail", "the card is not signed");
        } else {
            verification.put("result", verified.result());
            verification.put("detail", verified.detail());
            verification.put("key_id", verified.keyId());
            verification.put("sequence", verified.sequence());
            verification.put("card_digest", verified.cardDigest());
            HubFrames.putFloat(verification, "signed_at", verified.signedAt());
            if (verified.expiresAt() != null) {
                HubFrames.putFloat(verification, "expires_at", verified.expiresAt());
            }
        }
        HubFrames.putFloat(card, "advertised_at", now);
        if (persist) {
            card.put("persistent", true);
            JsonNode d = r.get("dispatchable");
            card.put("dispatchable", d == null || d.isNull() || d.booleanValue());
        }
        if (!persist) {
            publish(r, agent, card, now);
            return;
        }
        String cardAgent = agent;
        support.submit(r, new CardCommand(r.sender(), agent, frames.write(card)), false, null,
                d -> publish(d.request(), cardAgent, card, now)); // as journaled
    }

    /** Keeps {@code card} live for {@code agent} and broadcasts it. */
    private void publish(Request r, String agent, ObjectNode card, double now) {
        synchronized (this) {
            cards.remove(agent);
            cards.put(agent, new Card(r.sender(), now, card));
            while (cards.size() > MAX_CARDS) {
                Iterator<String> it = cards.keySet().iterator();
                it.next();
                it.remove();
            }
        }
        ObjectNode f = frames.envelope("all", "capability_advertised", "Capabilities of " + agent, now);
        f.put("agent", agent);
        f.set("card", card.deepCopy());
        String text = frames.write(f);
        outbox.broadcast(text, r.session());
    }

    /**
     * {@code card_remove} (ours): withdraws the identity's cards, the persistent one through the
     * writer (journaled, so it stays gone after a restart) and the live one; answered privately
     * with {@code card_removed} ({@code agent}, {@code removed_persistent}, {@code removed_live}).
     * The same identities as {@code advertise}: the sender or the one whose {@code -rx} sidecar it is.
     */
    void remove(Request r, VerbSupport support) {
        if (support.rejectNonText(r, "agent")) {
            return;
        }
        String agent = FieldCoercion.text(r.get("agent"));
        agent = PythonWhitespace.isBlank(agent) ? r.sender() : PythonWhitespace.strip(agent);
        if (!agent.equals(r.sender()) && !AddressMatcher.logicalName(r.sender()).equals(agent)) {
            ObjectNode e = frames.error(r.sender(), "You may remove only your own card or that of the identity"
                    + " whose -rx sidecar you are.", support.now());
            e.put("error_code", "not_authorised");
            e.put("field", "agent");
            outbox.send(r.session(), e);
            return;
        }
        String cardAgent = agent;
        support.submit(r, new CardRemoveCommand(r.sender(), agent), false, null, d -> {
            Request req = d.request();
            boolean live;
            synchronized (this) {
                live = cards.remove(cardAgent) != null;
            }
            ObjectNode f = frames.envelope(req.sender(), "card_removed", "Capability card of " + cardAgent
                    + " removed", d.at());
            f.put("agent", cardAgent);
            f.put("removed_persistent", d.reply() instanceof CardRemovedReply c && c.removed());
            f.put("removed_live", live);
            outbox.send(req.session(), f);
        });
    }

    /**
     * {@code manifest_request}: the cards sorted by agent, privately: each identity's live card,
     * else its persistent one (read through the writer, committed state only).
     */
    void manifest(Request r, VerbSupport support) {
        support.afterRead(r, "answering manifest_request", actor.read(s -> s.cards().all()), persistent -> {
            double now = clock.nowSeconds();
            Map<String, ObjectNode> merged = new TreeMap<>();
            for (PersistentCard c : persistent) {
                if (json.parse(c.cardJson()) instanceof ObjectNode card) {
                    merged.put(c.agent(), card);
                }
            }
            merged.putAll(live(now));
            ObjectNode f = frames.envelope(r.sender(), "manifest_snapshot", "Capability manifest", now);
            ArrayNode manifest = f.putArray("manifest");
            merged.values().forEach(manifest::add);
            outbox.send(r.session(), f);
        });
    }

    /** Live cards by agent, sorted; expired ones are forgotten. */
    synchronized Map<String, ObjectNode> live(double now) {
        cards.values().removeIf(c -> now - c.advertisedAt() > LIVENESS_SECONDS);
        Map<String, ObjectNode> out = new TreeMap<>();
        cards.forEach((agent, c) -> out.put(agent, c.json().deepCopy()));
        return out;
    }

    /** A connection bound to {@code name} closed: its live cards vanish. */
    public synchronized void dropFor(String name) {
        if (name != null) {
            cards.values().removeIf(c -> c.advertiser().equals(name));
        }
    }

    private ArrayNode contracts(JsonNode raw) {
        ArrayNode out = json.mapper().createArrayNode();
        List<JsonNode> entries = new ArrayList<>();
        Map<String, JsonNode> keyed = new LinkedHashMap<>();
        if (raw != null && raw.isArray()) {
            raw.forEach(entries::add);
        } else if (raw != null && raw.isObject()) {
            if (raw.has("task_class") || raw.has("task")) {
                entries.add(raw);
            } else {
                raw.fields().forEachRemaining(e -> keyed.put(e.getKey(), e.getValue()));
            }
        }
        Set<String> seen = new LinkedHashSet<>();
        for (Map.Entry<String, JsonNode> e : keyed.entrySet()) {
            addContract(out, seen, e.getKey(), e.getValue());
        }
        for (JsonNode e : entries) {
            addContract(out, seen, null, e);
        }
        return out;
    }

    private void addContract(ArrayNode out, Set<String> seen, String keyClass, JsonNode c) {
        if (c == null || !c.isObject() || out.size() >= MAX_LIST) {
            return;
        }
        String taskClass = keyClass != null ? keyClass : FieldCoercion.text(c.has("task_class") ? c.get("task_class") : c.get("task"));
        if (PythonWhitespace.isBlank(taskClass) || !seen.add(PythonWhitespace.strip(taskClass))) {
            return;
        }
        ObjectNode o = out.addObject();
        o.put("task_class", PythonWhitespace.strip(taskClass));
        JsonNode in = c.has("input_schema") ? c.get("input_schema") : c.get("inputs");
        JsonNode outSchema = c.has("output_schema") ? c.get("output_schema") : c.get("outputs");
        o.set("input_schema", in != null && in.isObject() ? in.deepCopy() : json.object());
        o.set("output_schema", outSchema != null && outSchema.isObject() ? outSchema.deepCopy() : json.object());
        HubFrames.putStrings(o, "preconditions", cleanList(c.get("preconditions")));
        HubFrames.putStrings(o, "postconditions", cleanList(c.get("postconditions")));
    }

    /** Trimmed strings, blanks and duplicates dropped; a non-array is empty. */
    private static List<String> cleanList(JsonNode v) {
        Set<String> out = new LinkedHashSet<>();
        if (v != null && v.isArray()) {
            for (JsonNode e : v) {
                if (e.isTextual() && !PythonWhitespace.isBlank(e.textValue()) && out.size() < MAX_LIST) {
                    out.add(PythonWhitespace.strip(e.textValue()));
                }
            }
        }
        return new ArrayList<>(out);
    }

    private static String orEmpty(String s) {
        return s == null ? "" : s;
    }
}
