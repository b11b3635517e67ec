package dev.synapsehub.net.protocol;

import dev.synapsehub.core.actor.ActorObserver;
import dev.synapsehub.core.command.ClaimCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.IdempotencyRecordedEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.AddressMatcher;
import io.prometheus.metrics.core.metrics.Histogram;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Edge counters and the latency histograms exported on {@code /metrics}. The histograms are fed
 * from the actor thread ({@link ActorObserver}) and the I/O loops (fan-out); recording one costs
 * a few lock-free increments.
 */
public final class HubMetrics implements ActorObserver {
    private static final double NANOS_PER_SECOND = 1e9;

    public final AtomicLong claimsGranted = new AtomicLong();
    public final AtomicLong claimsDenied = new AtomicLong();
    public final AtomicLong releasesGranted = new AtomicLong();
    public final AtomicLong authFailures = new AtomicLong();
    /** Authentication attempts refused unchecked while their host was in a back-off ({@code --auth-fail-limit}). */
    public final AtomicLong authFailuresThrottled = new AtomicLong();
    public final AtomicLong rateLimited = new AtomicLong();
    /** Frames refused by the per-host rate limit ({@code --host-rate}). */
    public final AtomicLong hostRateLimited = new AtomicLong();
    public final AtomicLong takeovers = new AtomicLong();
    public final AtomicLong idempotentReplays = new AtomicLong();
    public final AtomicLong idempotencyConflicts = new AtomicLong();
    /** Committed chats to a name, role or pattern (not {@code all}, not a channel). */
    public final AtomicLong chatsDirected = new AtomicLong();
    /** Committed chats to everyone. */
    public final AtomicLong chatsBroadcast = new AtomicLong();
    /** Committed chats of any kind, channel chats included. */
    public final AtomicLong chats = new AtomicLong();
    /** Idempotency records committed: keyed mutations applied for the first time. */
    public final AtomicLong idempotencyRecords = new AtomicLong();
    public final AtomicLong slowReadersDisconnected = new AtomicLong();
    public final AtomicLong faults = new AtomicLong();
    /** Valid first-use proofs admitted without a pin because the pin store was full. */
    public final AtomicLong pinsStoreFull = new AtomicLong();
    /** First frames that waited for another socket's first frame for their name to be admitted and pinned. */
    public final AtomicLong identityPinWaits = new AtomicLong();
    /** Chats held for a name whose first-use pin was being decided, dropped because its admission was refused. */
    public final AtomicLong heldDeliveriesDropped = new AtomicLong();
    /** Mutations no request waited for (dead-letter clearing, mailbox watermarks, acks) that were refused. */
    public final AtomicLong unansweredRefusals = new AtomicLong();
    /** Mailbox replays deferred because the hub was busy or their read was refused or failed ({@link DeferredReplays}). */
    public final AtomicLong mailboxReplaysDeferred = new AtomicLong();
    /** Deferred mailbox replays still waiting to be retried. */
    public final AtomicLong mailboxReplaysWaiting = new AtomicLong();
    /** Broadcast bytes queued on the I/O loops and not yet given to every socket (a batch counts once). */
    public final AtomicLong fanoutBacklogBytes = new AtomicLong();
    /** Requests answered busy because delivery was behind (any {@link BusyReason}). */
    public final AtomicLong fanoutBusyRefusals = new AtomicLong();
    /** {@link #fanoutBusyRefusals} by the reason that held (filled once here, never resized). */
    private final java.util.Map<BusyReason, AtomicLong> busyByReason = new java.util.EnumMap<>(BusyReason.class);
    /** Connections the listening socket failed to accept (out of file descriptors, ...). */
    public final AtomicLong acceptFailures = new AtomicLong();
    /** TLS handshakes that failed (wrong protocol, untrusted client certificate, ...). */
    public final AtomicLong tlsHandshakeFailures = new AtomicLong();
    /** Server certificate and key pairs re-read after a change and served from then on. */
    public final AtomicLong tlsCertificateReloads = new AtomicLong();
    /** Changed server certificate and key pairs that did not load (the previous pair stays in use). */
    public final AtomicLong tlsCertificateReloadFailures = new AtomicLong();
    /** Sockets closed at the TCP accept: too many from their host, or in all, not yet upgraded. */
    public final AtomicLong socketsRefusedBeforeUpgrade = new AtomicLong();
    /** Sockets closed for sending no complete HTTP request (upgrade or endpoint) within the auth timeout. */
    public final AtomicLong upgradeTimeouts = new AtomicLong();
    /** Valid first-use identity proofs admitted without a pin because the first-use replay pool was full. */
    public final AtomicLong identityProofsUnpinned = new AtomicLong();

