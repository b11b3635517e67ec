package dev.synapsehub.net.protocol;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One broadcast batch's bytes in the fan-out backlog, counted once however many I/O loops hold
 * a share of it (they share one buffer), and taken off when the last of them lets go.
 */
final class BacklogShare {
    private final AtomicLong backlog;
    private final long bytes;
    private final AtomicInteger holders;

    /** Adds {@code bytes} to {@code backlog} for {@code holders} loops to release. */
    BacklogShare(AtomicLong backlog, long bytes, int holders) {
        this.backlog = backlog;
        this.bytes = bytes;
        this.holders = new AtomicInteger(holders);
        if (holders > 0) {
            backlog.addAndGet(bytes);
        }
    }

    /** One holder is done with the batch; the last one takes its bytes off the backlog. */
    void release() {
        if (holders.decrementAndGet() == 0) {
            backlog.addAndGet(-bytes);
        }
    }
}
