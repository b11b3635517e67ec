package dev.synapsehub.federation.trust;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/** Replaces a trust file atomically: a temp file (mode 0600) beside it, fsync, rename, fsync of the directory (contract F2). */
final class AtomicFile {
    private AtomicFile() {
    }

    static void write(Path file, byte[] bytes) throws IOException {
        Path absolute = file.toAbsolutePath();
        Files.createDirectories(absolute.getParent());
        Path temp = absolute.resolveSibling(absolute.getFileName() + ".tmp");
        Files.deleteIfExists(temp);
        if (absolute.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Files.createFile(temp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } else {
            Files.createFile(temp);
        }
        boolean moved = false;
        try {
            try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                while (buffer.hasRemaining()) {
                    ch.write(buffer);
                }
                ch.force(true);
            }
            Files.move(temp, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            moved = true;
        } finally {
            if (!moved) { // a failed write leaves no stray temp file holding key material
                Files.deleteIfExists(temp);
            }
        }
        // the rename is durable only once the directory entry is on disk
        try (FileChannel dir = FileChannel.open(absolute.getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        }
    }
}
