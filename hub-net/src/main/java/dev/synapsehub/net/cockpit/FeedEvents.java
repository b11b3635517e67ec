package dev.synapsehub.net.cockpit;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.board.BoardTask;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.event.CapabilityCardEvent;
import dev.synapsehub.core.event.CapabilityCardRemovedEvent;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.ClaimDeniedEvent;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.DeadLetterClearedEvent;
import dev.synapsehub.core.event.DeadLetterEscalationEvent;
import dev.synapsehub.core.event.IdempotencyRecordedEvent;
import dev.synapsehub.core.event.LedgerProgressEvent;
import dev.synapsehub.core.event.LedgerTaskEvent;
import dev.synapsehub.core.event.MailboxWatermarkEvent;
import dev.synapsehub.core.event.ResourceOfferedEvent;
import dev.synapsehub.core.journal.JournaledEvent;

import java.util.List;

/**
 * Committed events as the cockpit shows them: what changed and for whom, never message bodies
 * (a chat is sender, target and channel) and never the digests' raw inputs (a denial names its
 * claimant, its reason and a short task digest, as the journal keeps it).
 */
final class FeedEvents {
    static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    /** Paths shown per claim; the rest is counted. */
    static final int MAX_PATHS = 20;

    private FeedEvents() {
    }

    /** The feed item for {@code journaled}, or null for bookkeeping that an operator does not follow. */
    static ObjectNode render(JournaledEvent journaled) {
        CoordinationEvent event = journaled.event();
        if (event instanceof IdempotencyRecordedEvent) {
            return null;
        }
        ObjectNode o = JSON.objectNode();
        o.put("seq", journaled.seq());
        o.put("kind", event.kind());
        if (event instanceof ClaimSnapshotEvent c) {
            o.put("ts", c.ts());
            o.set("claim", claim(c.claim()));
        } else if (event instanceof ClaimReleasedEvent r) {
            o.put("ts", r.ts());
            o.put("task_id", r.taskId());
        } else if (event instanceof ClaimDeniedEvent d) {
            o.put("ts", d.ts());
            o.set("denial", denial(d));
        } else if (event instanceof LedgerTaskEvent t) {
            o.put("ts", t.ts());
            o.set("task", task(t.task(), false));
        } else if (event instanceof LedgerProgressEvent p) {
            o.put("ts", p.ts());
            o.put("task_id", p.note().taskId());
            o.put("author", p.note().author());
            o.put("note_kind", p.note().kind().wire());
        } else if (event instanceof ChatEvent c) {
            o.put("ts", c.ts());
            o.put("sender", c.sender());
            o.put("target", c.target());
            o.put("channel", c.channel());
            o.put("dead_lettered", c.deadLettered());
        } else if (event instanceof DeadLetterEscalationEvent e) {
            o.put("ts", e.ts());
            o.put("target", e.target());
            o.put("count", e.count());
        } else if (event instanceof DeadLetterClearedEvent e) {
            o.put("ts", e.ts());
            o.put("target", e.name());
        } else if (event instanceof MailboxWatermarkEvent m) {
            o.put("ts", m.ts());
            o.put("identity", m.identity());
            o.put("through_seq", m.throughSeq());
        } else if (event instanceof ResourceOfferedEvent r) {
            o.put("ts", r.ts());
        } else if (event instanceof CapabilityCardEvent c) {
            o.put("ts", c.ts());
            o.put("agent", c.agent());
            o.set("card", card(c.agent(), c.cardJson(), c.ts()));
        } else if (event instanceof CapabilityCardRemovedEvent c) {
            o.put("ts", c.ts());
            o.put("agent", c.agent()); // an open page drops the card without a reload
        }
        return o;
    }

    static ObjectNode claim(Claim c) {
        ObjectNode o = JSON.objectNode();
        o.put("task_id", c.taskId());
        o.put("owner", c.owner());
        o.put("status", c.status().name().toLowerCase(java.util.Locale.ROOT));
        o.put("worktree", c.worktree());
        ArrayNode paths = o.putArray("paths");
        List<String> all = c.paths();
        for (int i = 0; i < Math.min(MAX_PATHS, all.size()); i++) {
            paths.add(all.get(i));
        }
        o.put("paths_total", all.size());
        o.put("epoch", c.epoch());
        o.put("version", c.version());
        o.put("claimed_at", c.claimedAt());
        o.put("lease_expires_at", c.leaseExpiresAt());
        o.put("checkpoint", c.checkpoint() != null && !c.checkpoint().isEmpty());
        String note = c.note() == null ? "" : c.note();
        o.put("note", note.length() > 200 ? note.substring(0, 200) + "…" : note);
        return o;
    }

    /**
     * A persistent card as the cockpit lists it: who, what it offers and whether its signature
     * held, never its contracts or meta (a card may carry up to the frame limit of those).
     */
    static ObjectNode card(String agent, String cardJson, double registeredAt) {
        ObjectNode o = JSON.objectNode();
        o.put("agent", agent);
        com.fasterxml.jackson.databind.JsonNode card;
        try {
            card = CARDS.readTree(cardJson);
        } catch (java.io.IOException e) { // the writer only keeps objects; say so rather than fail the view
            card = JSON.objectNode();
            o.put("unreadable", true);
        }
        String description = card.path("description").asText("");
        o.put("description", description.length() > 200 ? description.substring(0, 200) + "…" : description);
        ArrayNode skills = o.putArray("skills");
        for (com.fasterxml.jackson.databind.JsonNode skill : card.path("skills")) {
            if (skills.size() < MAX_PATHS) {
                skills.add(skill.asText());
            }
        }
        o.put("model", card.path("model").asText(""));
        o.put("project", card.path("project").asText(""));
        o.put("signature_status", card.path("verification").path("result").asText("missing_signature"));
        o.put("dispatchable", card.path("dispatchable").asBoolean(true));
        o.put("registered_at", registeredAt);
        return o;
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper CARDS = new com.fasterxml.jackson.databind.ObjectMapper();

    static ObjectNode denial(ClaimDeniedEvent d) {
        ObjectNode o = JSON.objectNode();
        o.put("ts", d.ts());
        o.put("claimant", d.claimant());
        o.put("reason", d.reasonCode());
        o.put("task_digest", d.taskIdSha256() == null ? "" : d.taskIdSha256().substring(0, Math.min(12, d.taskIdSha256().length())));
        o.put("path_count", d.pathCount());
        return o;
    }

    static ObjectNode task(BoardTask t, boolean ready) {
        ObjectNode o = JSON.objectNode();
        o.put("task_id", t.taskId());
        o.put("title", t.title());
        o.put("status", t.status().wire());
        ArrayNode deps = o.putArray("depends_on");
        t.dependsOn().forEach(deps::add);
        o.put("suggested_owner", t.suggestedOwner());
        o.put("project", t.project());
        o.put("version", t.version());
        o.put("updated_at", t.updatedAt());
        o.put("ready", ready);
        return o;
    }
}
