package dev.synapsehub.net.protocol;

import java.util.concurrent.atomic.AtomicLong;

/** Edge counters exported on {@code /metrics}. */
public final class HubMetrics {
    public final AtomicLong claimsGranted = new AtomicLong();
    public final AtomicLong claimsDenied = new AtomicLong();
    public final AtomicLong releasesGranted = new AtomicLong();
    public final AtomicLong authFailures = new AtomicLong();
    public final AtomicLong rateLimited = new AtomicLong();
    public final AtomicLong takeovers = new AtomicLong();
    public final AtomicLong idempotentReplays = new AtomicLong();
    public final AtomicLong idempotencyConflicts = new AtomicLong();
    public final AtomicLong slowReadersDisconnected = new AtomicLong();
    public final AtomicLong faults = new AtomicLong();
    /** Broadcast bytes queued on the I/O loops and not yet given to every socket (summed over loops). */
    public final AtomicLong fanoutBacklogBytes = new AtomicLong();
    /** Mutating requests answered busy because the broadcast backlog was over its limit. */
    public final AtomicLong fanoutBusyRefusals = new AtomicLong();
    /** TLS handshakes that failed (wrong protocol, untrusted client certificate, ...). */
    public final AtomicLong tlsHandshakeFailures = new AtomicLong();
}
