package dev.synapsehub.core.reply;

import dev.synapsehub.core.command.MemoryCommand;

/**
 * A memory record was journaled ({@code recall_logged} or {@code finding_recorded}).
 *
 * @param kind which record
 * @param seq the journal seq the record took (shown only for a keyed request on a journaled hub, PM6)
 */
public record MemoryReply(MemoryCommand.Kind kind, long seq) implements Reply {
}
