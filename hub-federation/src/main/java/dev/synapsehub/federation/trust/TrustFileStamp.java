package dev.synapsehub.federation.trust;

import dev.synapsehub.net.tls.FileStamp;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What tells a trust file changed: size, modification time, file key, mode, owner and change
 * time. A chmod or chown decides validity too (trust files must be owner-only). Taken before
 * each peer operation (a forwarded claim, a log pull), so read with one {@code lstat} where the
 * platform's {@code unix} attribute view has them all; else one look per attribute.
 */
final class TrustFileStamp {
    private static final String ALL = "unix:size,lastModifiedTime,fileKey,permissions,uid,ctime";

    private TrustFileStamp() {
    }

    /** {@code file}'s stamp now (links not followed: a trust file must not be one). */
    static List<Object> of(Path file) {
        Map<String, Object> a;
        try {
            a = Files.readAttributes(file, ALL, LinkOption.NOFOLLOW_LINKS);
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            return oneByOne(file); // no unix view here
        } catch (IOException e) {
            return List.of(FileStamp.MISSING, "", "", "");
        }
        try {
            FileStamp stamp = new FileStamp((Long) a.get("size"), ((FileTime) a.get("lastModifiedTime")).toMillis(),
                    a.get("fileKey"));
            @SuppressWarnings("unchecked")
            Set<PosixFilePermission> perms = (Set<PosixFilePermission>) a.get("permissions");
            return List.of(stamp, PosixFilePermissions.toString(perms), String.valueOf(a.get("uid")),
                    String.valueOf(a.get("ctime")));
        } catch (ClassCastException | NullPointerException e) {
            return oneByOne(file);
        }
    }

    /** The stamp with one look per attribute (what {@link #of} reads at once where it can). */
    static List<Object> oneByOne(Path file) {
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
