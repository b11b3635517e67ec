package dev.synapsehub.spec.drift;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The other half of the constants drift guard: {@link SpecDriftGuardTest} binds the document to
 * {@code SpecConstants}, this binds the sites that send or default a normative constant to
 * {@code SpecConstants}, so a changed constant cannot leave a literal copy behind. Each rule
 * matches the shape of one kind of site in the main sources of every module.
 */
class SpecConstantSitesTest {

    /** A literal where a site must reference a constant, and which constant. */
    record Rule(Pattern literal, String constant) {
    }

    static final List<Rule> RULES = List.of(
            new Rule(Pattern.compile("\"protocol_version\"\\s*,\\s*\\d"), "WIRE_PROTOCOL_VERSION"),
            // a close call: the code followed by its reason text
            new Rule(Pattern.compile("\\b4016\\s*,\\s*\""), "NAME_OWNED_CLOSE_CODE"),
            optionDefault("--max-claims-per-agent", "MAX_CLAIMS_PER_AGENT"),
            optionDefault("--max-paths-per-claim", "MAX_DECLARED_PATHS"),
            optionDefault("--message-auth-window-seconds", "DEFAULT_MESSAGE_AUTH_WINDOW_SECONDS"),
            optionDefault("--lease-offline-ttl", "DEFAULT_LEASE_OFFLINE_TTL"));

    /** A picocli default written as text ({@code defaultValue = "128"}), not {@code "" + SpecConstants.X}. */
    private static Rule optionDefault(String option, String constant) {
        return new Rule(Pattern.compile("names\\s*=\\s*\"" + Pattern.quote(option)
                + "\"\\s*,\\s*defaultValue\\s*=\\s*\"[^\"]"), constant);
    }

    @Test
    void everySiteOfANormativeConstantReferencesSpecConstants() throws IOException {
        Path root = SpecDriftGuardTest.repoRoot();
        List<String> found = new ArrayList<>();
        int files = 0;
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : modules.filter(p -> Files.isDirectory(p.resolve("src/main/java"))).toList()) {
                try (Stream<Path> sources = Files.walk(module.resolve("src/main/java"))) {
                    for (Path f : sources.filter(p -> p.toString().endsWith(".java")).toList()) {
                        files++;
                        found.addAll(violations(root.relativize(f).toString(), read(f)));
                    }
                }
            }
        }
        assertThat(files).as("the main sources were found").isGreaterThan(100);
        assertThat(found).as("literal copies of normative constants").isEmpty();
    }

    @Test
    void aLiteralCopyIsFoundAndAReferenceIsNot() {
        assertThat(violations("X.java", "o.put(\"protocol_version\", 2);"))
                .containsExactly("X.java:1: a literal where SpecConstants.WIRE_PROTOCOL_VERSION belongs");
        assertThat(violations("X.java", "a();\nclose(session, e,\n    4016, \"name owned\");"))
                .containsExactly("X.java:3: a literal where SpecConstants.NAME_OWNED_CLOSE_CODE belongs");
        assertThat(violations("X.java", "@Option(names = \"--max-claims-per-agent\", defaultValue = \"128\")"))
                .containsExactly("X.java:1: a literal where SpecConstants.MAX_CLAIMS_PER_AGENT belongs");
        assertThat(violations("X.java", "o.put(\"protocol_version\", SpecConstants.WIRE_PROTOCOL_VERSION);\n"
                + "close(s, e, SpecConstants.NAME_OWNED_CLOSE_CODE, \"name owned\"); // 4016\n"
                + "Set.of(4009, 4016);\n"
                + "@Option(names = \"--max-claims-per-agent\", defaultValue = \"\" + SpecConstants.MAX_CLAIMS_PER_AGENT)"))
                .isEmpty();
    }

    /** Each match of a rule in {@code source}, as {@code path:line: what belongs there}. */
    static List<String> violations(String path, String source) {
        List<String> found = new ArrayList<>();
        for (Rule rule : RULES) {
            Matcher m = rule.literal().matcher(source);
            while (m.find()) {
                long line = source.substring(0, m.end()).chars().filter(c -> c == '\n').count() + 1;
                found.add(path + ":" + line + ": a literal where SpecConstants." + rule.constant() + " belongs");
            }
        }
        return found;
    }

    private static String read(Path f) {
        try {
            return Files.readString(f, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
