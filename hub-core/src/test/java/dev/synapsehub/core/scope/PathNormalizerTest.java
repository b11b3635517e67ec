package dev.synapsehub.core.scope;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Pins catalog §12.1–12.3 path normalisation and overlap (INV-ME-2, INV-ME-4). */
class PathNormalizerTest {

    @ParameterizedTest(name = "[{0}] -> [{1}]")
    @CsvSource(value = {
            "'  src/  '|src", "./src/foo.py|src/foo.py", "././pkg|pkg", "/|''", "''|''", "a/b/c|a/b/c",
            "src//app.py|src/app.py", "src/../tests|''", "a/b/../c|''", "a/b/../../c|''", "../../etc/passwd|''",
            "/src/app.py|''", "./|''", ".|''", "..|''", "a/..|''", "'   '|''", "src\\app.py|src/app.py",
            "src/|src", "src//|src", "./src/|src", "C:\\x\\y|C:/x/y", "\\\\server\\share|''", "Src|Src",
            "src/ a|src/ a", "...|...", "a/*.py|a/*.py", "café/notes|café/notes"}, delimiter = '|')
    void normalisesOnePath(String raw, String expected) {
        assertThat(PathNormalizer.normalize(raw)).isEqualTo(expected);
    }

    @Test
    void emptyListStaysEmptyAndRootCollapses() {
        assertThat(PathNormalizer.normalizeDeclared(List.of(), 512)).isEmpty();
        assertThat(PathNormalizer.normalizeDeclared(null, 512)).isEmpty();
        assertThat(PathNormalizer.normalizeDeclared(List.of("src", "/"), 512)).containsExactly("");
        assertThat(PathNormalizer.normalizeDeclared(List.of("src", "a/../b"), 512)).containsExactly("");
    }

    @ParameterizedTest
    @ValueSource(strings = {"a\tb", "a\nb", "a\u0000b", "a\u00a0b", "a\u200bb", "a\u202eb", "\u0378", "a\ud800b",
            "\ue000"})
    void nonPrintablePathsWidenTheWholeClaim(String bad) {
        assertThat(PathNormalizer.normalizeDeclared(List.of("src", bad), 512)).containsExactly("");
    }

    @Test
    void printableUnicodeIsKept() {
        assertThat(PathNormalizer.normalizeDeclared(List.of("café/notes", "日本/ファイル", "a b"), 512))
                .containsExactly("café/notes", "日本/ファイル", "a b");
    }

    @Test
    void duplicatesCollapseInFirstSeenOrder() {
        assertThat(PathNormalizer.normalizeDeclared(List.of("b", "./a/", "b/", "a"), 512)).containsExactly("b", "a");
    }

    @Test
    void overLongPathsWiden() {
        String exact = "a".repeat(4096);
        assertThat(PathNormalizer.normalizeDeclared(List.of(exact), 512)).containsExactly(exact);
        assertThat(PathNormalizer.normalizeDeclared(List.of("a".repeat(4097)), 512)).containsExactly("");
        String astral = "\ud83d\ude00".repeat(4096); // 4096 code points, 8192 chars
        assertThat(PathNormalizer.normalizeDeclared(List.of(astral), 512)).containsExactly(astral);
    }

    @Test
    void declaredPathCap() {
        assertThat(PathNormalizer.normalizeDeclared(paths(517), 512)).containsExactly("");
        assertThat(PathNormalizer.normalizeDeclared(paths(513), 512)).containsExactly("");
        assertThat(PathNormalizer.normalizeDeclared(paths(512), 512)).hasSize(512);
        List<String> dupes = new ArrayList<>(paths(512));
        dupes.addAll(paths(512));
        assertThat(PathNormalizer.normalizeDeclared(dupes, 512)).hasSize(512);
        assertThat(PathNormalizer.normalizeDeclared(paths(3), 2)).containsExactly("");
        assertThat(PathNormalizer.normalizeDeclared(paths(2), 2)).hasSize(2);
        assertThat(PathNormalizer.normalizeDeclared(paths(1), 0)).hasSize(1);
        assertThat(PathNormalizer.normalizeDeclared(paths(2), 0)).containsExactly("");
    }

    private static List<String> paths(int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add("dir" + i + "/file");
        }
        return out;
    }

    @Test
    void overlapAlgebra() {
        assertThat(PathNormalizer.overlaps("src", "src")).isTrue();
        assertThat(PathNormalizer.overlaps("src", "src/app.py")).isTrue();
        assertThat(PathNormalizer.overlaps("src/app.py", "src")).isTrue();
        assertThat(PathNormalizer.overlaps("", "anything/x")).isTrue();
        assertThat(PathNormalizer.overlaps("anything/x", "")).isTrue();
        assertThat(PathNormalizer.overlaps("src", "tests")).isFalse();
        assertThat(PathNormalizer.overlaps("src/app.py", "src/util.py")).isFalse();
        assertThat(PathNormalizer.overlaps("src", "srcfoo/x.py")).isFalse();
        assertThat(PathNormalizer.overlaps("srcfoo/x.py", "src")).isFalse();
        assertThat(PathNormalizer.overlaps("src/a", "src/ab")).isFalse();
        String widened = PathNormalizer.normalize("src/../tests/app.py");
        assertThat(PathNormalizer.overlaps(widened, "tests")).isTrue();
        assertThat(PathNormalizer.overlaps(widened, "docs")).isTrue();
        assertThat(PathNormalizer.overlaps(PathNormalizer.normalize("tests//app.py"), "tests/app.py")).isTrue();
        assertThat(PathNormalizer.overlaps(PathNormalizer.normalize("../etc/passwd"), "src/app.py")).isTrue();
        assertThat(PathNormalizer.overlaps("Src", "src")).isFalse();
    }

    @Test
    void scopeConflictRules() {
        assertThat(new Scope("", List.of("src/app.py")).conflictsWith(new Scope("", List.of("src")))).isTrue();
        assertThat(new Scope("", List.of("src")).conflictsWith(new Scope("", List.of("tests", "docs")))).isFalse();
        assertThat(new Scope("wt-a", List.of("src")).conflictsWith(new Scope("wt-b", List.of("src")))).isFalse();
        assertThat(new Scope("", List.of()).conflictsWith(new Scope("other", List.of("src")))).isFalse();
        Scope empty = new Scope("wt", List.of());
        Scope root = new Scope("wt", List.of(""));
        Scope leaf = new Scope("wt", List.of("deep/x"));
        for (Scope whole : List.of(empty, root)) {
            assertThat(whole.wholeWorktree()).isTrue();
            assertThat(whole.conflictsWith(leaf)).isTrue();
            assertThat(leaf.conflictsWith(whole)).isTrue();
            assertThat(whole.conflictsWith(empty)).isTrue();
            assertThat(whole.conflictsWith(root)).isTrue();
        }
    }
}
