package dev.synapsehub.journal;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The faultfs {@code LD_PRELOAD} shim ({@code src/test/native/faultfs.c}) that puts faults
 * between SQLite and the disk of a child process, and the control page through which a test
 * switches them while the child runs. The shim is built once per test JVM with the system's C
 * compiler (gcc, which {@code .ci/run} installs when it is missing).
 */
final class FaultFs {
    private static Path built;

    private final Path control;
    private final MappedByteBuffer page;

    /** A control page at {@code control} (created), all faults off. */
    FaultFs(Path control) throws IOException {
        this.control = control;
        try (RandomAccessFile file = new RandomAccessFile(control.toFile(), "rw")) {
            file.setLength(64);
            page = file.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, 64);
        }
        page.order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The shim, compiled on first use. */
    static synchronized Path library() throws IOException, InterruptedException {
        if (built == null) {
            Path source = Path.of("src/test/native/faultfs.c").toAbsolutePath();
            Path out = Path.of("target/faultfs/faultfs.so").toAbsolutePath();
            Files.createDirectories(out.getParent());
            Process gcc = new ProcessBuilder(List.of("gcc", "-shared", "-fPIC", "-O2", "-o", out.toString(),
                    source.toString(), "-ldl", "-lpthread")).redirectErrorStream(true).start();
            String output = new String(gcc.getInputStream().readAllBytes());
            if (!gcc.waitFor(60, TimeUnit.SECONDS) || gcc.exitValue() != 0) {
                throw new IllegalStateException("could not build the faultfs shim with gcc: " + output);
            }
            built = out;
        }
        return built;
    }

    /** The child's environment: the shim preloaded, acting on paths containing {@code match}. */
    Map<String, String> environment(Path match, boolean powerLoss) throws IOException, InterruptedException {
        Map<String, String> env = new HashMap<>();
        env.put("LD_PRELOAD", library().toString());
        env.put("FAULTFS_CONTROL", control.toString());
        env.put("FAULTFS_MATCH", match.toAbsolutePath().toString());
        if (powerLoss) {
            env.put("FAULTFS_POWERLOSS", "1");
        }
        return env;
    }

    /** Writes to matched files fail with {@code errno} (0: they succeed again). */
    void failWrites(int errno) {
        page.put(0, (byte) errno);
    }

    /** fsync of matched files fails with {@code errno} (0: it succeeds again). */
    void failFsync(int errno) {
        page.put(1, (byte) errno);
    }

    /** The next write to a matched file writes half its bytes, then the child kills itself. */
    void tearNextWrite() {
        page.put(2, (byte) 1);
    }

    /** Every fault off. */
    void clear() {
        page.put(0, (byte) 0);
        page.put(1, (byte) 0);
        page.put(2, (byte) 0);
    }

    /** Faults the shim has injected so far. */
    long faultsInjected() {
        return page.getLong(8);
    }

    /** Successful fsyncs of matched files so far. */
    long fsyncs() {
        return page.getLong(16);
    }

    /** errno values the tests use. */
    static final int EIO = 5;
    static final int ENOSPC = 28;
}
