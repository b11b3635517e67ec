package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The client's requests passed to the SDK and not yet answered on standard output, by id: when
 * the client's input ends, the face waits for their answers before it closes the transport
 * (closing at once dropped the answers to requests still running).
 */
final class InFlight {
    private final Set<String> ids = new HashSet<>();

    /** A request with {@code id} was passed on. */
    synchronized void sent(JsonNode id) {
        ids.add(id.toString());
    }

    /** A response to {@code id} was written. */
    synchronized void answered(JsonNode id) {
        if (ids.remove(id.toString())) {
            notifyAll();
        }
    }

    /** Waits until every request passed on was answered, at most {@code millis}; false on timeout. */
    synchronized boolean awaitNone(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!ids.isEmpty()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }
}
