package dev.synapsehub.mesh;

import org.apache.ratis.protocol.exceptions.TimeoutIOException;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * When a follower's {@link Forwarder} resets its channel to the leader after a failed forward
 * (and the lead checks, read index requests and asks of the leader theirs, after a failed ask):
 * once per channel,
 * and never for a channel that is alive but slow. A Ratis client's stream that failed stays
 * closed ("is closed") until its channel is reset. Resetting closes the channel
 * and fails every other forward in flight on it; before this, each of those failures reset the
 * next channel too, so under load one timed-out forward kept a follower's forwards failing
 * (each answered commit_unknown, so queued) for as long as its agents kept writing.
 *
 * <ul>
 *   <li>a failure of a forward sent before the channel was last reset resets nothing: the
 *       channel it went on is gone already (its failure is that reset's doing);</li>
 *   <li>a timeout resets nothing while the leader answered other forwards after this one was
 *       sent: the channel works, the leader is slow;</li>
 *   <li>anything else (a broken stream, a refused connection, a timeout with the leader silent)
 *       resets once, and the next forward opens a new channel.</li>
 * </ul>
 * Times are {@link System#nanoTime()} values, passed in so the rule can be tested alone. A reset
 * that throws (the client could not replace its channel) is logged, counted and swallowed: it
 * runs inside a failed request's callback, which must still go on to retry or answer that request.
 */
final class ChannelResets {
    private static final System.Logger LOG = System.getLogger(ChannelResets.class.getName());
    private final AtomicLong failed = new AtomicLong();

    /** What a forward recorded when it was sent: to whom, on which channel generation, when. */
    record Sent(String peer, long generation, long at) {
    }

    private static final class Channel {
        long generation;
        long lastAnswer = Long.MIN_VALUE;
        boolean answered;
        /** A reset is replacing the channel now: its generation moves on only once the new one is in place. */
        boolean resetting;
    }

    private final Map<String, Channel> channels = new ConcurrentHashMap<>();

    private Channel channel(String peer) {
        return channels.computeIfAbsent(peer, p -> new Channel());
    }

    /** A forward to {@code peer} leaves now. */
    synchronized Sent sent(String peer, long now) {
        return new Sent(peer, channel(peer).generation, now);
    }

    /** {@code peer} answered a forward (whatever the answer): its channel works. */
    synchronized void answered(String peer, long now) {
        Channel c = channel(peer);
        c.lastAnswer = now;
        c.answered = true;
    }

    /**
     * When the forward {@code sent} failed with {@code cause} and its channel should be reset now:
     * runs {@code reset} (the client's channel reset, outside this object's lock: Ratis closes the
     * old channel synchronously) and returns true. The generation moves on only after {@code reset}
     * returned, so a send recorded while the channel was being replaced counts as sent on the old
     * one, and its failure (the old channel's "is closed") never resets the new one under others.
     * A {@code reset} that throws changes nothing and returns false (logged and counted).
     */
    boolean reset(Sent sent, Throwable cause, Runnable reset) {
        Channel c;
        synchronized (this) {
            c = channel(sent.peer());
            if (c.resetting || c.generation != sent.generation()) {
                return false;
            }
            if (timeout(cause) && c.answered && c.lastAnswer - sent.at() > 0) {
                return false;
            }
            c.resetting = true;
        }
        try {
            reset.run();
        } catch (RuntimeException fault) {
            failed.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "resetting the channel to " + sent.peer() + " failed (" + fault
                    + "); it stays as it is, and the next failure there tries again", fault);
            synchronized (this) {
                c.resetting = false; // not replaced: its generation stays, so its next failure may reset it
            }
            return false;
        }
        synchronized (this) {
            c.generation++;
            c.resetting = false;
        }
        return true;
    }

    /** Resets that threw, since start (each logged once). */
    long failedResets() {
        return failed.get();
    }

    /** Resets made since start, for {@code peer}. */
    synchronized long resets(String peer) {
        return channel(peer).generation;
    }

    private static boolean timeout(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof TimeoutException || t instanceof TimeoutIOException) {
                return true;
            }
        }
        return false;
    }
}
