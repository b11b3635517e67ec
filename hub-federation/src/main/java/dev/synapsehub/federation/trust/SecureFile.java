package dev.synapsehub.federation.trust;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
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
     * The bytes of {@code file}, checked first.
     *
     * @param role the prefix naming the file's role in messages
     * @throws TrustFileException with the contract's text and the fix
     */
    public static byte[] read(Path file, String role, long maxBytes) throws TrustFileException {
        Path absolute = file.toAbsolutePath().normalize();
        noSymlinkOnTheWay(absolute, role);
        try {
            if (!Files.exists(absolute, LinkOption.NOFOLLOW_LINKS)) {
                throw new NoSuchFileException(absolute.toString());
            }
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
            return Files.readAllBytes(absolute);
        } catch (NoSuchFileException e) {
            throw new TrustFileException(role + " cannot securely open " + absolute + ": No such file or directory", e);
        } catch (IOException e) {
            throw new TrustFileException(role + " cannot securely open " + absolute + ": " + e.getMessage(), e);
        }
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
