package dev.synapsehub.core;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * hub-core stays JDK-only. The enforcer bans Netty, JDBC drivers and Jackson as dependencies;
 * this catches what a dependency ban cannot: the JDK's own JDBC API.
 */
class CorePurityTest {
    private static final Pattern FORBIDDEN =
            Pattern.compile("^\\s*import\\s+(static\\s+)?(java\\.sql|javax\\.sql|io\\.netty|com\\.fasterxml)\\b");

    @Test
    void mainSourcesImportNoNettyJdbcOrJackson() throws IOException {
        Path sources = Path.of("src/main/java");
        assertThat(sources).isDirectory();
        List<String> offenders;
        try (Stream<Path> files = Files.walk(sources)) {
            offenders = files.filter(p -> p.toString().endsWith(".java"))
                    .flatMap(CorePurityTest::forbiddenImports)
                    .toList();
        }
        assertThat(offenders).isEmpty();
    }

    @Test
    void theCheckRecognisesAForbiddenImport() {
        assertThat(FORBIDDEN.matcher("import java.sql.Connection;").find()).isTrue();
        assertThat(FORBIDDEN.matcher("import io.netty.channel.Channel;").find()).isTrue();
        assertThat(FORBIDDEN.matcher("import java.util.List;").find()).isFalse();
    }

    private static Stream<String> forbiddenImports(Path file) {
        try {
            return Files.readAllLines(file).stream()
                    .filter(line -> FORBIDDEN.matcher(line).find())
                    .map(line -> file + ": " + line.strip());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
