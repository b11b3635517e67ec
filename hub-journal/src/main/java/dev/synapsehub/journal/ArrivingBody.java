package dev.synapsehub.journal;

/**
 * A snapshot body being read from the journal chunk by chunk while it is already decoded: the
 * reader copies each chunk in and calls {@link #arrived}; a decoder that needs bytes not yet
 * here waits in {@link #await}. The decoder may run ahead of the checks (chunk count, length,
 * CRC-32C), so whatever it builds must not be used before the reader has finished and checked
 * the whole body; a body that fails them is {@link #abandon abandoned}, which wakes and stops
 * any decoder still waiting.
 */
final class ArrivingBody {
    private final byte[] bytes;
    /** Bytes at the front of {@link #bytes} copied in so far. Guarded by this. */
    private int filled;
    /** No more bytes will come (the read ended, well or not). Guarded by this. */
    private boolean closed;
    /** The read failed: the decoder stops at its next wait, and at its next claim. */
    private volatile boolean abandoned;

    /** An empty body of {@code length} bytes, filled by the reader. */
    ArrivingBody(int length) {
        this.bytes = new byte[length];
    }

    /** A body that is already whole (a decode without a read beside it). */
    static ArrivingBody whole(byte[] body) {
        return new ArrivingBody(body);
    }

    private ArrivingBody(byte[] whole) {
        this.bytes = whole;
        this.filled = whole.length;
        this.closed = true;
    }

    /** The body's array: the reader writes to it, decoders read only what {@link #await} said is here. */
    byte[] bytes() {
        return bytes;
    }

    /** Reader: bytes {@code [0, upTo)} are copied in (the monitor orders the copy before decoders' reads). */
    synchronized void arrived(int upTo) {
        filled = upTo;
        notifyAll();
    }

    /** Reader: nothing more will arrive; a decoder waiting past {@link #filled} finds the body short. */
    synchronized void close() {
        closed = true;
        notifyAll();
    }

    /** Reader or caller: the body is not to be used; decoders stop instead of waiting. */
    synchronized void abandon() {
        abandoned = true;
        closed = true;
        notifyAll();
    }

    /** Whether the body was abandoned (a decoder checks this between claims). */
    boolean abandoned() {
        return abandoned;
    }

    /**
     * Waits until bytes {@code [0, upTo)} are here or none will come; returns how many are
     * (less than {@code upTo} only when the body ended short).
     *
     * @throws CorruptSnapshotException when the body was abandoned or the wait interrupted
     */
    synchronized int await(int upTo) throws CorruptSnapshotException {
        while (filled < upTo && !closed) {
            try {
                wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CorruptSnapshotException("interrupted while waiting for the body's bytes");
            }
        }
        if (abandoned) {
            throw new CorruptSnapshotException("the body's read failed; its decode was abandoned");
        }
        return filled;
    }
}
