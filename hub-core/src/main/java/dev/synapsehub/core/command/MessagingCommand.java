package dev.synapsehub.core.command;

/** A chat or mailbox command: chat, ack, a registration cursor, agent activity, or receipts delivered. */
public sealed interface MessagingCommand extends Command
        permits ChatCommand, AckCommand, MailboxCursorCommand, AgentActivityCommand, ReceiptsDeliveredCommand {
}
