package dev.synapsehub.federation.follow;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The mirror beside the journal holds what peers assert: its files are owner-only, as the journal's are. */
class SqliteMirrorFileTest {
    @TempDir
    Path dir;

    @Test
    void theMirrorAndItsWalAndShmFilesAreCreatedOwnerOnly() throws Exception {
        Path db = dir.resolve("hub.db");
        Path file = SqliteMirror.fileFor(db);
        try (SqliteMirror mirror = SqliteMirror.open(db)) {
            mirror.commit(new PeerView("hub-b", 1, 1, 1.0, null, Double.NaN, null, 0, Map.of()), "sha256:aa",
                    List.of(), List.of());
            for (Path f : List.of(file, file.resolveSibling(file.getFileName() + "-wal"),
                    file.resolveSibling(file.getFileName() + "-shm"))) {
                assertThat(f).exists();
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f))).as(f.toString())
                        .isEqualTo("rw-------");
            }
        }
    }

    /**
     * Another connection's write lock (an operator's tool, a checkpoint) is waited for, not failed on, for
     * the mirror's own 5 s: held 3.5 s, beyond the 3 s sqlite-jdbc would otherwise wait by default.
     */
    @Test
    void aPollCommitWaitsForAnotherConnectionsLockInsteadOfFailing() throws Exception {
        Path db = dir.resolve("hub.db");
        try (SqliteMirror mirror = SqliteMirror.open(db);
             java.sql.Connection other = java.sql.DriverManager.getConnection("jdbc:sqlite:" + SqliteMirror.fileFor(db))) {
            other.setAutoCommit(false);
            try (java.sql.Statement s = other.createStatement()) {
                s.execute("INSERT INTO peer (peer, cursor, log_end, last_success, generation) VALUES ('held', 0, 0, 0, 0)");
            } // the other connection now holds the write lock until it commits
            java.util.concurrent.CountDownLatch committing = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CompletableFuture<Void> release = java.util.concurrent.CompletableFuture.runAsync(() -> {
                try {
                    committing.await();
                    Thread.sleep(3_500); // past sqlite-jdbc's 3 s default, 1.5 s inside the 5 s set
                    other.commit();
                } catch (Exception e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            committing.countDown();
            mirror.commit(new PeerView("hub-b", 1, 1, 1.0, null, Double.NaN, null, 0, Map.of()), "sha256:aa",
                    List.of(), List.of());
            release.get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(mirror.load()).extracting(PeerView::peer).containsExactlyInAnyOrder("held", "hub-b");
        }
    }

    /** A mirror an older version made 0644 (with its -wal and -shm) is made owner-only when the hub opens it. */
    @Test
    void anExistingMirrorReadableByOthersIsMadeOwnerOnlyWhenOpened() throws Exception {
        Path db = dir.resolve("hub.db");
        Path file = SqliteMirror.fileFor(db);
        List<Path> files = List.of(file, file.resolveSibling(file.getFileName() + "-wal"),
                file.resolveSibling(file.getFileName() + "-shm"));
        try (SqliteMirror mirror = SqliteMirror.open(db)) {
            mirror.commit(new PeerView("hub-b", 1, 1, 1.0, null, Double.NaN, null, 0, Map.of()), "sha256:aa",
                    List.of(), List.of());
            for (Path f : files) {
                Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
            }
        }
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        for (Path f : files.subList(1, 3)) { // as a crash (or an older SQLite) leaves them
            if (Files.notExists(f)) {
                Files.createFile(f, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
            }
        }
        try (SqliteMirror mirror = SqliteMirror.open(db)) {
            assertThat(mirror.load()).singleElement().extracting(PeerView::peer).isEqualTo("hub-b");
            for (Path f : files) {
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f))).as(f.toString())
                        .isEqualTo("rw-------");
            }
        }
    }
}
