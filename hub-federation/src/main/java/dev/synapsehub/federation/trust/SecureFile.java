package dev.synapsehub.federation.trust;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * Opens a secret file the way contract F3 requires: a regular file owned by the hub's user,
 * without group or other permission bits, with exactly one hard link, no symbolic link in any
 * path component, and no larger than a limit. Each refusal is the contract's text with the
 * file's role as prefix (e.g. {@code --multihub-serving-policy:}).
 */
public final class SecureFile {
    private static final Set<PosixFilePermission> GROUP_OTHER = EnumSet.of(
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private SecureFile() {
    }

    /**
     * The bytes of {@code file}, checked first. The bytes returned are those of the file that was
     * checked: the file is opened without following a link, read through that one handle, and its
     * attributes (file key, size, times, mode, owner, links) are compared before the check and
     * after the read; a file replaced or edited in between is refused, never read unchecked.
     *
     * @param role the prefix naming the file's role in messages
     * @throws TrustFileException with the contract's text and the fix
     */
    public static byte[] read(Path file, String role, long maxBytes) throws TrustFileException {
        return read(file, role, maxBytes, () -> { });
    }

    /** {@link #read(Path, String, long)}, running {@code betweenCheckAndRead} after the checks (tests: a swap there). */
    static byte[] read(Path file, String role, long maxBytes, Runnable betweenCheckAndRead) throws TrustFileException {
        Path absolute = file.toAbsolutePath().normalize();
        noSymlinkOnTheWay(absolute, role);
        try {
            if (!Files.exists(absolute, LinkOption.NOFOLLOW_LINKS)) {
                throw new NoSuchFileException(absolute.toString());
            }
            Map<String, Object> before = identity(absolute);
            if (!Files.isRegularFile(absolute, LinkOption.NOFOLLOW_LINKS)) {
                throw new TrustFileException(role + " cannot securely open " + absolute + ": Not a regular file");
            }
            if (absolute.getFileSystem().supportedFileAttributeViews().contains("unix")) {
                Set<PosixFilePermission> perms = Files.getPosixFilePermissions(absolute, LinkOption.NOFOLLOW_LINKS);
                if (perms.stream().anyMatch(GROUP_OTHER::contains)) {
                    throw new TrustFileException(role + " " + absolute + " is accessible by other users (mode "
                            + octal(perms) + "); a secret file must be owner-only — run: chmod 600 " + absolute);
                }
                int uid = (Integer) Files.getAttribute(absolute, "unix:uid", LinkOption.NOFOLLOW_LINKS);
                long me = new com.sun.security.auth.module.UnixSystem().getUid();
                if (uid != me) {
                    throw new TrustFileException(role + " " + absolute + " is owned by uid " + uid + ", not by the hub's uid "
                            + me + " — run: chown " + me + " " + absolute);
                }
                int links = (Integer) Files.getAttribute(absolute, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
                if (links != 1) {
                    throw new TrustFileException(role + " " + absolute + " has " + links
                            + " hard links; a secret file must have exactly one — copy it to a file of its own");
                }
            }
            long size = Files.size(absolute);
            if (size > maxBytes) {
                throw new TrustFileException(role + " " + absolute + " is " + size + " bytes, over the limit of "
                        + maxBytes + " — is it the right file?");
            }
            betweenCheckAndRead.run();
            byte[] bytes;
            try (SeekableByteChannel in = Files.newByteChannel(absolute, StandardOpenOption.READ,
                    LinkOption.NOFOLLOW_LINKS)) {
                bytes = readBounded(in, maxBytes);
            }
            if (bytes == null || !before.equals(identity(absolute))) {
                // the path now names another file, or the checked one changed: what was read is not what was checked
                throw new TrustFileException(role + " " + absolute + " changed while it was being read; it is refused"
                        + " until it is read whole as checked — replace it with one rename (mv) and it is read again");
            }
            return bytes;
        } catch (NoSuchFileException e) {
            throw new TrustFileException(role + " cannot securely open " + absolute + ": No such file or directory", e);
        } catch (IOException e) {
            throw new TrustFileException(role + " cannot securely open " + absolute + ": " + e.getMessage(), e);
        }
    }

    /** Everything that tells one file (and one version of it) from another, without following a link. */
    private static Map<String, Object> identity(Path absolute) throws IOException {
        if (absolute.getFileSystem().supportedFileAttributeViews().contains("unix")) {
            Map<String, Object> a = new java.util.TreeMap<>(Files.readAttributes(absolute,
                    "unix:dev,ino,size,lastModifiedTime,ctime,mode,uid,nlink", LinkOption.NOFOLLOW_LINKS));
            return a;
        }
        BasicFileAttributes b = Files.readAttributes(absolute, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        return Map.of("key", String.valueOf(b.fileKey()), "size", b.size(), "modified", b.lastModifiedTime());
    }

    /** The channel's bytes, or null when it holds more than {@code maxBytes} (it grew after the size check). */
    private static byte[] readBounded(SeekableByteChannel in, long maxBytes) throws IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        ByteBuffer buf = ByteBuffer.allocate(8192);
        long total = 0;
        while (in.read(buf.clear()) >= 0) {
            total += buf.position();
            if (total > maxBytes) {
                return null;
            }
            out.write(buf.array(), 0, buf.position());
        }
        return out.toByteArray();
    }

    /** Walks every component from the root (POSIX walk): none may be a symbolic link. */
    private static void noSymlinkOnTheWay(Path absolute, String role) throws TrustFileException {
        Path walked = absolute.getRoot();
        for (Path part : absolute) {
            walked = walked.resolve(part);
            if (Files.isSymbolicLink(walked)) {
                throw new TrustFileException(role + " cannot securely open " + absolute
                        + ": Too many levels of symbolic links (" + walked + " is a symbolic link; name the real path)");
            }
        }
    }

    private static String octal(Set<PosixFilePermission> perms) {
        String rwx = PosixFilePermissions.toString(perms);
        int mode = 0;
        for (int i = 0; i < 9; i++) {
            mode = (mode << 1) | (rwx.charAt(i) == '-' ? 0 : 1);
        }
        return Integer.toOctalString(mode);
    }
}
