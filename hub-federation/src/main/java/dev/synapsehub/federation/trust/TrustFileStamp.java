package dev.synapsehub.federation.trust;

import dev.synapsehub.net.tls.FileStamp;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;

/**
 * What tells a trust file changed: size, modification time, file key, mode, owner and change
 * time. A chmod or chown decides validity too (trust files must be owner-only).
 */
final class TrustFileStamp {
    private TrustFileStamp() {
    }

    /** {@code file}'s stamp now (links not followed: a trust file must not be one). */
    static List<Object> of(Path file) {
        return List.of(FileStamp.of(file), attribute(file, "posix:permissions"), attribute(file, "unix:uid"),
                attribute(file, "unix:ctime"));
    }

    private static String attribute(Path file, String name) {
        try {
            Object v = Files.getAttribute(file, name, LinkOption.NOFOLLOW_LINKS);
            @SuppressWarnings("unchecked")
            String text = v instanceof Set<?> perms ? PosixFilePermissions.toString(
                    (Set<java.nio.file.attribute.PosixFilePermission>) perms) : String.valueOf(v);
            return text;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            return "";
        }
    }
}
