package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The class-data-sharing part of {@code bin/synapse-hub}, run as the shell script it is, on a copy
 * of the repository layout with a stand-in for {@code java} (so no jar needs to be built): hubs
 * started together train the archive once, and a failed training is not retried on every start.
 * Also its other start-up cache: SQLite's native library unpacked once and named to sqlite-jdbc.
 */
class LauncherClassDataTest {
    /** Stands in for java: a training (ArchiveClassesAtExit) is counted, takes a moment and writes the archive. */
    private static final String FAKE_JAVA = """
            #!/usr/bin/env bash
            for a in "$@"; do
              case "$a" in
                -XX:ArchiveClassesAtExit=*)
                  echo train >>"$FAKE_COUNT"
                  echo "$*" >"$FAKE_COUNT.args"
                  # a training that goes on until it is stopped: its PID, then this process sleeps
                  [ "${FAKE_TRAINING:-ok}" != endless ] || { echo $$ >"$FAKE_TRAINER"; exec sleep 120; }
                  sleep 2
                  [ "${FAKE_TRAINING:-ok}" = ok ] || exit 1
                  echo archive >"${a#*=}"
                  exit 0;;
              esac
            done
            echo "hub $*"
            """;

    @TempDir
    Path root;

    private Path setUp() throws IOException {
        Files.createDirectories(root.resolve("bin"));
        Path launcher = root.resolve("bin/synapse-hub");
        Files.copy(Path.of("..", "bin", "synapse-hub"), launcher);
        Files.createDirectories(root.resolve("hub-cli/target"));
        Files.writeString(root.resolve("hub-cli/target/synapse-hub.jar"), "not a real jar");
        Path java = root.resolve("fake-java");
        Files.writeString(java, FAKE_JAVA);
        for (Path p : List.of(launcher, java)) {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return launcher;
    }

    private Process launch(Path launcher, String training) throws IOException {
        return launch(launcher, training, "on");
    }

    private Process launch(Path launcher, String training, String nativeCache) throws IOException {
        return launch(launcher, training, nativeCache, System.getenv("PATH"));
    }

    private Process launch(Path launcher, String training, String nativeCache, String path) throws IOException {
        return builder(launcher, training, nativeCache, path).start();
    }

    private ProcessBuilder builder(Path launcher, String training, String nativeCache, String path) {
        ProcessBuilder pb = new ProcessBuilder(launcher.toString(), "--version");
        pb.environment().put("PATH", path);
        pb.environment().put("SYNAPSE_HUB_NATIVE_CACHE", nativeCache);
        pb.environment().put("JAVA", root.resolve("fake-java").toString());
        pb.environment().put("FAKE_COUNT", root.resolve("trainings").toString());
        pb.environment().put("FAKE_TRAINING", training);
        pb.environment().put("FAKE_TRAINER", root.resolve("trainer.pid").toString());
        pb.environment().put("SYNAPSE_HUB_CDS_DIR", root.resolve("cds").toString());
        pb.environment().remove("SYNAPSE_HUB_CDS");
        pb.environment().remove("SYNAPSE_HUB_JAVA_OPTS");
        pb.redirectErrorStream(true);
        return pb;
    }

    private static String finish(Process p) throws Exception {
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the launcher finished").isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    private long trainings() throws IOException {
        Path count = root.resolve("trainings");
        return Files.exists(count) ? Files.readAllLines(count).size() : 0;
    }

    @Test
    void hubsStartedTogetherTrainTheArchiveOnceAndEveryOneStarts() throws Exception {
        Path launcher = setUp();
        List<Process> started = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            started.add(launch(launcher, "ok"));
        }
        List<String> outputs = new ArrayList<>();
        for (Process p : started) {
            outputs.add(finish(p));
        }
        assertThat(trainings()).isEqualTo(1);
        assertThat(outputs).allSatisfy(out -> assertThat(out).contains("hub ").contains("--version"));
        try (var files = Files.list(root.resolve("cds"))) {
            assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".jsa")).toList()).hasSize(1);
        }
        // a later start uses the archive and trains nothing
        String later = finish(launch(launcher, "ok"));
        assertThat(later).contains("-XX:SharedArchiveFile=");
        assertThat(trainings()).isEqualTo(1);
    }

    @Test
    void aFailedTrainingStartsTheHubWithoutAnArchiveAndIsNotRetried() throws Exception {
        Path launcher = setUp();
        String first = finish(launch(launcher, "fail"));
        assertThat(first).contains("training failed").contains("hub ").doesNotContain("SharedArchiveFile");
        String second = finish(launch(launcher, "fail"));
        assertThat(second).contains("hub ").doesNotContain("making the class-data archive");
        assertThat(trainings()).isEqualTo(1);
    }

    /**
     * A SIGTERM to the launcher while it trains (a service manager or a script stopping the hub it
     * started: the PID it holds is the launcher's until the exec) stops the training too and starts
     * no hub. Untrapped, it ended the launcher alone and the training JVM ran on as an orphan.
     */
    @Test
    void aTermDuringTheTrainingStopsTheTrainingAndStartsNoHub() throws Exception {
        Path launcher = setUp();
        Path output = root.resolve("launcher.out"); // a file: destroy() closes the process's pipes
        Process p = builder(launcher, "endless", "on", System.getenv("PATH")).redirectOutput(output.toFile()).start();
        Path pidFile = root.resolve("trainer.pid");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(pidFile) || !Files.readString(pidFile).endsWith("\n")) {
            assertThat(System.nanoTime()).as("the training started").isLessThan(deadline);
            assertThat(p.isAlive()).as("the launcher is training").isTrue();
            Thread.sleep(20);
        }
        ProcessHandle trainer = ProcessHandle.of(Long.parseLong(Files.readString(pidFile).trim())).orElseThrow();
        try {
            p.destroy(); // SIGTERM
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("the launcher stopped").isTrue();
            assertThat(p.exitValue()).as("ended by the TERM").isEqualTo(143);
            assertThat(trainer.onExit().completeOnTimeout(trainer, 30, TimeUnit.SECONDS).join().isAlive())
                    .as("the training JVM stopped with the launcher").isFalse();
            String out = Files.readString(output);
            assertThat(out).contains("making the class-data archive").doesNotContain("hub ");
            try (var files = Files.list(root.resolve("cds"))) {
                assertThat(files.map(f -> f.getFileName().toString()).filter(n -> n.contains(".jsa")).toList())
                        .as("no archive, no partial archive and no .failed mark: the next start trains").isEmpty();
            }
        } finally {
            trainer.destroyForcibly();
        }
        String next = finish(launch(launcher, "ok"));
        assertThat(next).contains("-XX:SharedArchiveFile=");
        assertThat(trainings()).isEqualTo(2);
    }

    /** A jar holding a stand-in for SQLite's native library under every folder the launcher may ask for. */
    private byte[] jarWithNativeLibrary() throws IOException {
        byte[] library = "a native library, byte for byte".getBytes(StandardCharsets.UTF_8);
        try (var out = new java.util.zip.ZipOutputStream(Files.newOutputStream(root.resolve("hub-cli/target/synapse-hub.jar")))) {
            for (String folder : List.of("Linux/x86_64", "Linux/aarch64", "Linux-Musl/x86_64", "Linux-Musl/aarch64")) {
                out.putNextEntry(new java.util.zip.ZipEntry("org/sqlite/native/" + folder + "/libsqlitejdbc.so"));
                out.write(library);
                out.closeEntry();
            }
            for (String folder : List.of("Mac/x86_64", "Mac/aarch64")) {
                out.putNextEntry(new java.util.zip.ZipEntry("org/sqlite/native/" + folder + "/libsqlitejdbc.dylib"));
                out.write(library);
                out.closeEntry();
            }
        }
        return library;
    }

    /** The cache of the native library needs unzip; without it the launcher starts the hub all the same. */
    private static boolean unzipOnPath() {
        return onPath().anyMatch(d -> Files.isExecutable(d.resolve("unzip")));
    }

    private static java.util.stream.Stream<Path> onPath() {
        return java.util.Arrays.stream(System.getenv("PATH").split(java.io.File.pathSeparator))
                .filter(d -> !d.isEmpty()).map(Path::of);
    }

    /** A PATH of links to every command on this PATH but {@code hidden}. */
    private String pathWithout(String hidden) throws IOException {
        Path bin = Files.createDirectories(root.resolve("path-without-" + hidden));
        for (Path d : onPath().filter(Files::isDirectory).toList()) {
            try (var commands = Files.list(d)) {
                for (Path c : commands.toList()) {
                    Path link = bin.resolve(c.getFileName().toString());
                    if (!c.getFileName().toString().equals(hidden) && !Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                        Files.createSymbolicLink(link, c);
                    }
                }
            }
        }
        return bin.toString();
    }

    /** A PATH whose {@code stat} fails as GNU options do on BSD and macOS. */
    private String pathWithBsdLikeStat() throws IOException {
        Path bin = Files.createDirectories(root.resolve("bsd-stat"));
        Path stat = bin.resolve("stat");
        Files.writeString(stat, "#!/bin/sh\necho \"stat: illegal option -- c\" >&2\nexit 1\n");
        Files.setPosixFilePermissions(stat, PosixFilePermissions.fromString("rwxr-xr-x"));
        return bin + java.io.File.pathSeparator + System.getenv("PATH");
    }

    private static Path unpackedLibrary(String out) {
        java.util.regex.Matcher path = java.util.regex.Pattern.compile("-Dorg\\.sqlite\\.lib\\.path=(\\S+)").matcher(out);
        java.util.regex.Matcher name = java.util.regex.Pattern.compile("-Dorg\\.sqlite\\.lib\\.name=(\\S+)").matcher(out);
        assertThat(path.find()).as(out).isTrue();
        assertThat(name.find()).as(out).isTrue();
        return Path.of(path.group(1)).resolve(name.group(1));
    }

    /**
     * The start-up heap settings come before the user's options (the JVM takes the last of a flag),
     * are left out when the user's options set a heap or young-generation size, and
     * SYNAPSE_HUB_START_HEAP=off leaves them out.
     */
    @Test
    void theStartHeapSettingsComeBeforeTheUsersOptionsAndCanBeTurnedOff() throws Exception {
        Path launcher = setUp();
        String on = finish(launchWith(launcher, "on", "-Xmx128m"));
        assertThat(on).contains("hub ");
        assertThat(on).containsSubsequence("-XX:InitialRAMPercentage=5", "-XX:+UnlockExperimentalVMOptions",
                "-XX:G1NewSizePercent=50", "-XX:MetaspaceSize=128m", "-Xmx128m", "--version");
        // an -Xms of the user's: the heap flags are left out rather than merely overridden
        String xms = finish(launchWith(launcher, "on", "-Xms64m -Xmx128m"));
        assertThat(xms).contains("hub ").contains("-Xms64m -Xmx128m").doesNotContain("G1NewSizePercent")
                .doesNotContain("InitialRAMPercentage").contains("-XX:MetaspaceSize=128m");

        String off = finish(launchWith(launcher, "off", "-Xmx128m"));
        assertThat(off).contains("hub ").contains("-Xmx128m").doesNotContain("G1NewSizePercent")
                .doesNotContain("InitialRAMPercentage").doesNotContain("MetaspaceSize");
    }

    /**
     * Every way of sizing the young generation (-Xmn, NewSize, MaxNewSize, NewRatio) counts as the
     * user's own sizing: the launcher's G1NewSizePercent=50 would otherwise override or contradict it.
     */
    @Test
    void aUsersYoungGenerationSizeOfAnyFormLeavesTheStartHeapFlagsOut() throws Exception {
        Path launcher = setUp();
        for (String young : List.of("-Xmn48m", "-XX:NewSize=32m", "-XX:MaxNewSize=64m", "-XX:NewRatio=3")) {
            String out = finish(launchWith(launcher, "on", young + " -Xmx128m"));
            assertThat(out).as(young).contains("hub ").contains(young + " -Xmx128m")
                    .doesNotContain("G1NewSizePercent").doesNotContain("InitialRAMPercentage")
                    .contains("-XX:MetaspaceSize=128m");
        }
    }

    /**
     * Stands in for java by running the real JVM with the launcher's options and -version instead of
     * the jar: the JVM checks its flags at boot, so a combination it refuses fails here as it would
     * for the hub.
     */
    private static final String REAL_JVM = """
            #!/usr/bin/env bash
            args=()
            for a in "$@"; do
              [ "$a" = -jar ] && break
              args+=("$a")
            done
            echo "jvm options: ${args[*]:-}"
            exec "$REAL_JAVA" ${args[@]+"${args[@]}"} -XX:+UseG1GC -version
            """;

    /**
     * A user's young-generation limit below the launcher's G1NewSizePercent=50 made the JVM refuse
     * to start ("must be greater than or equal to G1NewSizePercent"); given in SYNAPSE_HUB_JAVA_OPTS,
     * JAVA_TOOL_OPTIONS or JDK_JAVA_OPTIONS (the last two are read before the command line, so the
     * launcher's flags would win over them), the launcher now leaves its heap flags out and the JVM starts.
     */
    @Test
    void aUsersYoungGenerationLimitBelowHalfTheHeapStillStartsTheJvm() throws Exception {
        Path launcher = setUp();
        Path jvm = root.resolve("real-jvm");
        Files.writeString(jvm, REAL_JVM);
        Files.setPosixFilePermissions(jvm, PosixFilePermissions.fromString("rwxr-xr-x"));
        String young = "-XX:+UnlockExperimentalVMOptions -XX:G1MaxNewSizePercent=40";
        for (String variable : List.of("SYNAPSE_HUB_JAVA_OPTS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS")) {
            ProcessBuilder pb = new ProcessBuilder(launcher.toString(), "--version");
            pb.environment().put("SYNAPSE_HUB_NATIVE_CACHE", "off");
            pb.environment().put("SYNAPSE_HUB_CDS", "off");
            pb.environment().remove("SYNAPSE_HUB_START_HEAP");
            for (String v : List.of("SYNAPSE_HUB_JAVA_OPTS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS")) {
                pb.environment().remove(v);
            }
            pb.environment().put(variable, young);
            pb.environment().put("JAVA", jvm.toString());
            pb.environment().put("REAL_JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
            pb.redirectErrorStream(true);
            Process p = pb.start();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(variable).isTrue();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as(variable + ": " + out).isZero();
            assertThat(out).as(variable).contains("jvm options:").doesNotContain("G1NewSizePercent=50")
                    .doesNotContain("InitialRAMPercentage").contains("-XX:MetaspaceSize=128m");
        }
        // without a young-generation setting of the user's the start heap flags are still given
        String plain = finish(launchWith(launcher, "on", "-Xmx128m"));
        assertThat(plain).contains("-XX:G1NewSizePercent=50").contains("-XX:InitialRAMPercentage=5");
    }

    private Process launchWith(Path launcher, String startHeap, String javaOpts) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(launcher.toString(), "--version");
        pb.environment().put("SYNAPSE_HUB_NATIVE_CACHE", "off");
        pb.environment().put("SYNAPSE_HUB_CDS", "off");
        pb.environment().put("SYNAPSE_HUB_START_HEAP", startHeap);
        pb.environment().put("SYNAPSE_HUB_JAVA_OPTS", javaOpts);
        pb.environment().put("JAVA", root.resolve("fake-java").toString());
        pb.redirectErrorStream(true);
        return pb.start();
    }

    @Test
    void withoutUnzipTheHubStartsWithoutTheSetting() throws Exception {
        Path launcher = setUp();
        jarWithNativeLibrary();
        String out = finish(launch(launcher, "fail", "on", pathWithout("unzip")));
        assertThat(out).contains("hub ").contains("--version").doesNotContain("org.sqlite.lib");
    }

    @Test
    void withoutGnuStatTheHubStartsAndTheLibraryIsStillCached() throws Exception {
        assumeTrue(unzipOnPath(), "the native-library cache needs unzip");
        Path launcher = setUp();
        byte[] library = jarWithNativeLibrary();
        String out = finish(launch(launcher, "fail", "on", pathWithBsdLikeStat()));
        assertThat(out).contains("hub ").contains("--version");
        assertThat(Files.readAllBytes(unpackedLibrary(out))).isEqualTo(library);
    }

    @Test
    void theLibraryIsOnlyLoadedFromADirectoryNobodyElseCanWriteIn() throws Exception {
        assumeTrue(unzipOnPath(), "the native-library cache needs unzip");
        Path launcher = setUp();
        jarWithNativeLibrary();
        Path unpacked = unpackedLibrary(finish(launch(launcher, "fail")));
        Path libdir = unpacked.getParent();
        assertThat(Files.getPosixFilePermissions(libdir)).isEqualTo(PosixFilePermissions.fromString("rwx------"));

        // another user of a shared cache directory could have written this one
        Files.setPosixFilePermissions(libdir, PosixFilePermissions.fromString("rwxrwxrwx"));
        Files.writeString(unpacked, "a planted library");
        assertThat(finish(launch(launcher, "fail"))).contains("hub ").doesNotContain("org.sqlite.lib");
        assertThat(Files.readString(unpacked)).as("left alone").isEqualTo("a planted library");
    }

    @Test
    void sqlitesNativeLibraryIsUnpackedOnceAndNamedToSqliteJdbc() throws Exception {
        assumeTrue(unzipOnPath(), "the native-library cache needs unzip");
        Path launcher = setUp();
        byte[] library = jarWithNativeLibrary();
        Path unpacked = unpackedLibrary(finish(launch(launcher, "fail")));
        assertThat(unpacked).startsWith(root.resolve("cds"));
        assertThat(Files.readAllBytes(unpacked)).isEqualTo(library);
        long modified = Files.getLastModifiedTime(unpacked).toMillis();

        Thread.sleep(1_100);
        String again = finish(launch(launcher, "fail"));
        assertThat(again).contains("-Dorg.sqlite.lib.path=" + unpacked.getParent());
        assertThat(Files.getLastModifiedTime(unpacked).toMillis()).as("not unpacked again").isEqualTo(modified);

        assertThat(finish(launch(launcher, "fail", "off"))).contains("hub ").doesNotContain("org.sqlite.lib");
    }

    /**
     * The training JVM starts a hub on a scratch journal, so it loads SQLite too: given the same
     * unpacked library as the hub, a training killed outright leaves no copy in the temporary
     * directory (sqlite-jdbc's own copy goes only at a normal exit).
     */
    @Test
    void theTrainingLoadsSqlitesLibraryFromTheCacheAsTheHubDoes() throws Exception {
        assumeTrue(unzipOnPath(), "the native-library cache needs unzip");
        Path launcher = setUp();
        jarWithNativeLibrary();
        Path unpacked = unpackedLibrary(finish(launch(launcher, "ok")));
        assertThat(trainings()).isEqualTo(1);
        String training = Files.readString(root.resolve("trainings.args"));
        assertThat(training).contains("dev.synapsehub.cli.ClassDataTraining")
                .contains("-Dorg.sqlite.lib.path=" + unpacked.getParent())
                .contains("-Dorg.sqlite.lib.name=" + unpacked.getFileName());
    }

    @Test
    void aJarWithoutTheLibraryStartsTheHubWithoutTheSetting() throws Exception {
        Path launcher = setUp(); // "not a real jar"
        assertThat(finish(launch(launcher, "fail"))).contains("hub ").doesNotContain("org.sqlite.lib");
    }

    /**
     * Stands in for a JDK's java (placed in a JDK layout with a release file): a training, either
     * kind, is counted and writes the file it names; with REAL_JAVA set, a hub start runs that real
     * JVM with the launcher's options and -version instead of the jar.
     */
    private static final String FAKE_JDK_JAVA = """
            #!/usr/bin/env bash
            for a in "$@"; do
              case "$a" in
                -XX:ArchiveClassesAtExit=*|-XX:AOTCacheOutput=*)
                  echo "train ${a%%=*}" >>"$FAKE_COUNT"
                  echo archive >"${a#*=}"
                  exit 0;;
              esac
            done
            if [ -n "${REAL_JAVA:-}" ]; then
              args=()
              for a in "$@"; do
                [ "$a" = -jar ] && break
                args+=("$a")
              done
              echo "jvm options: ${args[*]:-}"
              exec "$REAL_JAVA" ${args[@]+"${args[@]}"} -version
            fi
            echo "hub $*"
            """;

    /** A JDK layout in {@code name}: bin/java (the stand-in) and a release file of {@code version}. */
    private Path fakeJdk(String name, String version) throws IOException {
        Path java = root.resolve(name).resolve("bin/java");
        Files.createDirectories(java.getParent());
        Files.writeString(java, FAKE_JDK_JAVA);
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(root.resolve(name).resolve("release"), "IMPLEMENTOR=\"test\"\nJAVA_VERSION=\"" + version + "\"\n");
        return java;
    }

    private Process launchOn(Path launcher, Path java, String realJava) throws IOException {
        ProcessBuilder pb = builder(launcher, "ok", "off", System.getenv("PATH"));
        pb.environment().put("JAVA", java.toString());
        if (realJava != null) {
            pb.environment().put("REAL_JAVA", realJava);
        }
        return pb.start();
    }

    private List<String> cacheFiles() throws IOException {
        try (var files = Files.list(root.resolve("cds"))) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("synapse-hub-")).sorted().toList();
        }
    }

    /** A JDK 25 on this machine, or null (the test then checks the Java 17 path only). */
    private static String realJdk25() {
        String home = System.getenv("JAVA_25_HOME");
        if (home != null && Files.isExecutable(Path.of(home, "bin", "java"))) {
            return Path.of(home, "bin", "java").toString();
        }
        try (var jvms = Files.list(Path.of("/usr/lib/jvm"))) {
            return jvms.filter(d -> d.getFileName().toString().matches(".*-25(\\.[0-9.]+)?-.*|.*-25"))
                    .map(d -> d.resolve("bin/java")).filter(Files::isExecutable).map(Path::toString)
                    .findFirst().orElse(null);
        } catch (IOException e) {
            return null;
        }
    }

    @Test
    void onJava17TheLauncherKeepsTheClassDataArchive() throws Exception {
        Path launcher = setUp();
        Path java = fakeJdk("jdk17", "17.0.15");
        finish(launchOn(launcher, java, null));
        String later = finish(launchOn(launcher, java, null));
        assertThat(later).contains("-XX:SharedArchiveFile=").contains(".jsa").doesNotContain("AOTCache");
        assertThat(Files.readAllLines(root.resolve("trainings"))).containsExactly("train -XX:ArchiveClassesAtExit");
        assertThat(cacheFiles()).singleElement().satisfies(n -> assertThat(n).endsWith(".jsa"));
    }

    /**
     * On Java 25 the launcher trains an AOT cache (-XX:AOTCacheOutput) once and starts every later
     * hub with -XX:AOTCache; a cache the real JDK 25 cannot use (here: not a cache at all) is
     * ignored without a word and the JVM starts. Without a JDK 25 on the machine only the first
     * part runs (the stand-in); this machine has one under /usr/lib/jvm.
     */
    @Test
    void onJava25TheLauncherTrainsAnAotCacheAndARealJvmIgnoresOneItCannotUse() throws Exception {
        Path launcher = setUp();
        Path java = fakeJdk("jdk25", "25.0.3");
        finish(launchOn(launcher, java, null));
        String later = finish(launchOn(launcher, java, null));
        assertThat(later).contains("-XX:AOTCache=").contains(".aot").doesNotContain("SharedArchiveFile");
        assertThat(Files.readAllLines(root.resolve("trainings"))).containsExactly("train -XX:AOTCacheOutput");
        assertThat(cacheFiles()).singleElement().satisfies(n -> assertThat(n).endsWith(".aot"));

        String real = realJdk25();
        if (Files.isDirectory(Path.of("/usr/lib/jvm/temurin-25-jdk-amd64"))) {
            assertThat(real).as("this machine's JDK 25 is found").isNotNull();
        }
        if (real != null) {
            // the same launcher and cache key (the stand-in is unchanged), the real JVM behind it
            String started = finish(launchOn(launcher, java, real));
            assertThat(started).contains("-XX:AOTCache=").contains("version \"25")
                    .doesNotContain("[aot]").doesNotContain("[cds]").doesNotContain("rror");
            assertThat(Files.readAllLines(root.resolve("trainings"))).hasSize(1);
        }
    }

    @Test
    void theAotCacheCanBeTurnedOffForTheArchive() throws Exception {
        Path launcher = setUp();
        Path java = fakeJdk("jdk25", "25.0.3");
        ProcessBuilder pb = builder(launcher, "ok", "off", System.getenv("PATH"));
        pb.environment().put("JAVA", java.toString());
        pb.environment().put("SYNAPSE_HUB_AOT", "off");
        finish(pb.start());
        assertThat(finish(pb.start())).contains("-XX:SharedArchiveFile=").doesNotContain("AOTCache");
    }
}
