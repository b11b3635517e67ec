package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.Clock;
import dev.synapsehub.net.delivery.Delivery;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.wire.HubFrames;

/**
 * Our extension's declarations of scoped delivery ({@code docs/protocol.md} "Scoped delivery"):
 * the optional {@code delivery} member of the registration frame, and the {@code set_delivery}
 * verb. A declaration the hub cannot read is refused whole with a typed error
 * ({@code invalid_delivery}) and changes nothing. Runs on the connection's event loop; the
 * change itself is applied on the outbox thread.
 */
final class DeliveryVerbs {
    private final Outbox outbox;
    private final HubFrames frames;
    private final Clock clock;

    DeliveryVerbs(Outbox outbox, HubFrames frames, Clock clock) {
        this.outbox = outbox;
        this.frames = frames;
        this.clock = clock;
    }

    /** True for the verbs handled here. */
    static boolean handles(String type) {
        return "set_delivery".equals(type);
    }

    /** {@code set_delivery}: answered {@code delivery_set} once in force, or {@code invalid_delivery}. */
    void handle(Request r) {
        double now = clock.nowSeconds();
        Delivery.Parsed parsed = Delivery.parse(r.get("delivery"));
        if (!parsed.ok()) {
            refuse(r.session(), r.sender(), parsed, now);
            return;
        }
        outbox.scoped().declare(r.session(), parsed.delivery(), ack(r.sender(), parsed.delivery(), false, now));
    }

    /**
     * A connection just bound its name with {@code frame}: its declared delivery, or the hub's
     * default. Only a declaration is answered ({@code delivery_set}, or the typed error after
     * which the default applies); a client that sends none sees no new frame.
     */
    void onRegistered(Session session, ObjectNode frame, double now) {
        JsonNode declared = frame.get("delivery");
        Delivery defaults = outbox.scoped().defaultDelivery();
        JsonNode type = frame.get("type");
        if (type != null && type.isTextual() && handles(PythonWhitespace.strip(type.textValue()).toLowerCase(java.util.Locale.ROOT))) {
            declared = null; // a first frame that is set_delivery: the verb answers it, once
        }
        if (declared == null || declared.isNull()) {
            if (defaults.scoped()) {
                outbox.scoped().declare(session, defaults, null);
            }
            return;
        }
        Delivery.Parsed parsed = Delivery.parse(declared);
        if (!parsed.ok()) {
            refuse(session, session.name(), parsed, now);
            if (defaults.scoped()) {
                outbox.scoped().declare(session, defaults, null);
            }
            return;
        }
        outbox.scoped().declare(session, parsed.delivery(), ack(session.name(), parsed.delivery(), true, now));
    }

    private ObjectNode ack(String target, Delivery delivery, boolean atRegistration, double now) {
        ObjectNode f = frames.envelope(target, "delivery_set", "Claim traffic delivery is now "
                + delivery.mode().wire() + (atRegistration ? " (declared at registration)." : "."), now);
        f.set("delivery", delivery.toJson());
        return f;
    }

    private void refuse(Session session, String sender, Delivery.Parsed parsed, double now) {
        ObjectNode e = frames.error(sender, "Delivery declaration refused: " + parsed.problem()
                + " Nothing was changed.", now);
        e.put("error_code", "invalid_delivery");
        e.put("field", parsed.field());
        outbox.send(session, e);
    }
}
