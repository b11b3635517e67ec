package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code synapse-hub mcp} refuses settings it could only fail on later, before it serves anything. */
class McpCommandTest {
    /** Exit code and standard error of {@code synapse-hub ARGS} run in this JVM. */
    private record Outcome(int code, String err) {
    }

    private static Outcome run(String... args) {
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            return new Outcome(Main.run(args), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(saved);
        }
    }

    @Test
    void aCursorFileInAMissingDirectoryIsRefusedAtStart(@TempDir Path dir) {
        Path missing = dir.resolve("nodir").resolve("sub");
        Outcome o = run("mcp", "--name", "proj/a", "--url", "ws://127.0.0.1:1",
                "--cursor-file", missing.resolve("cur.cursor").toString());
        assertThat(o.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(o.err()).contains(missing.toString()).contains("does not exist");
    }

    @Test
    void theHelpSaysTheNamespaceIsOptionalAsTheHubHasIt() {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = Main.run(new String[] {"mcp", "--help"});
        } finally {
            System.setOut(saved);
        }
        assertThat(code).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("--name=[NS/]AGENT").contains("optional");
    }
}
