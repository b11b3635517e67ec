package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.command.ReceiptsDeliveredCommand;
import dev.synapsehub.core.event.DeliveryReceiptDeferredEvent;
import dev.synapsehub.core.event.DeliveryReceiptExpiredEvent;
import dev.synapsehub.core.messaging.OwedReceipt;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.net.session.Session;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Receipts owed to senders (§8.5): sent to the sender's socket when it is bound, else kept for
 * its next registration, and settled in the core's outbox once written to a socket (a write the
 * socket's death cut short leaves the receipt owed).
 */
final class OwedReceipts {
    /**
     * Receipt frames owed to offline senders, kept at most (§8.5): the core's outbox holds as
     * many ({@code MessagingLimits.pendingReceipts}, 1024 by default), evicting the oldest alike:
     * the one first owed longest ago, whoever its sender.
     */
    static final int MAX_OWED_RECEIPTS = 1024;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(OwedReceipts.class);

    private final VerbSupport support;
    private final ReceiptFrames frames;
    private final CoordinationActor actor;
    private final SessionRegistry registry;
    private final Outbox outbox;
    private final HubFrames wire;
    private final HubMetrics metrics;
    private final boolean journaled;
    /**
     * The edge's copy of the core's receipt outbox, by sender: age to the receipt, oldest first.
     * The core holds what survives a restart; this copy lets a registration queue what is owed
     * before its presence update without waiting for the writer. Guarded by itself, as are the
     * two below.
     */
    private final Map<String, TreeMap<Long, Owing>> owed = new HashMap<>();
    /** Every receipt in {@link #owed} by age: the order the core's outbox evicts in. */
    private final TreeMap<Long, Owing> byAge = new TreeMap<>();
    /**
     * The age of each receipt owed or being written: the order in which the core first owed it,
     * kept when a write fails and it is owed again, so that both evict the same receipt.
     */
    private final Map<String, Long> ageOf = new HashMap<>();
    private long nextAge;

    /** A receipt frame owed to {@code sender}. */
    private record Owing(String sender, String id, String text, long age) {
    }

    /**
     * Receipts owed on a hub with a journal when {@code journaled} (none otherwise): those the
     * core still owes are read from {@code actor} now, and {@code wire} writes every frame.
     */
    OwedReceipts(VerbSupport support, ReceiptFrames frames, CoordinationActor actor, SessionRegistry registry,
            Outbox outbox, HubFrames wire, HubMetrics metrics, boolean journaled) {
        this.support = support;
        this.frames = frames;
        this.actor = actor;
        this.registry = registry;
        this.outbox = outbox;
        this.wire = wire;
        this.metrics = metrics;
        this.journaled = journaled;
        load();
    }

    /**
     * Takes up the receipts the core still owes (recovered from the journal) so that their
     * senders get them on their next registration (§8.5). A hub that cannot read them now logs
     * it once, counts it, and serves on: they stay owed in the core for the next start.
     */
    private void load() {
        if (!journaled) {
            return;
        }
        List<OwedReceipt> recovered;
        try {
            recovered = actor.read(s -> s.messaging().owedReceipts()).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            metrics.faults.incrementAndGet();
            LOG.error("the owed delivery receipts could not be read; they are sent after the next start", e);
            return;
        }
        for (OwedReceipt r : recovered) {
            ObjectNode frame = r.event() instanceof DeliveryReceiptExpiredEvent x ? frames.expired(x, r.ts())
                    : frames.deferred((DeliveryReceiptDeferredEvent) r.event(), r.ts());
            synchronized (owed) {
                owe(r.sender(), r.notificationId(), wire.write(frame));
            }
        }
    }

    /** Delivers the receipt of a chat acknowledged later; kept for an absent sender when {@code owe}. */
    void deliverDeferred(DeliveryReceiptDeferredEvent e, double at, boolean owe) {
        deliverNamed(e.sender(), OwedReceipt.notificationId(e.messageSeq(), false), frames.deferred(e, at), owe);
    }

    /** Delivers the receipt of a pending chat evicted unacknowledged; kept for an absent sender when {@code owe}. */
    void deliverExpired(DeliveryReceiptExpiredEvent e, double at, boolean owe) {
        deliverNamed(e.sender(), OwedReceipt.notificationId(e.messageSeq(), true), frames.expired(e, at), owe);
    }

