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
 */
public final class WriterLock implements AutoCloseable {
    private final FileChannel channel;
    private final FileLock lock;

    /** What {@link #probe} found. */
    public enum Holder {
        /** No process holds the writer lock (or there is no lock file: no hub ever ran, or it was removed). */
        NONE,
        /** A running hub (or another writer, such as an import) holds it. */
        HUB
    }

    private WriterLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** The lock file of {@code journal}: {@code <journal>-lock} beside it. */
    public static Path lockFile(Path journal) {
        return journal.resolveSibling(journal.getFileName() + "-lock");
    }

    /** Takes the lock of {@code journal}, or refuses when another hub (or this one) holds it. */
    public static WriterLock acquire(Path journal) throws JournalException {
        Path file = lockFile(journal);
        FileChannel channel;
        try {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new JournalException(file + ": cannot open the writer lock: " + reason(e), e);
        }
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException | IOException e) {
            lock = null;
        }
        if (lock == null) {
            closeQuietly(channel);
            throw new JournalRefusedException(journal + " is open in another hub (" + file + " is locked);"
                    + " stop it first. The file was not modified.");
        }
        return new WriterLock(channel, lock);
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
        Path file = lockFile(journal);
        if (!Files.exists(file)) {
            return Holder.NONE;
        }
        if (!Files.isRegularFile(file)) { // no hub could lock it: something else took the name
            throw new JournalException(file + ": cannot check the writer lock (whether a hub runs on " + journal
                    + "): not a regular file");
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            FileLock shared;
            try {
                shared = channel.tryLock(0, Long.MAX_VALUE, true); // conflicts with a hub's exclusive lock only
            } catch (OverlappingFileLockException inThisProcess) {
                return Holder.HUB;
            }
            if (shared == null) {
                return Holder.HUB;
            }
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
        try {
            if (lock.isValid()) {
                lock.release();
            }
        } catch (IOException ignored) {
            // closing the channel below releases it too
        }
        closeQuietly(channel);
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
