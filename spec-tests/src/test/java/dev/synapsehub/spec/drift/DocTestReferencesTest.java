package dev.synapsehub.spec.drift;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The operator docs name the tests that pin what they promise (docs/mesh.md's seed 001 table
 * above all): every {@code SomethingTest} and {@code SomethingTest.method} they cite must exist,
 * so a renamed or deleted test cannot leave a promise pinned by nothing.
 */
class DocTestReferencesTest {

    static final List<String> DOCS = List.of("docs/mesh.md", "docs/federation.md", "docs/cockpit.md",
            "docs/protocol.md", "docs/operations.md", "docs/mcp.md");
    private static final Pattern REFERENCE =
            Pattern.compile("\\b([A-Z][A-Za-z0-9]*Test)(?:\\.([a-z][A-Za-z0-9_]*))?\\b");

    @Test
    void everyTestTheOperatorDocsCiteExists() throws IOException {
        Path root = SpecDriftGuardTest.repoRoot();
        Map<String, String> sources = testSources(root);
        List<String> missing = new ArrayList<>();
        int cited = 0;
        for (String doc : DOCS) {
            String text = Files.readString(root.resolve(doc), StandardCharsets.UTF_8);
            for (String reference : references(text)) {
                cited++;
                if (!resolves(reference, sources)) {
                    missing.add(doc + ": " + reference);
                }
            }
        }
        assertThat(cited).as("the docs cite tests at all (the pattern still matches)").isGreaterThan(50);
        assertThat(missing).as("cited tests that do not exist").isEmpty();
    }

    @Test
    void aCitedTestThatDoesNotExistIsFound() throws IOException {
        Map<String, String> sources = testSources(SpecDriftGuardTest.repoRoot());
        assertThat(resolves("MeshSnapshotTest", sources)).isTrue();
        assertThat(resolves("MeshSnapshotTest.aRestartedNodeStartsFromItsSnapshotPlusTheLogTail", sources)).isTrue();
        assertThat(resolves("MeshSnapshotTest.aMethodNobodyWrote", sources)).isFalse();
        assertThat(resolves("RenamedAwayTest", sources)).isFalse();
        assertThat(references("pinned by `FooTest.bar` and `BazTest`; see `QuxTest.java`"))
                .containsExactly("BazTest", "FooTest.bar", "QuxTest");
    }

    /** Cited references: {@code ClassTest} or {@code ClassTest.method} ({@code .java} is a file name). */
    static TreeSet<String> references(String text) {
        TreeSet<String> refs = new TreeSet<>();
        Matcher m = REFERENCE.matcher(text);
        while (m.find()) {
            String method = m.group(2);
            refs.add(method == null || method.equals("java") ? m.group(1) : m.group(1) + "." + method);
        }
        return refs;
    }

    static boolean resolves(String reference, Map<String, String> sources) {
        int dot = reference.indexOf('.');
        String cls = dot < 0 ? reference : reference.substring(0, dot);
        String source = sources.get(cls);
        if (source == null) {
            return false;
        }
        return dot < 0 || Pattern.compile("\\b" + Pattern.quote(reference.substring(dot + 1)) + "\\s*\\(")
                .matcher(source).find();
    }

    /** Simple class name → the source of every test file of that name in the reactor. */
    static Map<String, String> testSources(Path root) throws IOException {
        Map<String, String> sources = new HashMap<>();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : modules.filter(p -> Files.isDirectory(p.resolve("src/test/java"))).toList()) {
                try (Stream<Path> files = Files.walk(module.resolve("src/test/java"))) {
                    files.filter(f -> f.toString().endsWith(".java")).forEach(f -> {
                        String name = f.getFileName().toString();
                        try {
                            sources.merge(name.substring(0, name.length() - 5),
                                    Files.readString(f, StandardCharsets.UTF_8), String::concat);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
                }
            }
        }
        return sources;
    }
}
