package dev.synapsehub.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A short run of what a restart loads, for the class-data-sharing archive that
 * {@code bin/synapse-hub} makes on first use ({@code -XX:ArchiveClassesAtExit}): a durable hub
 * on a scratch journal and a loopback port answers {@code /health}, takes a claim from the
 * {@code claim} subcommand, stops (writing its shutdown snapshot), starts again from that
 * snapshot and answers {@code /health} once more. The JVM then writes every class it loaded;
 * the next start maps them instead of reading, verifying and linking them from the jar.
 *
 * <p>It changes nothing outside its scratch directory and exits non-zero if any step fails,
 * so the launcher keeps no archive from a run that did not load the real path.
 */
public final class ClassDataTraining {
    private ClassDataTraining() {
    }

    /** Runs the training; exits 0 when every step worked. */
    public static void main(String[] args) {
        int code;
        try {
            run();
            code = ExitCodes.OK;
        } catch (Exception | Error e) {
            System.err.println("synapse-hub: class-data training failed: " + e);
            e.printStackTrace();
            code = ExitCodes.SOFTWARE;
        }
        System.exit(code);
    }

    static void run() throws Exception {
        Path dir = Files.createTempDirectory("synapse-hub-cds");
        try {
            String db = dir.resolve("training.db").toString();
            try (LoopbackStart hub = LoopbackStart.of("--port", "0", "--db", db, "--metrics")) {
                health(hub.daemon.port());
                int code = Main.run(new String[] {"claim", "cds-training", "--url",
                    "ws://127.0.0.1:" + hub.daemon.port(), "--worktree", "wt", "--path", "src"});
                if (code != ExitCodes.OK) {
                    throw new IllegalStateException("the training claim exited " + code);
                }
            } // the clean stop writes the shutdown snapshot the second start loads
            try (dev.synapsehub.journal.SqliteJournal journal = dev.synapsehub.journal.SqliteJournal.open(Path.of(db))) {
                if (journal.snapshots().list().isEmpty()) {
                    throw new IllegalStateException("the stop wrote no snapshot, so the restart would not load one");
                }
            }
            try (LoopbackStart hub = LoopbackStart.of("--port", "0", "--db", db, "--metrics")) {
                health(hub.daemon.port());
            }
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** One GET /health over a plain socket (the launcher's health checks use no Java HTTP client). */
    private static void health(int port) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String reply = new String(in.readNBytes(64 * 1024), StandardCharsets.UTF_8);
            if (!reply.startsWith("HTTP/1.1 200")) {
                throw new IllegalStateException("/health answered: " + reply.lines().findFirst().orElse("nothing"));
            }
        }
    }

    /** A hub started as {@code synapse-hub ARGS} would start it, closed like a SIGTERM closes it. */
    private record LoopbackStart(HubDaemon daemon) implements AutoCloseable {
        static LoopbackStart of(String... args) throws Exception {
            picocli.CommandLine line = SynapseHubCommand.commandLine(args);
            line.parseArgs(args);
            SynapseHubCommand command = line.getCommand();
            return new LoopbackStart(HubDaemon.start(command.serve, command.federation));
        }

        @Override
        public void close() throws Exception {
            daemon.close();
        }
    }
}
