package dev.synapsehub.journal;

import dev.synapsehub.core.journal.JournalException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link WriterLock} between processes at the same instant: a probe (a journal tool) that is
 * testing the lock while a writer takes it never makes the writer believe another hub holds the
 * journal, and the writer, once it holds it, is seen by probes and refuses every other writer.
 * The other process is a real one ({@link Tool}), paused inside its probe by a hook, so the
 * overlap is certain, not a matter of timing.
 */
class WriterLockRaceTest {
    @TempDir
    Path dir;
    private final List<Process> children = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (Process p : children) {
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** Another process on {@code journal}: {@code probe-and-hold} or {@code acquire}; its answers line by line. */
    private record Child(Process process, BufferedReader out, PrintWriter in) {
        String line() throws Exception {
            String l = out.readLine(); // the child's own bound (below) ends it, so this never waits for ever
            assertThat(l).as("the child's answer").isNotNull();
            return l;
        }
    }

    private Child start(String what, Path journal) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(ChildJvm.command(ChildJvm.sqliteDirIn(dir), List.of("-Xmx32m"), Tool.class,
                what, journal.toString()));
        pb.redirectError(dir.resolve(what + ".err").toFile());
        Process p = pb.start();
        children.add(p);
        return new Child(p, new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)),
                new PrintWriter(p.getOutputStream(), true, StandardCharsets.UTF_8));
    }

    @Test
    void aWriterTakesTheLockWhileAnotherProcessIsProbingItAndThenExcludesEveryOtherWriter() throws Exception {
        Path journal = dir.resolve("hub.db");
        WriterLock.acquire(journal).release(); // the lock file exists, as after any hub's run
        Child tool = start("probe-and-hold", journal);
        assertThat(tool.line()).isEqualTo("TESTING"); // its test lock is held now, until we say go

        int[] retries = {0};
        WriterLock held = WriterLock.acquire(journal, attempt -> {
            retries[0] = attempt;
            if (attempt == 1) {
                tool.in().println("go"); // the probe's test ends; the writer's next try finds the mark free
            }
            Thread.sleep(2);
        });
        try {
            assertThat(retries[0]).as("the writer met the probe's test lock and waited it out").isPositive();
            assertThat(tool.line()).as("the probe ran before any writer held the lock").isEqualTo("NONE");

            Child other = start("acquire", journal);
            assertThat(other.line()).as("a second writer at the same time").startsWith("REFUSED ")
                    .contains("is open in another hub");
            Child looker = start("probe", journal);
            assertThat(looker.line()).isEqualTo("HUB");
        } finally {
            held.release();
        }
        Child after = start("acquire", journal);
        assertThat(after.line()).isEqualTo("ACQUIRED");
    }

    /**
     * An OS lock belongs to the process, and closing any descriptor of the file drops it: a probe
     * or a refused second writer in the holding process (a tool run in-process, a second journal
     * open of the same file) must not open and close one of its own, or another process could
     * take the lock beside the writer.
     */
    @Test
    void aProbeOrASecondWriterInTheHoldingProcessLeavesTheLockHeld() throws Exception {
        Path journal = dir.resolve("hub.db");
        WriterLock held = WriterLock.acquire(journal);
        try {
            assertThat(WriterLock.probe(journal)).isEqualTo(WriterLock.Holder.HUB);
            assertThat(WriterLock.probe(dir.resolve(".").resolve("hub.db"))).as("by another path")
                    .isEqualTo(WriterLock.Holder.HUB);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> WriterLock.acquire(journal))
                    .isInstanceOf(JournalRefusedException.class).hasMessageContaining("is open in another hub");
            assertThat(start("acquire", journal).line()).as("another process, after both").startsWith("REFUSED ")
                    .contains("is open in another hub");
        } finally {
            held.release();
        }
        held.release(); // twice: nothing more
        assertThat(start("acquire", journal).line()).isEqualTo("ACQUIRED");
    }

    @Test
    void aWriterOfTheEarlierWholeFileLayoutAndThisOneExcludeEachOther() throws Exception {
        Path journal = dir.resolve("hub.db");
        Path file = WriterLock.lockFile(journal);
        Files.createFile(file);
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
                java.nio.file.StandardOpenOption.WRITE)) {
            java.nio.channels.FileLock old = ch.lock(); // an earlier hub: the whole file, exclusive
            try {
                Child writer = start("acquire", journal);
                assertThat(writer.line()).startsWith("REFUSED ").contains("is open in another hub");
                assertThat(start("probe", journal).line()).isEqualTo("HUB");
            } finally {
                old.release();
            }
        }
        WriterLock held = WriterLock.acquire(journal);
        try {
            Child earlierProbe = start("probe-whole-file", journal);
            assertThat(earlierProbe.line()).as("an earlier tool's whole-file test sees this writer").isEqualTo("HUB");
        } finally {
            held.release();
        }
    }

    /** The other process: {@code args[0]} what to do on journal {@code args[1]}; prints its answer. */
    public static final class Tool {
        public static void main(String[] args) throws Exception {
            // a test that failed without telling this process to go on must not leave it behind
            Thread watchdog = new Thread(() -> {
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException ignored) {
                    return;
                }
                Runtime.getRuntime().halt(3);
            });
            watchdog.setDaemon(true);
            watchdog.start();
            Path journal = Path.of(args[1]);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            switch (args[0]) {
                case "probe" -> System.out.println(WriterLock.probe(journal));
                case "probe-and-hold" -> System.out.println(WriterLock.probe(journal, () -> {
                    System.out.println("TESTING");
                    System.out.flush();
                    try {
                        in.readLine();
                    } catch (java.io.IOException e) {
                        throw new IllegalStateException(e);
                    }
                }));
                case "probe-whole-file" -> {
                    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(
                            WriterLock.lockFile(journal), java.nio.file.StandardOpenOption.READ)) {
                        java.nio.channels.FileLock shared = ch.tryLock(0, Long.MAX_VALUE, true);
                        System.out.println(shared == null ? "HUB" : "NONE");
                    }
                }
                case "acquire" -> {
                    try {
                        WriterLock.acquire(journal).release();
                        System.out.println("ACQUIRED");
                    } catch (JournalException e) {
                        System.out.println("REFUSED " + e.getMessage());
                    }
                }
                default -> throw new IllegalArgumentException(args[0]);
            }
            System.out.flush();
        }
    }
}
