package dev.synapsehub.mcp;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class McpSettingsTest {
    private static McpSettings settings(String name, Path cursorFile) {
        return new McpSettings(URI.create("ws://127.0.0.1:8876/"), name, null, Duration.ofSeconds(5),
                McpSettings.DEFAULT_HEARTBEAT, 10, cursorFile);
    }

    @Test
    void aCursorFileInAMissingDirectoryIsRefusedNamingTheDirectory(@TempDir Path dir) {
        Path missing = dir.resolve("nodir").resolve("sub");
        assertThatThrownBy(() -> settings("proj/a", missing.resolve("cur.cursor")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(missing.toString()).hasMessageContaining("mkdir -p");
        assertThat(settings("proj/a", dir.resolve("cur.cursor")).cursorFile()).isEqualTo(dir.resolve("cur.cursor"));
    }
}
