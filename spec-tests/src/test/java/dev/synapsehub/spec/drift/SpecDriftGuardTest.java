package dev.synapsehub.spec.drift;

import dev.synapsehub.core.SpecConstants;
import dev.synapsehub.spec.model.CoordinationModelTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The drift guard: docs/coordination-spec.md and the code must agree (constants by value,
 * Pinned-by files present, every invariant pinned or marked not yet implemented, [model] tags
 * and the model's MODEL_INVARIANTS equal in both directions, each model id really asserted).
 * The second half feeds the guard deliberately drifted copies to prove it can fail.
 */
class SpecDriftGuardTest {

    static final String DOC = "docs/coordination-spec.md";
    static final String MODEL_DIR = "spec-tests/src/test/java/dev/synapsehub/spec/model";

    static Path root;
    static String document;
    static SpecDriftGuard.CodeFacts facts;

    @BeforeAll
    static void readDocumentAndCode() throws IOException {
        root = repoRoot();
        document = Files.readString(root.resolve(DOC), StandardCharsets.UTF_8);
        facts = new SpecDriftGuard.CodeFacts(codeConstants(), CoordinationModelTest.MODEL_INVARIANTS,
                modelSource(root), rel -> Files.isRegularFile(root.resolve(rel)), SpecDriftGuardTest::loads);
    }

    /** {@code spec.root} (set by the pom), else walk up from user.dir to the directory holding docs/. */
    static Path repoRoot() {
        String configured = System.getProperty("spec.root");
        if (configured != null && !configured.isBlank()
                && Files.isRegularFile(Paths.get(configured).resolve(DOC))) {
            return Paths.get(configured).toAbsolutePath().normalize();
        }
        for (Path p = Paths.get(System.getProperty("user.dir")).toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve(DOC))) {
                return p;
            }
        }
        throw new IllegalStateException("cannot find " + DOC + " above " + System.getProperty("user.dir"));
    }

    /** The code's normative constants, named explicitly (compared by value, never by substring). */
    static Map<String, Object> codeConstants() {
        Map<String, Object> m = new TreeMap<>();
        m.put("MINIMUM_TTL_SECONDS", SpecConstants.MINIMUM_TTL_SECONDS);
        m.put("MAXIMUM_TTL_SECONDS", SpecConstants.MAXIMUM_TTL_SECONDS);
        m.put("DEFAULT_LEASE_TTL_SECONDS", SpecConstants.DEFAULT_LEASE_TTL_SECONDS);
        m.put("MAX_CLAIMS_PER_AGENT", SpecConstants.MAX_CLAIMS_PER_AGENT);
        m.put("MAX_DECLARED_PATHS", SpecConstants.MAX_DECLARED_PATHS);
        m.put("MAX_PATH_LENGTH", SpecConstants.MAX_PATH_LENGTH);
        m.put("DEFAULT_WORKTREE", SpecConstants.DEFAULT_WORKTREE);
        m.put("DEFAULT_MESSAGE_AUTH_WINDOW_SECONDS", SpecConstants.DEFAULT_MESSAGE_AUTH_WINDOW_SECONDS);
        m.put("DEFAULT_MESSAGE_AUTH_FUTURE_SKEW_SECONDS", SpecConstants.DEFAULT_MESSAGE_AUTH_FUTURE_SKEW_SECONDS);
        m.put("DEFAULT_LEASE_OFFLINE_TTL", SpecConstants.DEFAULT_LEASE_OFFLINE_TTL);
        m.put("DEFAULT_RESOURCE_TTL_SECONDS", SpecConstants.DEFAULT_RESOURCE_TTL_SECONDS);
        m.put("WIRE_PROTOCOL_VERSION", SpecConstants.WIRE_PROTOCOL_VERSION);
        m.put("NAME_OWNED_CLOSE_CODE", SpecConstants.NAME_OWNED_CLOSE_CODE);
        return m;
    }

    static String modelSource(Path root) throws IOException {
        try (Stream<Path> files = Files.list(root.resolve(MODEL_DIR))) {
            return files.filter(p -> p.toString().endsWith(".java")).sorted().map(p -> {
                try {
                    return Files.readString(p, StandardCharsets.UTF_8);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).collect(Collectors.joining("\n"));
        }
    }

    static boolean loads(String className) {
        try {
            Class.forName(className, false, SpecDriftGuardTest.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    // -----------------------------------------------------------------------------------------
    // The real document against the real code

    @Test
    void explicitConstantMapCoversEverySpecConstant() {
        Set<String> declared = new TreeSet<>();
        for (Field f : SpecConstants.class.getDeclaredFields()) {
            int mod = f.getModifiers();
            if (Modifier.isPublic(mod) && Modifier.isStatic(mod) && Modifier.isFinal(mod)) {
                declared.add(f.getName());
            }
        }
        assertThat(codeConstants().keySet()).as("name -> value map in this test").isEqualTo(declared);
    }

    @Test
    void documentAgreesWithTheCode() {
        List<SpecDriftGuard.Violation> violations = SpecDriftGuard.check(document, facts);
        assertThat(violations).as("drift between " + DOC + " and the code").isEmpty();
    }

    @Test
    void documentCitesTheModelAndEveryModelIdIsTagged() {
        SpecDocument doc = SpecDocument.parse(document);
        Set<String> tagged = doc.invariants().entrySet().stream().filter(e -> e.getValue().get(0).modelTag())
                .map(Map.Entry::getKey).collect(Collectors.toCollection(TreeSet::new));
        assertThat(tagged).isEqualTo(new TreeSet<>(CoordinationModelTest.MODEL_INVARIANTS));
        assertThat(doc.invariants().keySet()).containsAll(SpecDriftGuard.SEED_INVARIANTS);
        assertThat(doc.constants()).hasSize(codeConstants().size());
        assertThat(document).contains(MODEL_DIR + "/CoordinationModelTest.java")
                .contains("spec-tests/src/test/java/dev/synapsehub/spec/drift/SpecDriftGuardTest.java");
    }

    // -----------------------------------------------------------------------------------------
    // The guard can fail: deliberately drifted copies

    private static List<SpecDriftGuard.Violation> drifted(String text) {
        return SpecDriftGuard.check(text, facts);
    }

    private static Set<SpecDriftGuard.Kind> kinds(List<SpecDriftGuard.Violation> vs) {
        return vs.stream().map(SpecDriftGuard.Violation::kind).collect(Collectors.toSet());
    }

    @Test
    void changedConstantValueIsReported() {
        String copy = document.replace("| `MAX_CLAIMS_PER_AGENT` | `128` |", "| `MAX_CLAIMS_PER_AGENT` | `129` |");
        assertThat(copy).isNotEqualTo(document);
        assertThat(drifted(copy)).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.CONSTANT_VALUE
                && v.subject().equals("MAX_CLAIMS_PER_AGENT"));

        // By value, not substring: 11.0 must not pass for 1.0, and 30 equals 30.0.
        String skew = document.replace("| `DEFAULT_MESSAGE_AUTH_FUTURE_SKEW_SECONDS` | `1.0` |",
                "| `DEFAULT_MESSAGE_AUTH_FUTURE_SKEW_SECONDS` | `11.0` |");
        assertThat(skew).isNotEqualTo(document);
        assertThat(drifted(skew)).anyMatch(v -> v.subject().equals("DEFAULT_MESSAGE_AUTH_FUTURE_SKEW_SECONDS"));
        String sameValue = document.replace("| `MINIMUM_TTL_SECONDS` | `30.0` |", "| `MINIMUM_TTL_SECONDS` | `30` |");
        assertThat(sameValue).isNotEqualTo(document);
        assertThat(drifted(sameValue)).noneMatch(v -> v.subject().equals("MINIMUM_TTL_SECONDS"));

        String worktree = document.replace("| `DEFAULT_WORKTREE` | `\"\"` |", "| `DEFAULT_WORKTREE` | `\"main\"` |");
        assertThat(worktree).isNotEqualTo(document);
        assertThat(drifted(worktree)).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.CONSTANT_VALUE
                && v.subject().equals("DEFAULT_WORKTREE"));
    }

    @Test
    void missingOrUnknownConstantRowIsReported() {
        String withoutRow = document.lines().filter(l -> !l.startsWith("| `MAX_PATH_LENGTH`"))
                .collect(Collectors.joining("\n"));
        assertThat(drifted(withoutRow)).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.CONSTANT_UNDOCUMENTED
                && v.subject().equals("MAX_PATH_LENGTH"));
        String extra = document.replace("| `MAX_PATH_LENGTH` |", "| `MAX_OFFERS_PER_AGENT` | `64` | x |\n| `MAX_PATH_LENGTH` |");
        assertThat(drifted(extra)).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.CONSTANT_UNKNOWN
                && v.subject().equals("MAX_OFFERS_PER_AGENT"));
    }

    @Test
    void missingPinnedByFileIsReported() {
        String model = MODEL_DIR + "/CoordinationModelTest.java";
        String copy = document.replaceFirst("`" + java.util.regex.Pattern.quote(model) + "`",
                "`" + MODEL_DIR + "/NoSuchModelTest.java`");
        assertThat(copy).isNotEqualTo(document);
        assertThat(drifted(copy)).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.PINNED_FILE_MISSING
                && v.detail().endsWith("NoSuchModelTest.java"));
    }

    @Test
    void invariantWithoutPinOrStatusIsReported() {
        // every invariant is pinned now: strip one back to its normative text and a vague status
        String section = sectionOf(document, "INV-CR-4");
        String copy = document.replace(section, section.substring(0, section.indexOf("**Implementation.**"))
                + "Status: coming soon\n\n");
        assertThat(copy).isNotEqualTo(document);
        assertThat(drifted(copy)).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.INVARIANT_UNPINNED
                && v.subject().equals("INV-CR-4"));
    }

    @Test
    void removedModelTagIsReported() {
        SpecDocument doc = SpecDocument.parse(document);
        String section = sectionOf(document, "INV-EF-2");
        String copy = document.replace(section, section.replace(" [model]", ""));
        assertThat(copy).isNotEqualTo(document);
        assertThat(doc.invariants().get("INV-EF-2").get(0).modelTag()).isTrue();
        assertThat(drifted(copy)).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.MODEL_ID_UNTAGGED
                && v.subject().equals("INV-EF-2"));
    }

    @Test
    void extraModelTagIsReported() {
        String section = sectionOf(document, "INV-RR-2");
        assertThat(section).doesNotContain("[model]");
        String copy = document.replace(section, section + "**Pinned by.** `" + MODEL_DIR
                + "/CoordinationModelTest.java` [model]\n\n");
        assertThat(copy).isNotEqualTo(document);
        assertThat(drifted(copy)).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.MODEL_TAG_NOT_ASSERTED
                && v.subject().equals("INV-RR-2"));
    }

    @Test
    void modelIdsMustBeDocumentedAndReallyAsserted() {
        Set<String> more = new TreeSet<>(CoordinationModelTest.MODEL_INVARIANTS);
        more.add("INV-ZZ-9");
        SpecDriftGuard.CodeFacts widened = new SpecDriftGuard.CodeFacts(facts.constants(), more,
                facts.modelSource(), facts.fileExists(), facts.classExists());
        List<SpecDriftGuard.Violation> vs = SpecDriftGuard.check(document, widened);
        assertThat(vs).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.MODEL_ID_UNDOCUMENTED && v.subject().equals("INV-ZZ-9"));
        assertThat(vs).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.MODEL_ID_NOT_CALLED && v.subject().equals("INV-ZZ-9"));

        String source = facts.modelSource().replace("Invariant.check(\"INV-LL-4\"", "Invariant.check(\"INV-XX-4\"");
        SpecDriftGuard.CodeFacts unasserted = new SpecDriftGuard.CodeFacts(facts.constants(),
                facts.modelInvariants(), source, facts.fileExists(), facts.classExists());
        List<SpecDriftGuard.Violation> vs2 = SpecDriftGuard.check(document, unasserted);
        assertThat(vs2).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.MODEL_ID_NOT_CALLED && v.subject().equals("INV-LL-4"));
        assertThat(vs2).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.MODEL_SOURCE_UNDECLARED && v.subject().equals("INV-XX-4"));
    }

    @Test
    void droppedSeedInvariantAndUnknownImplementationClassAreReported() {
        String section = sectionOf(document, "INV-MH-4");
        assertThat(drifted(document.replace(section, ""))).anyMatch(v ->
                v.kind() == SpecDriftGuard.Kind.INVARIANT_MISSING && v.subject().equals("INV-MH-4"));
        String copy = document.replace("`hub-core: dev.synapsehub.core.claim.TtlPolicy#effective`",
                "`hub-core: dev.synapsehub.core.claim.TtlClamp#effective`");
        assertThat(copy).isNotEqualTo(document);
        assertThat(drifted(copy)).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.IMPLEMENTATION_UNKNOWN_CLASS);

        // Classes off the spec-tests class path are checked as sources in the module the symbol names.
        assertThat(document).contains("`hub-journal: dev.synapsehub.journal.DurableCoordination#open`");
        String unknown = document.replace("`hub-journal: dev.synapsehub.journal.DurableCoordination#open`",
                "`hub-journal: dev.synapsehub.journal.DurableStartup#open`");
        assertThat(drifted(unknown)).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.IMPLEMENTATION_UNKNOWN_CLASS
                && v.detail().contains("DurableStartup"));
        String wrongModule = document.replace("`hub-journal: dev.synapsehub.journal.DurableCoordination#open`",
                "`hub-net: dev.synapsehub.journal.DurableCoordination#open`");
        assertThat(drifted(wrongModule)).anyMatch(v -> v.kind() == SpecDriftGuard.Kind.IMPLEMENTATION_UNKNOWN_CLASS
                && v.detail().startsWith("hub-net:"));
    }

    /** The text of one invariant section, heading included, up to the next heading. */
    static String sectionOf(String text, String id) {
        int start = text.indexOf("### " + id + " ");
        assertThat(start).as("section " + id).isNotNegative();
        int next = text.length();
        for (String marker : List.of("\n### ", "\n## ")) {
            int i = text.indexOf(marker, start + 4);
            if (i >= 0 && i < next) {
                next = i + 1;
            }
        }
        return text.substring(start, next);
    }
}
