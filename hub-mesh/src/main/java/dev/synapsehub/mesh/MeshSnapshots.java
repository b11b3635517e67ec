package dev.synapsehub.mesh;

import dev.synapsehub.journal.CorruptSnapshotException;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.MD5FileUtil;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A mesh node's snapshots, in Ratis' state machine directory with Ratis' file names
 * ({@code snapshot.<term>_<index>} and its {@code .md5}), so Ratis can send the newest to a
 * follower that is too far behind (install snapshot) and purge the log it covers.
 *
 * <p>The node's actor captures an image of its state at a commit boundary ({@link #offer});
 * Ratis' state machine thread writes the newest capture when asked ({@link #write}), so the
 * actor never waits for the disk and Ratis never waits for the actor. Loading is strict: a file
 * that fails its checksum or does not decode is refused loudly (logged, counted, renamed
 * {@code .corrupt}) and the next older one is tried, as long as the log still reaches back to it.
 */
final class MeshSnapshots {
    private static final System.Logger LOG = System.getLogger(MeshSnapshots.class.getName());
    private static final Pattern SEGMENT = Pattern.compile("log_(?:inprogress_)?(\\d+)(?:-\\d+)?");

    private final String nodeId;
    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final AtomicReference<MeshSnapshotFile> captured = new AtomicReference<>();
    private final AtomicLong taken = new AtomicLong();
    private final AtomicLong corrupt = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    /** True from a snapshot that could not be written until one is written again (/health's mesh_snapshot_failing). */
    private volatile boolean failing;
    private volatile RaftStorage raftStorage;
    private volatile long loadedIndex = -1;
    /**
     * The newest snapshot this node holds, as Ratis is told: kept here rather than in the
     * storage's cache, which only ever moves forward and so could still name a file refused as
     * corrupt (Ratis would then skip the entries between the two snapshots).
     */
    private volatile SingleFileSnapshotInfo latest;

    MeshSnapshots(String nodeId) {
        this.nodeId = nodeId;
    }

    void init(RaftStorage raft) throws IOException {
        raftStorage = raft;
        storage.init(raft);
    }

    StateMachineStorage storage() {
        return storage;
    }

    /** The newest snapshot on disk that this node wrote, installed or loaded; null when none. */
    SnapshotInfo latest() {
        return latest;
    }

    /** Index of the newest snapshot, -1 when there is none. */
    long latestIndex() {
        SnapshotInfo s = latest();
        return s == null ? -1 : s.getIndex();
    }

    /** Snapshots this node wrote since start. */
    long taken() {
        return taken.get();
    }

    /** Snapshot files refused as corrupt since start. */
    long corrupt() {
        return corrupt.get();
    }

    /** Snapshots that could not be written since start. */
    long failed() {
        return failed.get();
    }

    /** True while the last snapshot this node tried to write could not be written. */
    boolean failing() {
        return failing;
    }

    /**
     * A capture that could not be offered (the local journal copy could not be synced through
     * it): no snapshot is written for it, which counts as a failed one.
     */
    void notCaptured() {
        failed.incrementAndGet();
        failing = true;
    }

    /** The index of the snapshot this node started from or installed last, -1 when none. */
    long loadedIndex() {
        return loadedIndex;
    }

    /** A capture of the state at a commit boundary, taken on the actor thread (term is filled in at write). */
    void offer(MeshSnapshotFile capture) {
        captured.accumulateAndGet(capture, (old, now) -> old == null || now.index() > old.index() ? now : old);
    }

