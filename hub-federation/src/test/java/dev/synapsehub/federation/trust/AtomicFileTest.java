package dev.synapsehub.federation.trust;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Trust files are replaced whole, owner-only, and a failed replacement leaves no temp file behind. */
class AtomicFileTest {
    @TempDir
    Path dir;

    @Test
    void aWriteReplacesTheFileWholeWithOwnerOnlyPermissionsAndNoTempFile() throws IOException {
        Path file = dir.resolve("store.json");
        Files.writeString(file, "old");
        AtomicFile.write(file, "new contents".getBytes(StandardCharsets.UTF_8));
        assertThat(Files.readString(file)).isEqualTo("new contents");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("store.json");
        }
    }

    @Test
    void aReplacementThatCannotBeRenamedLeavesTheTargetAndNoTempFile() throws IOException {
        // a non-empty directory where the file should go: the rename fails after the temp file is written
        Path target = dir.resolve("bundle.json");
        Files.createDirectories(target);
        Files.writeString(target.resolve("keep"), "x");
        assertThatThrownBy(() -> AtomicFile.write(target, "secret".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IOException.class);
        assertThat(Files.readString(target.resolve("keep"))).isEqualTo("x");
        assertThat(Files.exists(dir.resolve("bundle.json.tmp"))).isFalse();
    }
}
