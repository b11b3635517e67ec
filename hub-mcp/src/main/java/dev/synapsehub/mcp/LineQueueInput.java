package dev.synapsehub.mcp;

import java.io.InputStream;
import java.util.concurrent.LinkedBlockingQueue;

/** The SDK transport's standard input: the lines the {@link StdioGate} let through, then end of input. */
final class LineQueueInput extends InputStream {
    private static final byte[] END = new byte[0];
    private final LinkedBlockingQueue<byte[]> lines = new LinkedBlockingQueue<>();
    private byte[] current = new byte[0];
    private int pos;
    private boolean ended;
    /** Counted down when the reader has taken every queued line and reached the end. */
    private final java.util.concurrent.CountDownLatch drained = new java.util.concurrent.CountDownLatch(1);

    /** Queues one line (its bytes, newline included). */
    void offer(byte[] line) {
        lines.add(line);
    }

    /** No more lines: the reader sees end of input once it has read the queued ones. */
    void end() {
        lines.add(END);
    }

    @Override
    public int read() {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) {
        if (len == 0) {
            return 0;
        }
        while (pos >= current.length) {
            if (ended) {
                return -1;
            }
            try {
                current = lines.take();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ended = true;
                return -1;
            }
            pos = 0;
            if (current == END) {
                ended = true;
                drained.countDown();
            }
        }
        int n = Math.min(len, current.length - pos);
        System.arraycopy(current, pos, b, off, n);
        pos += n;
        return n;
    }

    /** Waits until the reader has read every queued line and the end, at most {@code millis}; false on timeout. */
    boolean awaitDrained(long millis) throws InterruptedException {
        return drained.await(millis, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    @Override
    public int available() {
        return current.length - pos;
    }

    @Override
    public void close() {
        end();
    }
}
