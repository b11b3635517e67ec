package dev.synapsehub.cli;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * picocli's classes in the shaded jar are the build's rewrite of them (hub-cli/src/build/java/
 * ClassFileUpgrade.java) at class-file version 52, all of them, so that the launcher's class-data
 * archive keeps them: the JVM leaves classes older than version 50 out of an archive or AOT cache,
 * and every hub start then read and verified picocli's classes from the jar. The training the
 * launcher runs, on this JVM, archives with no class left out as too old. And none of the hub's
 * own classes concatenates strings through invokedynamic (the build compiles it inline): on Java 17
 * each concatenation shape spun method-handle classes at run time, which the archive does not keep.
 */
@Tag("launcher")
class ShadedJarClassFilesTest {
    private static final Path SHADED = Path.of("target", "synapse-hub.jar");

    @TempDir
    Path dir;

    /** Class name to class-file major version, for the classes under picocli/ in {@code jar}. */
    private static Map<String, Integer> picocliClasses(Path jar) throws IOException {
        Map<String, Integer> versions = new TreeMap<>();
        try (JarFile f = new JarFile(jar.toFile())) {
            for (var e : java.util.Collections.list(f.entries())) {
                if (e.getName().startsWith("picocli/") && e.getName().endsWith(".class")) {
                    try (InputStream in = f.getInputStream(e)) {
                        byte[] head = in.readNBytes(8);
                        versions.put(e.getName(), (head[6] & 0xff) << 8 | head[7] & 0xff);
                    }
                }
            }
        }
        return versions;
    }

    private static Path picocliJar() {
        return Stream.of(System.getProperty("java.class.path").split(File.pathSeparator)).map(Path::of)
                .filter(p -> p.getFileName().toString().matches("picocli-[0-9.]+\\.jar")).findFirst()
                .orElseThrow(() -> new AssertionError("picocli's jar is not on the test class path"));
    }

    @Test
    void everyPicocliClassIsInTheShadedJarAtVersion52() throws Exception {
        Map<String, Integer> original = picocliClasses(picocliJar());
        Map<String, Integer> shaded = picocliClasses(SHADED);
        assertThat(original).as("picocli as released is built for Java 5").isNotEmpty()
                .allSatisfy((name, version) -> assertThat(version).isLessThan(50));
        assertThat(shaded.keySet()).as("no class lost or added").isEqualTo(original.keySet());
        assertThat(shaded).allSatisfy((name, version) -> assertThat(version).as(name).isEqualTo(52));
    }

    @Test
    void noClassOfTheHubConcatenatesStringsThroughInvokedynamic() throws Exception {
        byte[] factory = "java/lang/invoke/StringConcatFactory".getBytes(StandardCharsets.UTF_8);
        java.util.List<String> indy = new java.util.ArrayList<>();
        int ours = 0;
        try (JarFile f = new JarFile(SHADED.toFile())) {
            for (var e : java.util.Collections.list(f.entries())) {
                if (e.getName().startsWith("dev/synapsehub/") && e.getName().endsWith(".class")) {
                    ours++;
                    try (InputStream in = f.getInputStream(e)) {
                        if (contains(in.readAllBytes(), factory)) {
                            indy.add(e.getName());
                        }
                    }
                }
            }
        }
        assertThat(ours).as("the hub's classes are in the jar").isGreaterThan(500);
        assertThat(indy).isEmpty();
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    @Test
    void theLaunchersTrainingArchivesEveryClassItLoadsThatIsNotTooOld() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path log = dir.resolve("training.log");
        Process p = new ProcessBuilder(java.toString(), "-XX:ArchiveClassesAtExit=" + dir.resolve("hub.jsa"),
                "-cp", SHADED.toString(), "dev.synapsehub.cli.ClassDataTraining")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertThat(p.waitFor(3, TimeUnit.MINUTES)).as("the training finished").isTrue();
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(dir.resolve("hub.jsa")).isNotEmptyFile();
        // the JDK's own reflection stubs are generated at version 49; nothing of the hub's jar may be
        assertThat(out.lines().filter(l -> l.contains("Pre JDK 6 class not supported")
                || l.contains("Old class has been linked")).filter(l -> !l.contains("jdk/internal/reflect/Generated")))
                .as(out).isEmpty();
    }
}
