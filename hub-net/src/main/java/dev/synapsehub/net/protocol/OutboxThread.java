package dev.synapsehub.net.protocol;

import io.netty.util.concurrent.RejectedExecutionHandlers;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ThreadFactory;

/**
 * The outbox's single publishing thread. Netty's {@code DefaultEventExecutor} runs each task
 * unguarded, so one task that throws ends its thread for good: every later reply and broadcast
 * would be refused (and, the executor then counting as shutting down, dropped unnoticed). Here a
 * task that throws is logged once, counted as a fault, and the thread goes on with the next.
 */
public final class OutboxThread extends SingleThreadEventExecutor {
    private static final Logger LOG = LoggerFactory.getLogger(OutboxThread.class);

    private final HubMetrics metrics;

    /** A thread from {@code threads} taking at most {@code capacity} waiting tasks (more are refused). */
    public OutboxThread(ThreadFactory threads, int capacity, HubMetrics metrics) {
        super(null, threads, true, capacity, RejectedExecutionHandlers.reject()); // as DefaultEventExecutor
        this.metrics = metrics;
    }

    @Override
    protected void run() {
        do {
            Runnable task = takeTask();
            if (task != null) {
                try {
                    task.run();
                } catch (RuntimeException fault) { // an Error (out of memory) still ends the thread, as before
                    metrics.faults.incrementAndGet();
                    LOG.error("fault in a task of the outbox thread; it goes on with the next", fault);
                }
                updateLastExecutionTime();
            }
        } while (!confirmShutdown());
    }
}