    /** Journal commit latency (one observation per transaction). */
    final Histogram commitLatency = Histogram.builder()
            .name("synapse_commit_latency_seconds")
            .help("Journal commit latency: one observation per transaction (group commit).")
            .classicOnly()
            .classicUpperBounds(0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                    0.1, 0.25, 0.5, 1, 2.5)
            .build();
    /** Mutations per journal transaction. */
    final Histogram batchSize = Histogram.builder()
            .name("synapse_commit_batch_size")
            .help("Mutations decided into one journal transaction.")
            .classicOnly()
            .classicUpperBounds(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
            .build();
    /** Time to decide one claim on the actor thread. */
    final Histogram claimDecide = Histogram.builder()
            .name("synapse_claim_decide_seconds")
            .help("Time the writer spends deciding one claim (expiry included, journal excluded).")
            .classicOnly()
            .classicUpperBounds(0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025,
                    0.0005, 0.001, 0.01)
            .build();
    /** Publication of a broadcast batch until one I/O loop has handed it to all its sockets. */
    final Histogram fanoutDelay = Histogram.builder()
            .name("synapse_fanout_delay_seconds")
            .help("From a broadcast's publication until an I/O loop has handed it to every socket it serves"
                    + " (one observation per loop and batch).")
            .classicOnly()
            .classicUpperBounds(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                    0.5, 1, 2.5, 5)
            .build();

    public HubMetrics() {
        for (BusyReason reason : BusyReason.values()) {
            busyByReason.put(reason, new AtomicLong());
        }
    }

    /** A request was answered busy for {@code reason}: counted in the total and under its reason. */
    public void busyRefused(BusyReason reason) {
        fanoutBusyRefusals.incrementAndGet();
        busyByReason.get(reason).incrementAndGet();
    }

    /** Requests answered busy for {@code reason} so far. */
    public long busyRefusals(BusyReason reason) {
        return busyByReason.get(reason).get();
    }

    @Override
    public void committed(long nanos, int commands, int events) {
        commitLatency.observe(nanos / NANOS_PER_SECOND);
        batchSize.observe(commands);
    }

    @Override
    public void decided(Command command, long nanos) {
        if (command instanceof ClaimCommand) {
            claimDecide.observe(nanos / NANOS_PER_SECOND);
        }
    }

    /** Counts the chats and idempotency records of a committed batch (on the writer: a pass, no allocation). */
    @Override
    public void published(List<JournaledEvent> committed) {
        for (JournaledEvent e : committed) {
            if (e.event() instanceof ChatEvent c) {
                chats.incrementAndGet();
                if (c.channel() == null) {
                    (AddressMatcher.isBroadcast(c.target()) ? chatsBroadcast : chatsDirected).incrementAndGet();
                }
            } else if (e.event() instanceof IdempotencyRecordedEvent) {
                idempotencyRecords.incrementAndGet();
            }
        }
    }

    /** A broadcast batch reached every socket of one I/O loop {@code nanos} after its publication. */
    public void fanoutDelivered(long nanos) {
        fanoutDelay.observe(nanos / NANOS_PER_SECOND);
    }
}
