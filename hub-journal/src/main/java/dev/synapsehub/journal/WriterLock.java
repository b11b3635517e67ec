package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One writer per journal file: an OS lock on {@code <file>-lock}, held while the journal is open
 * and gone with the process. A separate file, because a lock on the database file itself would
 * meddle with SQLite's own locks on it. It is the only thing that marks a journal file as in use
 * by a hub (SQLite's own locking stays normal), so anything that replaces or rewrites the file
 * takes it first ({@link #acquire}); read-only tools only look ({@link #probe}).
 *
 * <p>A writer holds two bytes of the file exclusively: the gate ({@link #GATE}), which only
 * writers ever lock, so taking it is the one atomic step that decides between two writers; and
 * the mark ({@link #MARK}), which a probe tests with a shared lock of a moment. A probe's test
 * lock so never stands in a writer's way for good: a writer that holds the gate and finds the mark
 * under a probe's test waits for it (an earlier whole-file layout refused the writer as "open in
 * another hub" when a tool probed at the same instant). A hub of that earlier layout locks the
 * whole file, both bytes included, so the two layouts still exclude each other.
 */
public final class WriterLock implements AutoCloseable {
    /** The byte only writers lock: taking it decides which writer holds the journal. */
    static final long GATE = 1;
    /** The byte whose exclusive lock shows a writer to a probe (which tests it shared). */
    static final long MARK = 0;
    /** How long a writer that holds the gate waits out probes testing the mark before it gives up. */
    private static final int MARK_TRIES = 2_500;
    /**
     * The lock files this process holds, by file identity. An OS record lock belongs to the
     * process, and closing any descriptor of the file drops all of the process's locks on it: a
     * probe or a refused acquire here that opened and closed a channel of its own on a file this
     * process holds would silently free it, and another process could then take it beside the
     * writer still writing. So the set is consulted, under its own monitor, before any channel is
     * opened, and no second descriptor of a held file is ever opened. Process-wide because the OS
     * lock is; guarded by itself.
     */
    private static final java.util.Set<Object> HELD = new java.util.HashSet<>();
    private final FileChannel channel;
    private final FileLock gate;
    private final FileLock mark;
    private final Object identity;
    private boolean released; // guarded by HELD

    /** Waits between two tries for the mark while a probe tests it (a hook for tests). */
    @FunctionalInterface
    interface Pause {
        /** Called before try {@code attempt + 1} (the first retry is 1). */
        void before(int attempt) throws InterruptedException;

        /** Two milliseconds: a probe holds the mark for microseconds. */
        Pause SLEEP = attempt -> Thread.sleep(2);
    }

    /** What {@link #probe} found. */
    public enum Holder {
        /** No process holds the writer lock (or there is no lock file: no hub ever ran, or it was removed). */
        NONE,
        /** A running hub (or another writer, such as an import) holds it. */
        HUB
    }

    private WriterLock(FileChannel channel, FileLock gate, FileLock mark, Object identity) {
        this.channel = channel;
        this.gate = gate;
        this.mark = mark;
        this.identity = identity;
    }

    /** The lock file's identity (device and inode where the file system has them), read without opening it. */
    private static Object identity(Path file) throws IOException {
        Object key = Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
        return key != null ? key : file.toRealPath();
    }

    /**
     * The lock file of {@code journal}: {@code <journal>-lock} beside the file it names, symbolic
     * links followed (as SQLite follows them to the file it opens), so every path to one journal
     * file, a link or a linked directory included, shares one lock. A journal that does not exist
     * yet is named through its directory's real path.
     */
    public static Path lockFile(Path journal) {
        Path real = realPath(journal);
        return real.resolveSibling(real.getFileName() + "-lock");
    }

    private static Path realPath(Path journal) {
        Path absolute = journal.toAbsolutePath().normalize();
        try {
            return absolute.toRealPath();
        } catch (IOException missing) {
            // not there yet; a link to a file not made yet names the file SQLite will make
            for (int hops = 0; hops < 40 && Files.isSymbolicLink(absolute); hops++) {
                try {
                    absolute = absolute.resolveSibling(Files.readSymbolicLink(absolute)).normalize();
                } catch (IOException unreadable) {
                    break;
                }
            }
            Path dir = absolute.getParent();
            try {
                return dir == null ? absolute : dir.toRealPath().resolve(absolute.getFileName());
            } catch (IOException noDirectory) {
                return absolute; // opening the journal fails on its own, naming the directory
            }
        }
    }

    /**
     * Refuses a journal file that has more than one name (hard links) to a writer: SQLite keys its
     * write-ahead log on the name it was given, so two hubs reaching one file by two names would
     * each see only their own log, and no lock file beside either name could stop them. Read-only
     * tools are not refused (a hard-linked backup tree may be inspected): no hub writes such a file.
     * Where the file system cannot tell, nothing is refused.
     */
    public static void refuseSecondNames(Path journal) throws JournalException {
        Object links;
        try {
            links = Files.getAttribute(journal, "unix:nlink");
        } catch (NoSuchFileException | UnsupportedOperationException | IllegalArgumentException absent) {
            return;
        } catch (IOException e) {
            return; // reading it fails on its own, saying why
        }
        if (links instanceof Integer n && n > 1) {
            throw new JournalRefusedException(journal + " has " + n + " names (hard links): SQLite keeps a"
                    + " journal's write-ahead log by name, so a hub and anything opening it by another name"
                    + " would each miss the other's writes. Keep one name (remove the other links, listed by"
                    + " 'find <dir> -samefile " + journal + "', such as a backup's leftover .partial file, or copy"
                    + " the file) and start again. The file was not modified.");
        }
    }

    /** Takes the lock of {@code journal}, or refuses when another hub (or this one) holds it. */
    public static WriterLock acquire(Path journal) throws JournalException {
        return acquire(journal, Pause.SLEEP);
    }

    /** As {@link #acquire(Path)}, {@code pause} called between two tries for the mark. */
    static WriterLock acquire(Path journal, Pause pause) throws JournalException {
        synchronized (HELD) {
            return acquireHeld(journal, pause);
        }
    }

    private static WriterLock acquireHeld(Path journal, Pause pause) throws JournalException {
        refuseSecondNames(journal);
        Path file = lockFile(journal);
        FileChannel channel;
        Object identity;
        try {
            try {
                Files.createFile(file); // a new file: no lock of this process's can be on it, so closing costs none
            } catch (java.nio.file.FileAlreadyExistsException exists) {
                // checked below
            }
            identity = identity(file);
            if (HELD.contains(identity)) { // refused without a descriptor of our own, whose close would free it
                throw new JournalRefusedException(journal + " is open in another hub (" + file + " is locked by this"
                        + " process); stop it first. The file was not modified.");
            }
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new JournalException(file + ": cannot open the writer lock: " + reason(e), e);
        }
        FileLock gate;
        try {
            gate = channel.tryLock(GATE, 1, false);
        } catch (OverlappingFileLockException | IOException e) {
            gate = null;
        }
        if (gate == null) {
            closeQuietly(channel);
            throw new JournalRefusedException(journal + " is open in another hub (" + file + " is locked);"
                    + " stop it first. The file was not modified.");
        }
        // the gate is ours: no other writer holds the mark, only a probe's test of a moment can
        for (int attempt = 0; attempt < MARK_TRIES; attempt++) {
            try {
                if (attempt > 0) {
                    pause.before(attempt);
                }
                FileLock mark = channel.tryLock(MARK, 1, false);
                if (mark != null) {
                    HELD.add(identity);
                    return new WriterLock(channel, gate, mark, identity);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                closeQuietly(channel);
                throw new JournalException(file + ": interrupted while taking the writer lock");
            } catch (OverlappingFileLockException | IOException e) {
                closeQuietly(channel);
                throw new JournalException(file + ": cannot take the writer lock: " + (e instanceof IOException io
                        ? reason(io) : "held by this process"), e);
            }
        }
        closeQuietly(channel);
        throw new JournalException(file + ": another process kept testing the writer lock for over "
                + MARK_TRIES * 2 / 1000 + " s (a journal tool stopped half-way?); try again");
    }

    /**
     * Whether a process holds the lock of {@code journal}, without creating, writing or keeping
     * anything: a missing lock file means no hub holds the journal (a hub creates it before it
     * opens the file), and an existing one is opened for reading only, so this works on
     * read-only storage. The answer can be stale as soon as it is given; callers only read.
     *
     * @throws JournalException when the lock file exists but cannot be opened or tested, saying why
     */
    public static Holder probe(Path journal) throws JournalException {
        return probe(journal, () -> { });
    }

    /** As {@link #probe(Path)}, {@code whileTesting} run while the test lock is held (a hook for tests). */
    static Holder probe(Path journal, Runnable whileTesting) throws JournalException {
        synchronized (HELD) {
            return probeUnheld(journal, whileTesting);
        }
    }

    private static Holder probeUnheld(Path journal, Runnable whileTesting) throws JournalException {
        Path file = lockFile(journal);
        if (!Files.exists(file)) {
            return Holder.NONE;
        }
        if (!Files.isRegularFile(file)) { // no hub could lock it: something else took the name
            throw new JournalException(file + ": cannot check the writer lock (whether a hub runs on " + journal
                    + "): not a regular file");
        }
        try {
            if (HELD.contains(identity(file))) {
                return Holder.HUB; // this process: no channel opened, whose close would free the lock
            }
        } catch (NoSuchFileException removed) {
            return Holder.NONE;
        } catch (IOException e) {
            throw new JournalException(file + ": cannot check the writer lock (whether a hub runs on " + journal
                    + "): " + reason(e), e);
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            FileLock shared;
            try {
                // conflicts with a writer's exclusive mark (or an earlier layout's whole-file lock) only
                shared = channel.tryLock(MARK, 1, true);
            } catch (OverlappingFileLockException inThisProcess) {
                return Holder.HUB;
            }
            if (shared == null) {
                return Holder.HUB;
            }
            whileTesting.run();
            shared.release();
            return Holder.NONE;
        } catch (NoSuchFileException removed) {
            return Holder.NONE;
        } catch (IOException e) {
            throw new JournalException(file + ": cannot check the writer lock (whether a hub runs on " + journal
                    + "): " + reason(e), e);
        }
    }

    /**
     * Why an I/O operation failed, in words: the JDK's message of a file-system failure is often
     * only the file's name (an {@link AccessDeniedException} has no reason at all).
     */
    public static String reason(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NoSuchFileException) {
            return "no such file or directory";
        }
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /** Releases the lock; idempotent. */
    public void release() {
        synchronized (HELD) {
            if (released) {
                return; // the file may be held by a later acquire of this process now
            }
            released = true;
            for (FileLock held : new FileLock[] {mark, gate}) {
                try {
                    if (held.isValid()) {
                        held.release();
                    }
                } catch (IOException ignored) {
                    // closing the channel below releases it too
                }
            }
            closeQuietly(channel);
            HELD.remove(identity);
        }
    }

    /** As {@link #release()}. */
    @Override
    public void close() {
        release();
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // nothing held any more
        }
    }
}