    /**
     * Sends to the socket bound to {@code name} and settles the receipt in the core's outbox once
     * it was written there, or, when {@code owe}, keeps it for its next registration (§8.5). The
     * bound socket is looked up under the same lock {@link #onBound} drains under, so a receipt is
     * either sent here or drained there, never left behind by a registration racing this.
     */
    private void deliverNamed(String name, String id, ObjectNode frame, boolean owe) {
        String text = wire.write(frame);
        Session s;
        synchronized (owed) {
            s = registry.session(name);
            if (s == null) {
                if (owe) {
                    owe(name, id, text);
                }
                return;
            }
            if (owe) {
                ageOf.putIfAbsent(id, nextAge++); // owed by the core from now on, until written
            }
        }
        LinkedHashMap<String, String> one = new LinkedHashMap<>();
        one.put(id, text);
        write(s, name, one, owe);
    }

    /**
     * Writes {@code frames} (notification id to frame, in order) to {@code session}, bound to
     * {@code name}, after everything queued for it before. Only those that reach the socket are
     * settled: a socket that died meanwhile leaves the rest owed ({@link #unwritten}).
     */
    private void write(Session session, String name, LinkedHashMap<String, String> frames, boolean owe) {
        ReceiptWrites writes = new ReceiptWrites(frames.size());
        frames.forEach((id, text) -> outbox.sendNamedInOrder(session, text, written -> {
            if (writes.done(id, text, written)) { // the last outcome of this batch: settle once
                List<String> settled = writes.written();
                synchronized (owed) {
                    settled.forEach(ageOf::remove);
                }
                settle(name, settled);
                unwritten(session, name, writes.unwritten(), owe);
            }
        }));
    }

    /**
     * Receipts whose write to {@code failedOn} did not reach its socket: sent to the socket bound
     * to {@code name} now if another one bound meanwhile (its registration drained before these
     * came back), else kept owed for the next registration, when {@code owe}. The core owes them
     * still: they were not settled.
     */
    private void unwritten(Session failedOn, String name, LinkedHashMap<String, String> frames, boolean owe) {
        if (frames.isEmpty()) {
            return;
        }
        if (!owe) {
            synchronized (owed) {
                frames.keySet().forEach(ageOf::remove);
            }
            return;
        }
        LOG.debug("{} receipts to {} did not reach its socket; kept owed", frames.size(), name);
        Session now;
        synchronized (owed) {
            now = registry.session(name);
            if (now == null || now == failedOn) {
                frames.forEach((id, text) -> owe(name, id, text));
                return;
            }
        }
        write(now, name, frames, true);
    }

    /**
     * Keeps {@code text} owed to {@code name}, dropping the receipt first owed longest ago, of any
     * sender, beyond the bound, as the core's outbox does. Holds the lock.
     */
    private void owe(String name, String id, String text) {
        long age = ageOf.computeIfAbsent(id, k -> nextAge++);
        Owing o = new Owing(name, id, text, age);
        owed.computeIfAbsent(name, k -> new TreeMap<>()).put(age, o);
        byAge.put(age, o);
        while (byAge.size() > MAX_OWED_RECEIPTS) {
            Owing eldest = byAge.pollFirstEntry().getValue();
            TreeMap<Long, Owing> of = owed.get(eldest.sender());
            of.remove(eldest.age());
            if (of.isEmpty()) {
                owed.remove(eldest.sender());
            }
            ageOf.remove(eldest.id());
        }
    }

    /**
     * The receipts {@code ids} were written to {@code name}'s socket: they leave the core's
     * outbox, so neither a later registration nor a restart sends them again. Refused (busy),
     * they stay owed in the core and are sent once more after a restart, with the same id the
     * sender dedupes on.
     */
    private void settle(String name, List<String> ids) {
        if (!journaled || ids.isEmpty()) {
            return;
        }
        support.submitUnanswered(new ReceiptsDeliveredCommand(name, ids), "settling the receipts sent to " + name,
                () -> { });
    }

    /**
     * A socket bound {@code name}: queue the receipts still owed to it (before its presence
     * update, which the caller queues afterwards on the same outbox thread), and settle those
     * written to its socket.
     */
    void onBound(Session session, String name) {
        LinkedHashMap<String, String> drained = new LinkedHashMap<>();
        synchronized (owed) {
            TreeMap<Long, Owing> mine = owed.remove(name);
            if (mine == null) {
                return;
            }
            for (Owing o : mine.values()) { // oldest first
                byAge.remove(o.age());
                drained.put(o.id(), o.text());
            }
        }
        write(session, name, drained, true);
    }
}
