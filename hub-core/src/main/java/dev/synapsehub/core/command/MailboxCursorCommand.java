package dev.synapsehub.core.command;

import dev.synapsehub.core.PythonWhitespace;

/**
 * A registration heartbeat with {@code mailbox: true} and {@code since_seq} (§8.3 step 2):
 * advance the identity's watermark to {@code min(sinceSeq, highest journal seq)} if higher.
 *
 * @param identity the authorised {@code mailbox_for} identity, or null/blank for the connection name
 */
public record MailboxCursorCommand(String agent, String identity, long sinceSeq) implements MessagingCommand {
    /** The identity acting: {@code identity} if given, else the connection name. */
    public String effectiveIdentity() {
        return PythonWhitespace.isBlank(identity) ? agent : PythonWhitespace.strip(identity);
    }
}
