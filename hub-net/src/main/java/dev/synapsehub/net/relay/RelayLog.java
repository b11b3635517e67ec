package dev.synapsehub.net.relay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code --relay-log FILE} (contract A5.2): an NDJSON mirror of what the hub fans out, one
 * {@link RelayLine} per broadcast frame, per directed chat in private-directed mode and per
 * channel chat; private frames are never written. Lines are written whether or not a socket is
 * open. After every {@code maxLines} appends the file is cut to its last {@code maxLines} lines,
 * so it holds at most about twice that.
 *
 * <p>The hub's threads only hand a frame to a bounded queue; a thread of its own turns frames
 * into lines and does the file I/O, so a slow disk never stalls publishing. A full queue drops
 * the line (counted, logged once per episode) rather than block; a failed write is counted and
 * logged once until a write succeeds again.
 */
public final class RelayLog implements AutoCloseable {
    /** {@code --relay-max-lines} when not given (A5.2). */
    public static final int DEFAULT_MAX_LINES = 5000;
    /** Frames waiting for the writer thread at most. */
    static final int QUEUE_CAPACITY = 65_536;
    private static final Logger LOG = LoggerFactory.getLogger(RelayLog.class);
    private static final String STOP = new String("stop");
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    private final Path file;
    private final int maxLines;
    private final BlockingQueue<String> queue = new ArrayBlockingQueue<>(QUEUE_CAPACITY);
    private final ObjectMapper mapper = new ObjectMapper();
    private final Thread writer;
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private volatile AtomicLong faults = new AtomicLong();
    private volatile boolean dropLogged;
    private boolean failureLogged;
    private BufferedWriter out;
    private long sinceCut;

    private RelayLog(Path file, int maxLines) throws IOException {
        this.file = file;
        this.maxLines = maxLines;
        this.out = openAppend();
        this.writer = new Thread(this::run, "synapse-relay-log");
        writer.setDaemon(true);
    }

    /**
     * Opens (creating its folders, and the file with mode 0600) {@code file} for appending and
     * starts the writer thread.
     *
     * @throws IOException when the file cannot be created or opened
     */
    public static RelayLog open(Path file, int maxLines) throws IOException {
        if (maxLines < 1) {
            throw new IllegalArgumentException("--relay-max-lines must be at least 1, got " + maxLines);
        }
        Path abs = file.toAbsolutePath().normalize();
        if (abs.getParent() != null) {
            Files.createDirectories(abs.getParent());
        }
        RelayLog log = new RelayLog(abs, maxLines);
        log.writer.start();
        return log;
    }

    /** Failures from now on are also counted in {@code hubFaults} ({@code synapse_faults_total}). */
    public void countFaultsIn(AtomicLong hubFaults) {
        this.faults = hubFaults;
    }

    /** The file written. */
    public Path file() {
        return file;
    }

    /** Queues the line for {@code frameJson} (a frame as sent); never blocks. */
    public void record(String frameJson) {
        if (!queue.offer(frameJson)) {
            dropped.incrementAndGet();
            faults.incrementAndGet();
            if (!dropLogged) {
                dropLogged = true;
                LOG.error("relay log {}: {} frames are waiting for the disk; lines are dropped until it catches up",
                        file, QUEUE_CAPACITY);
            }
        }
    }

    /** Lines appended so far. */
    public long written() {
        return written.get();
    }

    /** Lines dropped because the queue was full. */
    public long dropped() {
        return dropped.get();
    }

    /** Lines whose write failed. */
    public long failures() {
        return failures.get();
    }

    private void run() {
        List<String> batch = new java.util.ArrayList<>();
        while (true) {
            String first;
            try {
                first = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            batch.clear();
            batch.add(first);
            queue.drainTo(batch, 1024);
            boolean stop = false;
            for (String frame : batch) {
                if (frame == STOP) {
                    stop = true;
                    break;
                }
                append(frame);
            }
            flush();
            if (stop) {
                closeWriter();
                return;
            }
        }
    }

    private void append(String frameJson) {
        String line;
        try {
            JsonNode node = mapper.readTree(frameJson);
            if (!(node instanceof ObjectNode frame)) {
                return; // the hub only sends objects
            }
            line = RelayLine.of(frame);
        } catch (IOException | RuntimeException e) {
            failed("cannot render a frame as a relay line", e);
            return;
        }
        try {
            if (out == null) {
                out = openAppend();
            }
            out.write(line);
            out.write('\n');
            written.incrementAndGet();
            failureLogged = false;
            dropLogged = false;
            if (++sinceCut >= maxLines) {
                sinceCut = 0;
                out.flush();
                cut();
            }
        } catch (IOException | UncheckedIOException e) {
            failed("cannot write " + file, e);
            closeWriter(); // reopened for the next line
        }
    }

    /** Keeps the file's last {@code maxLines} lines: written beside it, then renamed over it. */
    private void cut() throws IOException {
        ArrayDeque<String> last = new ArrayDeque<>(maxLines + 1);
        try (var lines = Files.lines(file, StandardCharsets.UTF_8)) {
            lines.forEach(l -> {
                last.addLast(l);
                if (last.size() > maxLines) {
                    last.removeFirst();
                }
            });
        }
        Path tmp = file.resolveSibling(file.getFileName() + ".cut");
        Files.deleteIfExists(tmp);
        create(tmp);
        try (BufferedWriter w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            for (String l : last) {
                w.write(l);
                w.write('\n');
            }
        }
        closeWriter();
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        out = openAppend();
    }

    private BufferedWriter openAppend() throws IOException {
        create(file);
        return Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND);
    }

    /** Creates {@code p} with mode 0600 where the file system has POSIX modes; an existing file is kept. */
    private static void create(Path p) throws IOException {
        try {
            boolean posix = p.getFileSystem().supportedFileAttributeViews().contains("posix");
            FileAttribute<?>[] attrs = posix ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY)}
                    : new FileAttribute<?>[0];
            Files.createFile(p, attrs);
        } catch (FileAlreadyExistsException exists) {
            // appended to as it is
        }
    }

    private void flush() {
        if (out == null) {
            return;
        }
        try {
            out.flush();
        } catch (IOException e) {
            failed("cannot write " + file, e);
            closeWriter();
        }
    }

    private void closeWriter() {
        if (out != null) {
            try {
                out.close();
            } catch (IOException e) {
                failed("cannot close " + file, e);
            }
            out = null;
        }
    }

    private void failed(String what, Exception e) {
        failures.incrementAndGet();
        faults.incrementAndGet();
        if (!failureLogged) {
            failureLogged = true;
            LOG.error("relay log: {}: {}", what, e.toString());
        }
    }

    /** Writes what is queued, then stops the writer thread (waits at most 5 s). */
    @Override
    public void close() {
        try {
            if (!queue.offer(STOP, 5, TimeUnit.SECONDS)) {
                writer.interrupt();
            }
            writer.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
