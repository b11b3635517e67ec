package dev.synapsehub.core.command;

import java.util.Objects;

/**
 * A participant-memory write (wire contract A12): a {@code recall_log} record or an admitted
 * {@code finding}, already parsed, gated and stamped by the edge; the writer only charges the
 * finding quota and journals it.
 *
 * @param agent the bound name (the record's author)
 * @param kind which record
 * @param payloadJson the record as journaled (PM7), a JSON object
 * @param findingQuota admitted findings allowed per name ({@code --max-findings-per-agent}, at least 1)
 */
public record MemoryCommand(String agent, Kind kind, String payloadJson, int findingQuota) implements Command {
    /** The two memory records. */
    public enum Kind {
        /** {@code recall_log}: journaled as {@code recall}. */
        RECALL("recall"),
        /** {@code finding}: journaled as {@code finding}. */
        FINDING("finding");

        private final String eventKind;

        Kind(String eventKind) {
            this.eventKind = eventKind;
        }

        /** The journal kind. */
        public String eventKind() {
            return eventKind;
        }
    }

    public MemoryCommand {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(payloadJson, "payloadJson");
        findingQuota = Math.max(1, findingQuota);
    }
}
