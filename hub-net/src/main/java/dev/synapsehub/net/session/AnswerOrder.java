package dev.synapsehub.net.session;

import java.util.concurrent.CompletableFuture;

/**
 * What an answer the edge gives to one connection (an error on its I/O loop) must wait for, so
 * that the connection's answers go back in the order of its requests: the answers to earlier
 * requests that took the writer's path, and the edge answers already waiting for them. Its
 * methods may be called on any thread.
 */
public final class AnswerOrder {
    /** The tail of a connection no answer ever waited for. */
    private static final CompletableFuture<Void> NONE = CompletableFuture.completedFuture(null);

    /** Completes once every answer started so far (and every waiting edge answer) was handed on. */
    private CompletableFuture<?> tail = NONE;
    /**
     * The outbox's count of broadcast batches started when the latest answer was published: the
     * answer is on its way to the socket once that many batches were handed to the I/O loops.
     */
    private volatile long publishedInBatch;

    /** An answer was started ({@code handedOn} completes once it was handed to the outbox): later edge answers wait for it. */
    public synchronized void started(CompletableFuture<?> handedOn) {
        tail = tail.isDone() ? handedOn : CompletableFuture.allOf(tail, handedOn);
    }

    /** What an edge answer given now waits for; done when nothing is outstanding. */
    public synchronized CompletableFuture<?> tail() {
        return tail;
    }

    /** An edge answer now waits behind the tail: those after it wait for {@code handedOn} (which follows the tail). */
    public synchronized void waiting(CompletableFuture<?> handedOn) {
        tail = handedOn;
    }

    /** True until some answer took the asynchronous path: an edge answer may then be written at once. */
    public synchronized boolean neverWaited() {
        return tail == NONE;
    }

    /** The latest answer was published while the outbox had started {@code batches} broadcast batches (outbox thread). */
    public void published(long batches) {
        if (batches > publishedInBatch) {
            publishedInBatch = batches;
        }
    }

    /** See {@link #published(long)}. */
    public long publishedInBatch() {
        return publishedInBatch;
    }
}
