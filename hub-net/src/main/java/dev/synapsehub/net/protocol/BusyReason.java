package dev.synapsehub.net.protocol;

/**
 * Why the edge answers a request {@code busy} before it reaches the writer: delivery is behind.
 * Each refusal counts under the first reason that holds, in this order.
 */
public enum BusyReason {
    /** More broadcast bytes wait on the I/O loops than {@code --max-fanout-backlog-mb}. */
    FANOUT_BACKLOG("fanout_backlog"),
    /** An I/O loop owes its sockets more writes for waiting broadcasts than {@code --max-fanout-writes}. */
    FANOUT_WRITES("fanout_writes"),
    /** A broadcast has waited longer than {@code --max-fanout-delay-ms} for one of its sockets. */
    FANOUT_DELAY("fanout_delay"),
    /** More replies and broadcasts wait for the outbox thread than its busy threshold. */
    OUTBOX_QUEUE("outbox_queue");

    private final String label;

    BusyReason(String label) {
        this.label = label;
    }

    /** The {@code reason} label on {@code /metrics}. */
    public String label() {
        return label;
    }
}