    /**
     * Writes the newest capture if it is newer than the newest snapshot; on Ratis' state machine
     * thread. Returns the index of the newest snapshot afterwards (-1: none), which Ratis purges up to.
     *
     * @param termOf the term of the log entry at an index, or null when the log no longer has it
     */
    long write(LongFunction<TermIndex> termOf) {
        MeshSnapshotFile capture = captured.getAndSet(null);
        long before = latestIndex();
        if (capture == null || capture.index() <= before) {
            return before;
        }
        TermIndex at = termOf.apply(capture.index());
        if (at == null) {
            failed.incrementAndGet();
            failing = true;
            LOG.log(System.Logger.Level.WARNING, "mesh node " + nodeId + ": no log entry at index " + capture.index()
                    + " to name a snapshot after; skipped");
            return before;
        }
        MeshSnapshotFile file = new MeshSnapshotFile(at.getTerm(), at.getIndex(), capture.createdAt(),
                capture.originSeqs(), capture.image(), capture.memory());
        File target = storage.getSnapshotFile(at.getTerm(), at.getIndex());
        Path writing = target.toPath().resolveSibling(target.getName() + ".writing");
        try {
            byte[] bytes = file.encode();
            try (FileChannel ch = FileChannel.open(writing, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(java.nio.ByteBuffer.wrap(bytes));
                ch.force(true);
            }
            Files.move(writing, target.toPath(), StandardCopyOption.ATOMIC_MOVE);
            MD5Hash md5 = MD5FileUtil.computeAndSaveMd5ForFile(target);
            SingleFileSnapshotInfo info = new SingleFileSnapshotInfo(new FileInfo(target.toPath(), md5), at);
            this.latest = info;
            storage.updateLatestSnapshot(info);
        } catch (IOException | RuntimeException e) {
            failed.incrementAndGet();
            failing = true;
            LOG.log(System.Logger.Level.ERROR, "mesh node " + nodeId + " cannot write snapshot " + target + ": " + e);
            return before;
        }
        taken.incrementAndGet();
        failing = false;
        LOG.log(System.Logger.Level.INFO, "mesh node " + nodeId + " took snapshot at index " + at.getIndex()
                + " (term " + at.getTerm() + ", seq " + capture.image().lastSeq() + ")");
        return at.getIndex();
    }

    /**
     * The newest usable snapshot, or null to rebuild from the whole log. Corrupt files are
     * refused loudly and moved aside; an older snapshot is used only while the log still holds
     * every entry after it.
     *
     * @param newestOnly after an install: the newest file must be good, nothing older will do
     * @throws IOException when no snapshot is usable and the log was compacted past what survives
     */
    MeshSnapshotFile load(boolean newestOnly) throws IOException {
        long logStart = newestOnly ? -1 : logStartIndex();
        for (Candidate c : candidates()) {
            MeshSnapshotFile file;
            try {
                file = MeshSnapshotFile.decode(Files.readAllBytes(c.path()));
                if (file.term() != c.term() || file.index() != c.index()) {
                    throw new CorruptSnapshotException("it says term " + file.term() + " index " + file.index());
                }
            } catch (CorruptSnapshotException | IOException e) {
                corrupt.incrementAndGet();
                LOG.log(System.Logger.Level.ERROR, "mesh node " + nodeId + ": snapshot " + c.path() + " is corrupt ("
                        + LogRedactor.scrub(e.getMessage()) + "); refused and moved aside as .corrupt");
                moveAside(c.path());
                if (newestOnly) {
                    throw new IOException("the installed snapshot " + c.path() + " is corrupt: " + e.getMessage());
                }
                continue;
            }
            if (logStart > c.index() + 1) {
                throw new IOException(unrebuildable("snapshot " + c.index() + " is the newest usable one, but the log"
                        + " starts at " + logStart));
            }
            latest = new SingleFileSnapshotInfo(new FileInfo(c.path(), md5Of(c.path())), c.term(), c.index());
            loadedIndex = file.index();
            LOG.log(System.Logger.Level.INFO, "mesh node " + nodeId + " starts from snapshot at index " + file.index()
                    + " (term " + file.term() + ", seq " + file.image().lastSeq() + ")");
            return file;
        }
        latest = null;
        if (newestOnly) {
            throw new IOException("no installed snapshot found");
        }
        if (logStart > 0) {
            throw new IOException(unrebuildable("no usable snapshot is left and the log starts at " + logStart));
        }
        return null;
    }

    private static MD5Hash md5Of(Path file) throws IOException {
        File md5 = MD5FileUtil.getDigestFileForFile(file.toFile());
        return md5.exists() ? MD5FileUtil.readStoredMd5ForFile(file.toFile()) : MD5FileUtil.computeMd5ForFile(file.toFile());
    }

    private String unrebuildable(String why) {
        // started again on empty storage while still a voter it is refused (MeshRejoinRefused): it lost its vote
        return "mesh node " + nodeId + " cannot rebuild its state: " + why + ". Restore it from a healthy peer:"
                + " while a majority of the other voters runs, remove it (mesh remove-node), move its Raft directory"
                + " and its journal (--db, with its -wal and -shm files) aside, start it again with --mesh-group and"
                + " add it (mesh add-node); it then catches up by snapshot install (docs/mesh.md, \"Restoring a node"
                + " from its peers\")";
    }

    private record Candidate(Path path, long term, long index) {
    }

    private List<Candidate> candidates() throws IOException {
        Path dir = raftStorage.getStorageDir().getStateMachineDir().toPath();
        List<Candidate> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (Stream<Path> files = Files.list(dir)) {
            files.forEach(p -> {
                Matcher m = SimpleStateMachineStorage.SNAPSHOT_REGEX.matcher(p.getFileName().toString());
                if (m.matches()) {
                    out.add(new Candidate(p, Long.parseLong(m.group(1)), Long.parseLong(m.group(2))));
                }
            });
        }
        out.sort(Comparator.comparingLong(Candidate::index).thenComparingLong(Candidate::term).reversed());
        return out;
    }

    /** The first index the Raft log on disk holds, -1 when it has no segment. */
    private long logStartIndex() throws IOException {
        Path dir = raftStorage.getStorageDir().getCurrentDir().toPath();
        long start = -1;
        if (!Files.isDirectory(dir)) {
            return start;
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Matcher m = SEGMENT.matcher(p.getFileName().toString());
                if (m.matches()) {
                    long s = Long.parseLong(m.group(1));
                    start = start < 0 ? s : Math.min(start, s);
                }
            }
        }
        return start;
    }

    private void moveAside(Path file) {
        try {
            Files.move(file, file.resolveSibling(file.getFileName() + ".corrupt"), StandardCopyOption.REPLACE_EXISTING);
            Path md5 = MD5FileUtil.getDigestFileForFile(file.toFile()).toPath();
            if (Files.exists(md5)) {
                Files.move(md5, md5.resolveSibling(md5.getFileName() + ".corrupt"),
                        StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.ERROR, "cannot move the corrupt snapshot " + file + " aside: " + e);
        }
    }
}
