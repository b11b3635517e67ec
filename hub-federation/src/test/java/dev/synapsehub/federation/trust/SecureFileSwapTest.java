package dev.synapsehub.federation.trust;

import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A secret file swapped between its check and its read is refused, never read unchecked: the
 * bytes returned are always those of the file that passed the owner-only checks.
 */
class SecureFileSwapTest {
    @TempDir
    Path dir;

    @Test
    void aFileSwappedForAWorldReadableOneBetweenCheckAndReadIsRefused() throws Exception {
        Path secret = dir.resolve("client.key");
        TestCertificates.writePrivate(secret, "checked");
        Path intruder = dir.resolve("intruder");
        Files.writeString(intruder, "unchecked");
        Files.setPosixFilePermissions(intruder, PosixFilePermissions.fromString("rw-r--r--"));

        assertThatThrownBy(() -> SecureFile.read(secret, "--multihub-client-keyfile:", 1024,
                () -> move(intruder, secret)))
                .isInstanceOf(TrustFileException.class)
                .hasMessageContaining("--multihub-client-keyfile:")
                .hasMessageContaining("changed while it was being read");
        // checked again from the start, the world-readable file is refused by the ordinary rule
        assertThatThrownBy(() -> SecureFile.read(secret, "--multihub-client-keyfile:", 1024))
                .hasMessageContaining("accessible by other users");
    }

    @Test
    void aFileRewrittenInPlaceBetweenCheckAndReadIsRefused() throws Exception {
        Path secret = dir.resolve("policy.json");
        TestCertificates.writePrivate(secret, "checked");
        assertThatThrownBy(() -> SecureFile.read(secret, "--multihub-serving-policy:", 1024, () -> {
            try {
                Files.writeString(secret, "grown past the checked size", StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        })).hasMessageContaining("changed while it was being read");
    }

    @Test
    void anUntouchedFileIsReadAsChecked() throws Exception {
        Path secret = dir.resolve("client.pem");
        TestCertificates.writePrivate(secret, "checked");
        assertThat(new String(SecureFile.read(secret, "--multihub-client-certfile:", 1024), StandardCharsets.UTF_8))
                .isEqualTo("checked");
    }

    private static void move(Path from, Path to) {
        try {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
