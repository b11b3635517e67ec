package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.messaging.AddressMatcher;
import dev.synapsehub.core.messaging.OnlineAgent;
import dev.synapsehub.core.messaging.ReceiptVerdict;
import dev.synapsehub.core.reply.ChatReply;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;

import java.util.ArrayList;
import java.util.List;

/**
 * Who can consume a chat now (§8.6): the bound agents with their roles, wake capability and
 * consume-liveness, and the warning a sender gets when a recipient may not read soon.
 */
final class RecipientLiveness {
    private final SessionRegistry registry;
    private final HubFrames frames;
    private final LivenessSettings settings;

    RecipientLiveness(SessionRegistry registry, HubFrames frames, LivenessSettings settings) {
        this.registry = registry;
        this.frames = frames;
        this.settings = settings;
    }

    /** Every bound connection with its roles, wake capability and consume-liveness (§8.6). */
    List<OnlineAgent> onlineAgents(double now) {
        // one pass over the bound names, lookups for liveness: no table is copied per chat
        List<SessionRegistry.Presence> bound = registry.presence();
        List<OnlineAgent> out = new ArrayList<>(bound.size());
        for (SessionRegistry.Presence p : bound) {
            String logical = AddressMatcher.logicalName(p.name());
            out.add(new OnlineAgent(p.name(), p.roles(), consumeLive(logical, now), p.wake()));
        }
        return out;
    }

    private boolean consumeLive(String logical, double now) {
        if (!settings.tracked()) {
            return true; // --no-warn-stale-recipients: a bound socket is a live recipient
        }
        if (LiveWaiters.has(logical, now, settings.waiterWindow(), registry::lastSeenIfBound)) {
            return true;
        }
        Double reaction = registry.lastReactionIfBound(logical);
        return reaction != null && now - reaction <= settings.recipientWindow();
    }

    /**
     * The {@code recipient_liveness_warning} for the sender of a directed chat that reached a
     * stale or only a passive recipient, or null when every matched recipient will read it or
     * stale-recipient tracking is off (socket delivery is then taken as delivery).
     */
    ObjectNode warning(String sender, ChatReply c, double at) {
        ReceiptVerdict v = c.verdict();
        if (!settings.tracked() || !c.directed() || v.matchedRecipients().isEmpty()) {
            return null;
        }
        List<String> passive = new ArrayList<>();
        v.wakeCapabilities().forEach((name, cap) -> {
            if ("passive".equals(cap)) {
                passive.add(name);
            }
        });
        if (v.staleRecipients().isEmpty() && passive.isEmpty()) {
            return null;
        }
        String says = passive.isEmpty()
                ? "Some recipients may not read this soon: " + String.join(", ", v.matchedRecipients())
                : String.join(", ", passive) + " reached only a passive receiver — socket delivery does not"
                + " prove an agent pane was woken; a directed message may sit unread";
        ObjectNode w = frames.envelope(sender, "recipient_liveness_warning", says, at);
        w.put("message_target", ReceiptFrames.messageTarget(c.target()));
        w.put("message_id", c.stamp().msgId());
        w.put("delivered", v.delivered());
        w.put("dead_lettered", v.deadLettered());
        w.put("reason", v.reason());
        HubFrames.putStrings(w, "matched_recipients", v.matchedRecipients());
        HubFrames.putStrings(w, "stale_recipients", v.staleRecipients());
        HubFrames.putStrings(w, "passive_recipients", passive);
        ObjectNode wake = w.putObject("recipient_wake_capabilities");
        v.wakeCapabilities().forEach(wake::put);
        return w;
    }
}
