package dev.synapsehub.core.event;

/**
 * A journaled fact. Events are the only thing that changes coordination state, and the same
 * {@code apply} consumes them live and on replay.
 */
public sealed interface CoordinationEvent
        permits ClaimSnapshotEvent, ClaimReleasedEvent, ClaimDeniedEvent, IdempotencyRecordedEvent,
        LedgerTaskEvent, LedgerProgressEvent, ResourceOfferedEvent, ChatEvent, DeliveryReceiptRequestedEvent,
        DeliveryReceiptImmediateEvent, DeliveryReceiptDeferredEvent, DeliveryReceiptExpiredEvent,
        MailboxWatermarkEvent, DeadLetterEscalationEvent, DeadLetterClearedEvent, AuditRecordEvent, ChannelEvent,
        ReceiptsDeliveredEvent, CapabilityCardEvent, CapabilityCardRemovedEvent,
        IdentityPinEvent, IdentityPinReclaimEvent, MemoryEvent {
    /** Hub time at which the event was decided, Unix seconds. */
    double ts();

    /** The journal's kind label for this event (wire contract §12.3). */
    String kind();

    /** How hard the event must be committed. */
    Durability durability();
}
