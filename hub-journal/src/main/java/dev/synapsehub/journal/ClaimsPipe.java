package dev.synapsehub.journal;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;

/**
 * Start-up: loads a snapshot's claims into a fresh state while they are still being decoded.
 * The decoding thread hands them over in chunks ({@link SnapshotCodec.ClaimsSink}); a thread of
 * the pipe's own loads each chunk into the claims registry as it arrives, so the decode and the
 * restore of the claims (most of a large snapshot) overlap instead of following each other.
 * {@link #awaitRestored} waits for the last chunk and orders the loading thread's writes before
 * the caller's reads. When no thread can be had, the claims are loaded on the decoding thread.
 */
final class ClaimsPipe implements SnapshotCodec.ClaimsSink {
    /** Claims per hand-over: large enough that the queue costs nothing next to the inserts. */
    static final int CHUNK = 1024;

    private final CoordinationState state;
    private final Executor runner;
    private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final CompletableFuture<Void> restored = new CompletableFuture<>();
    /** Set once the caller gave up on this state (a damaged section): the loader stops at its next chunk. */
    private volatile boolean abandoned;
    /** Decoding thread only: the chunk being filled, and the restore when it runs on that thread. */
    private Claim[] claims;
    private long[] orders;
    private int size;
    private ClaimRegistry.Restore inline;
    /** The inline restore's clock and counters, applied at the end. */
    private Start pending;

    private record Start(double now, long epochCounter, long orderCounter, int live) {
    }

    private record Chunk(Claim[] claims, long[] orders, int size) {
    }

    private record End(List<StateImage.Retained> retained) {
    }

    /** A pipe into {@code state} (fresh), whose loading thread {@code runner} starts. */
    ClaimsPipe(CoordinationState state, Executor runner) {
        this.state = state;
        this.runner = runner;
    }

    @Override
    public void start(double now, long epochCounter, long orderCounter, int live) {
        Start start = new Start(now, epochCounter, orderCounter, live);
        claims = new Claim[CHUNK];
        orders = new long[CHUNK];
        try {
            runner.execute(this::load);
            queue.add(start);
        } catch (RejectedExecutionException | OutOfMemoryError e) {
            // no second thread to be had ("unable to create native thread"): slower, never refused for that
            inline = state.restoreClaimsInPieces(live);
            pending = start;
        }
    }

    @Override
    public void held(Claim claim, long order) {
        if (inline != null) {
            inline.add(claim, order);
            return;
        }
        claims[size] = claim;
        orders[size] = order;
        if (++size == CHUNK) {
            queue.add(new Chunk(claims, orders, size));
            claims = new Claim[CHUNK];
            orders = new long[CHUNK];
            size = 0;
        }
    }

    @Override
    public void end(List<StateImage.Retained> retained) {
        if (inline != null) {
            try {
                inline.finish(pending.now(), pending.epochCounter(), pending.orderCounter(), retained);
                restored.complete(null);
            } catch (RuntimeException e) {
                restored.completeExceptionally(e);
            }
            return;
        }
        if (size > 0) {
            queue.add(new Chunk(claims, orders, size));
        }
        claims = null;
        orders = null;
        queue.add(new End(retained));
    }

    /** Any thread: this state will not be used (the snapshot is refused); the loader stops soon. */
    void abandon() {
        abandoned = true;
        queue.add(new End(List.of()));
    }

    /**
     * Waits until every claim is loaded; throws what the registry refused. Call only after the
     * decode returned without an exception (the section is complete).
     */
    void awaitRestored() {
        try {
            restored.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    /** The loading thread: takes chunks in order until the end of the section. */
    private void load() {
        try {
            ClaimRegistry.Restore restore = null;
            Start start = null;
            while (true) {
                Object next = queue.take();
                if (abandoned) {
                    restored.completeExceptionally(new IllegalStateException("the snapshot was abandoned"));
                    return;
                }
                if (next instanceof Start s) {
                    start = s;
                    restore = state.restoreClaimsInPieces(s.live());
                } else if (next instanceof Chunk c) {
                    for (int i = 0; i < c.size(); i++) {
                        restore.add(c.claims()[i], c.orders()[i]);
                    }
                } else if (next instanceof End e) {
                    restore.finish(start.now(), start.epochCounter(), start.orderCounter(), e.retained());
                    restored.complete(null);
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            restored.completeExceptionally(e);
        } catch (RuntimeException | Error e) {
            restored.completeExceptionally(e);
        }
    }
}
