package dev.synapsehub.core.messaging;

import java.util.List;
import java.util.Map;

/**
 * The immediate delivery verdict of a chat (§8.4), for {@code delivery_receipt} and
 * {@code recipient_liveness_warning}.
 *
 * @param recipients live logical recipients
 * @param reason {@code ""}, {@code no_online_recipient} or {@code no_live_recipient}
 */
public record ReceiptVerdict(boolean delivered, List<String> recipients, List<String> matchedRecipients,
        List<String> staleRecipients, String reason, boolean deadLettered, Map<String, String> wakeCapabilities) {
    public ReceiptVerdict {
        recipients = List.copyOf(recipients);
        matchedRecipients = List.copyOf(matchedRecipients);
        staleRecipients = List.copyOf(staleRecipients);
        wakeCapabilities = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(wakeCapabilities));
    }
}
