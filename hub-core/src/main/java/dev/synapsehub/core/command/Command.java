package dev.synapsehub.core.command;

/**
 * A validated request to the coordination core; the edge builds these from wire frames.
 * Sub-families: {@link ClaimFamilyCommand} (leases), {@link BoardCommand} (the shared task
 * board), {@link ResourceOfferCommand}, {@link MessagingCommand} (chat and mailbox), and
 * {@link AuditRecordCommand} (an audit record authored outside the core).
 */
public sealed interface Command permits ClaimFamilyCommand, BoardCommand, ResourceOfferCommand, MessagingCommand,
        AuditRecordCommand, ChannelCommand, CardCommand, CardRemoveCommand, IdentityPinCommand,
        MemoryCommand, OperatorReleaseCommand {
    /** The bound name of the agent acting. */
    String agent();
}
