package dev.synapsehub.mcp;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The file that keeps the {@link Inbox} cursor across restarts of this process (or none). An
 * inbox read saves it on the reader's thread; a replayed chat arriving below it, on a
 * connection's event loop, only asks for it to come down, and a writer thread of its own does
 * the write, so the event loop does not write the file. (It can still wait for the inbox's lock
 * while a read holds it to save the file: a read is an agent's tool call, rare next to frames.)
 *
 * <p>The file holds the cursor on its first line and, once the hub is known, {@code hub_id ID}
 * on a second: the hub whose journal the seq counts in. A file of one line (written before the
 * hub was recorded) still reads, its hub unknown.
 */
final class CursorFile implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CursorFile.class);
    private static final long NONE = -1;
    /** How long {@link #close} waits for a lowering still queued: a restart would read the file. */
    private static final long CLOSE_WAIT_SECONDS = 5;

    private final Path path;
    private final ExecutorService writer;
    /** The value the file holds (0 without a file); changed only under this object's lock. */
    private volatile long saved;
    /** The value the file must come down to, or {@link #NONE}: the latest asked for wins. */
    private final AtomicLong lowering = new AtomicLong(NONE);
    private final AtomicLong loweringsFailed = new AtomicLong();
    private static final String HUB_LINE = "hub_id ";
    /** The hub the cursor counts in, or null when not known yet. */
    private volatile String hubId;
    /** The hub the file names; changed only under this object's lock. */
    private String fileHubId;
    /** The file was there but held no cursor: the next save writes it even if the value is 0. */
    private boolean unreadable;

    /**
     * Reads the cursor {@code path} holds (0 if it does not exist).
     *
     * @param path the file, or null for none
     * @param writer runs the lowerings one at a time, in order ({@link #newWriter}); shut down by {@link #close}
     */
    CursorFile(Path path, ExecutorService writer) throws IOException {
        this.path = path;
        this.writer = writer;
        if (path != null && Files.exists(path)) {
            String[] lines = Files.readString(path, StandardCharsets.UTF_8).strip().split("\\R");
            String text = lines[0].strip();
            long value;
            try {
                value = Long.parseLong(text);
            } catch (NumberFormatException e) {
                value = -1;
            }
            if (value < 0) {
                // empty or garbled (a crash mid-write, a hand edit): 0 would read as a real cursor
                LOG.warn("the cursor file {} holds no cursor (expected one non-negative integer, found '{}'); "
                        + "treated as absent: directed chats are replayed as for a fresh agent, and the file is "
                        + "written anew at the next inbox read", path, text.length() > 40 ? text.substring(0, 40)
                        + "..." : text);
                unreadable = true;
                return;
            }
            saved = value;
            for (int i = 1; i < lines.length; i++) {
                if (lines[i].startsWith(HUB_LINE) && !lines[i].substring(HUB_LINE.length()).isBlank()) {
                    hubId = lines[i].substring(HUB_LINE.length()).strip();
                }
            }
            fileHubId = hubId;
        }
    }

    /** The hub the cursor counts in, as the file or the last {@link #rebind} said; null when not known. */
    String hubId() {
        return hubId;
    }

    /**
     * The cursor counts in hub {@code id} from now on, and is at most {@code value}: written in
     * the background like a lowering (called on an event loop), unless a {@link #save} writes it
     * first.
     */
    void rebind(String id, long value) {
        hubId = id;
        if (path != null) {
            requestLowering(value);
        }
    }

    /** The writer thread: a daemon, so that it never keeps the process alive. */
    static ExecutorService newWriter() {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "mcp-cursor-file");
            t.setDaemon(true);
            return t;
        });
    }

    /** The value the file holds: what a restart would send (0 without a file). */
    long saved() {
        return saved;
    }

    /**
     * Writes {@code value} now, on the caller's thread, unless the file holds it already. It is
     * the current cursor, so a lowering asked for earlier is superseded and dropped.
     */
    synchronized void save(long value) throws IOException {
        if (value != saved || !java.util.Objects.equals(hubId, fileHubId) || unreadable) {
            write(value);
        }
        lowering.set(NONE);
    }

    /**
     * Brings the file down to {@code cursor} in the background if it holds more; never blocks
     * (called on an event loop). A write that fails is logged, counted, and left to the next
     * {@link #save}.
     */
    void lowerLater(long cursor) {
        if (path == null || saved <= cursor) {
            return;
        }
        requestLowering(cursor);
    }

    private void requestLowering(long cursor) {
        if (lowering.getAndSet(cursor) != NONE) {
            return; // a lowering is queued: it takes this value
        }
        try {
            writer.execute(this::lower);
        } catch (RejectedExecutionException closed) {
            lowering.compareAndSet(cursor, NONE); // so a later lowering is counted and logged too, not skipped as queued
            loweringsFailed.incrementAndGet();
            LOG.warn("cannot bring the cursor file {} down to {} for a replayed chat: the MCP face is closing",
                    path, cursor);
        }
    }

    /** How many background lowerings could not be written. */
    long loweringsFailed() {
        return loweringsFailed.get();
    }

    /** On the writer thread. */
    private synchronized void lower() {
        long value = lowering.getAndSet(NONE);
        boolean hubChanged = !java.util.Objects.equals(hubId, fileHubId);
        if ((value == NONE || value >= saved) && !hubChanged) {
            return; // superseded by a save (which wrote the hub too), or already there
        }
        value = value == NONE ? saved : Math.min(value, saved);
        try {
            write(value);
        } catch (IOException | RuntimeException e) { // a runtime failure would otherwise die unseen in the executor
            loweringsFailed.incrementAndGet();
            // the file keeps the higher value; the next inbox read writes the cursor again (it differs from saved)
            LOG.warn("cannot bring the cursor file {} down to {} for a replayed chat: {}; retried at the next "
                    + "inbox read", path, value, e.toString());
        }
    }

    private void write(long value) throws IOException {
        if (path != null) {
            Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
            String hub = hubId;
            byte[] text = (value + "\n" + (hub == null ? "" : HUB_LINE + hub + "\n")).getBytes(StandardCharsets.UTF_8);
            // on disk before it replaces the old one: a crash must leave the old cursor or the new, never an empty file
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer buf = ByteBuffer.wrap(text);
                while (buf.hasRemaining()) {
                    out.write(buf);
                }
                out.force(true);
            }
            Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            syncDirectory(path.toAbsolutePath().getParent());
            fileHubId = hub;
            unreadable = false;
        }
        saved = value;
    }

    /** Makes the rename durable where the platform allows a directory to be synced (Linux does; others may not). */
    private static void syncDirectory(Path dir) {
        if (dir == null) {
            return;
        }
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException | UnsupportedOperationException notSupported) {
            // the file itself was synced; only the rename's durability is left to the file system
        }
    }

    /** Lets a queued lowering finish (a bounded wait), then stops the writer thread. */
    @Override
    public void close() {
        writer.shutdown();
        boolean done;
        try {
            done = writer.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            done = false;
        }
        if (!done) {
            LOG.warn("the cursor file {} may still be coming down for a replayed chat as the MCP face closes; it may "
                    + "hold a cursor above that chat", path);
        }
    }
}
