package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One writer per journal file: an OS lock on {@code <file>-lock}, held while the journal is open
 * and gone with the process. A separate file, because a lock on the database file itself would
 * meddle with SQLite's own locks on it.
 */
final class WriterLock {
    private final FileChannel channel;
    private final FileLock lock;

    private WriterLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Takes the lock of {@code journal}, or refuses when another hub (or this one) holds it. */
    static WriterLock acquire(Path journal) throws JournalException {
        Path file = journal.resolveSibling(journal.getFileName() + "-lock");
        FileChannel channel;
        try {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new JournalException(file + ": cannot open the writer lock: " + e.getMessage(), e);
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

    /** Releases the lock; idempotent. */
    void release() {
        try {
            if (lock.isValid()) {
                lock.release();
            }
        } catch (IOException ignored) {
            // closing the channel below releases it too
        }
        closeQuietly(channel);
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // nothing held any more
        }
    }
}
