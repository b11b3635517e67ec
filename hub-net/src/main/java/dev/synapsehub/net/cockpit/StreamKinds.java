package dev.synapsehub.net.cockpit;

import dev.synapsehub.core.command.MemoryCommand;
import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import io.netty.handler.codec.http.QueryStringDecoder;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code kinds} an event stream may keep: every committed kind the feed carries, and the
 * cockpit's own {@code presence} and {@code cluster}. An unknown kind is refused, since a
 * stream filtered on it would stay open and carry nothing.
 */
final class StreamKinds {
    /** The journal's kinds (contract §12.3) but idempotency bookkeeping, which the feed drops. */
    static final Set<String> COMMITTED = committed();
    private static final Set<String> OWN = Set.of("presence", "cluster");

    private StreamKinds() {
    }

    private static Set<String> committed() {
        Set<String> all = new HashSet<>(List.of("release", "claim_denial", "channel", "identity_pin",
                "identity_pin_reclaim", "chat", "ledger_task", "ledger_progress", "resource",
                "delivery_receipt_requested", "delivery_receipt_immediate", "delivery_receipt_deferred",
                "delivery_receipt_expired", "delivery_receipt_outbox_delivered", "mailbox_watermark",
                "dead_letter_escalation", "dead_letter_cleared", "capability_card", "capability_card_removed"));
        Arrays.stream(ClaimSnapshotEvent.Kind.values()).map(ClaimSnapshotEvent.Kind::label).forEach(all::add);
        Arrays.stream(MemoryCommand.Kind.values()).map(MemoryCommand.Kind::eventKind).forEach(all::add);
        all.addAll(AuditRecordEvent.KINDS);
        return Set.copyOf(all);
    }

    /** The kinds asked for (comma-separated, repeatable); empty for all. */
    static Set<String> of(QueryStringDecoder query) {
        Set<String> kinds = new HashSet<>();
        List<String> asked = query.parameters().get("kinds");
        if (asked != null) {
            for (String k : asked) {
                Arrays.stream(k.split(",")).map(String::strip).filter(s -> !s.isEmpty()).forEach(kinds::add);
            }
        }
        for (String kind : kinds) {
            if (!OWN.contains(kind) && !COMMITTED.contains(kind)) {
                throw new ViewQuery.BadParameter("kinds", "'kinds' names '" + kind + "', which the feed never carries");
            }
        }
        return kinds;
    }
}
