package dev.synapsehub.net.tls;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * What a trust file looked like when it was read (size, modification time, file key), to notice
 * an edit or a replacement without reading it again.
 */
public record FileStamp(long size, long modified, Object key) {
    /** The stamp of a file that is not there (or cannot be stat'ed). */
    public static final FileStamp MISSING = new FileStamp(-1, -1, null);
    /** The stamp of a file that is not configured at all. */
    public static final FileStamp NONE = new FileStamp(-2, -2, null);

    /**
     * {@code p}'s target as it is now, every link on the way followed: what a reader of {@code p}
     * gets (a Kubernetes secret mount rotates by swapping a {@code ..data} link, not the file).
     */
    public static FileStamp followed(Path p) {
        try {
            BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
            return new FileStamp(a.size(), a.lastModifiedTime().toMillis(), a.fileKey());
        } catch (IOException e) {
            return MISSING;
        }
    }

    /** {@code p} as it is now, without following a link at the end. */
    public static FileStamp of(Path p) {
        try {
            BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return new FileStamp(a.size(), a.lastModifiedTime().toMillis(), a.fileKey());
        } catch (IOException e) {
            return MISSING;
        }
    }
}
