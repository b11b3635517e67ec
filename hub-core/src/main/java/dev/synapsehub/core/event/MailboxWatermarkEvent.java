package dev.synapsehub.core.event;

/**
 * An identity's receiver watermark advanced (§8.3, §5.3); apply keeps the maximum, bounded by
 * the event's own seq (replay rule §12.5.9), and clears the identity's pending seqs up to it.
 *
 * @param throughSeq every directed message up to this journal seq is accounted for
 */
public record MailboxWatermarkEvent(double ts, String identity, long throughSeq, Source source)
        implements CoordinationEvent {

    /** What advanced the watermark. */
    public enum Source {
        /** A registration {@code since_seq}. */
        CURSOR("cursor"),
        /** An {@code ack}. */
        ACK("ack");

        private final String wire;

        Source(String wire) {
            this.wire = wire;
        }

        /** The payload spelling. */
        public String wire() {
            return wire;
        }
    }

    @Override
    public String kind() {
        return "mailbox_watermark";
    }

    @Override
    public Durability durability() {
        return Durability.NORMAL;
    }
}
