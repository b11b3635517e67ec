package dev.synapsehub.federation.trust;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A trust file's stamp read at once is the stamp read attribute by attribute, and moves with every change. */
class TrustFileStampTest {
    @TempDir
    Path dir;

    @Test
    void theStampReadAtOnceIsTheOneReadAttributeByAttribute() throws Exception {
        Path file = dir.resolve("policy.toml");
        Files.writeString(file, "version = 1\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertThat(TrustFileStamp.of(file)).isEqualTo(TrustFileStamp.oneByOne(file));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        assertThat(TrustFileStamp.of(file)).isEqualTo(TrustFileStamp.oneByOne(file));
        Path missing = dir.resolve("missing.toml");
        assertThat(TrustFileStamp.of(missing)).isEqualTo(TrustFileStamp.oneByOne(missing));
        Path link = dir.resolve("link.toml");
        Files.createSymbolicLink(link, file);
        assertThat(TrustFileStamp.of(link)).as("the link itself, not its target")
                .isEqualTo(TrustFileStamp.oneByOne(link)).isNotEqualTo(TrustFileStamp.of(file));
    }

    @Test
    void aChmodOrANewContentMovesTheStampAndNothingElseDoes() throws Exception {
        Path file = dir.resolve("store.json");
        Files.writeString(file, "{}");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        List<Object> first = TrustFileStamp.of(file);
        assertThat(TrustFileStamp.of(file)).isEqualTo(first);

        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
        List<Object> chmodded = TrustFileStamp.of(file);
        assertThat(chmodded).isNotEqualTo(first);
        assertThat(chmodded.get(1)).isEqualTo("rw-r-----");

        Files.writeString(file, "{\"peers\": []}");
        assertThat(TrustFileStamp.of(file)).isNotEqualTo(chmodded);
    }
}
