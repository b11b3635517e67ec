package dev.synapsehub.cli;

import dev.synapsehub.client.tls.TestCertificates;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A hub run as its own operating-system process, exactly as {@code bin/synapse-hub ARGS} runs it
 * (the same main class, {@link Main}, in a fresh JVM) but on the module's test class path, so
 * it works from a clean checkout before the shaded jar exists (surefire runs before
 * {@code package}); or, {@link #viaLauncher}, by the script itself on the shaded jar. Started with {@code --metrics} over native TLS; {@link #awaitHealthy} waits
 * for {@code /health}. {@link #close} always ends the process (a shutdown hook too, should the
 * test JVM itself be stopped).
 */
final class HubProcess implements AutoCloseable {
    /** Generous: a JVM start on a loaded 2-core machine can take many seconds. */
    static final Duration START = Duration.ofSeconds(90);

    private final String name;
    private final int port;
    private final Path log;
    private final List<String> args;
    private final Path launcher;
    private Process process;
    private Thread hook;

    /**
     * @param name a label for the log file and messages
     * @param port the port the hub binds (the caller picked it with {@link #freePort})
     * @param log where the process's stdout and stderr go (appended across restarts), in a directory
     *     the test owns: a hub on the test class path unpacks SQLite's native library beside it
     * @param args the hub's arguments (without {@code --port}, {@code --host}, {@code --metrics})
     */
    HubProcess(String name, int port, Path log, List<String> args) {
        this(name, port, log, args, null);
    }

    private HubProcess(String name, int port, Path log, List<String> args, Path launcher) {
        this.name = name;
        this.port = port;
        this.log = log;
        this.args = List.copyOf(args);
        this.launcher = launcher;
    }

    /**
     * A hub started by the real {@code bin/synapse-hub} script on the shaded jar the reactor built
     * (so only from a test that runs after {@code package}: the "launcher" tests of hub-cli's
     * integration-test phase). Refuses to start without the jar rather than let the script build
     * one from inside a test.
     */
    static HubProcess viaLauncher(String name, int port, Path log, List<String> args) {
        Path root = Path.of("..").toAbsolutePath().normalize();
        Path jar = root.resolve("hub-cli/target/synapse-hub.jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: launcher tests run in hub-cli's integration-test phase, "
                    + "after package (./mvnw -pl hub-cli -am verify)");
        }
        return new HubProcess(name, port, log, args, root.resolve("bin/synapse-hub"));
    }

    /** The hub's port. */
    int port() {
        return port;
    }

    /** The operating-system process id of the running hub. */
    synchronized long pid() {
        return process.pid();
    }

    /** {@code wss://127.0.0.1:<port>}. */
    String url() {
        return "wss://127.0.0.1:" + port;
    }

    /** Starts the process (again, after {@link #kill}); does not wait for it to serve. */
    synchronized HubProcess start() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException(name + " is already running");
        }
        // a small, quickly started JVM: three of them share two cores with the test
        List<String> small = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xmx256m");
        List<String> hubArgs = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", Integer.toString(port), "--metrics"));
        hubArgs.addAll(args);
        List<String> command = new ArrayList<>();
        if (launcher == null) {
            // SQLite's library goes beside the log: a killed hub leaves it in the test's directory, not in /tmp
            command.addAll(ChildJvm.hub(ChildJvm.sqliteDirIn(log.toAbsolutePath().getParent()), small, hubArgs));
        } else {
            // the launcher has the hub load its own unpacked copy (bin/synapse-hub, "SQLite's native library")
            command.add(launcher.toString());
            command.addAll(hubArgs);
        }
        ProcessBuilder pb = new ProcessBuilder(command);
        if (launcher != null) {
            pb.environment().put("JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
            pb.environment().put("SYNAPSE_HUB_JAVA_OPTS", String.join(" ", small));
            // the class-data archive is the launcher's own business (LauncherClassDataTest); a
            // training run here would only add a JVM start per build to this test
            pb.environment().put("SYNAPSE_HUB_CDS", "off");
        }
        pb.redirectErrorStream(true);
        pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        process = pb.start();
        Process started = process;
        hook = new Thread(started::destroyForcibly, "kill-" + name);
        Runtime.getRuntime().addShutdownHook(hook);
        return this;
    }

    /**
     * Waits until {@code GET /health} answers 200 (polling on the condition, never a fixed
     * sleep); fails with the tail of the hub's log when the process exits or the deadline passes.
     */
    void awaitHealthy() throws Exception {
        awaitHealthy(START);
    }

    /** {@link #awaitHealthy()} within {@code within} (more JVMs than cores start slower). */
    void awaitHealthy(Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        String last = "no answer yet";
        while (System.nanoTime() < deadline) {
            Process p;
            synchronized (this) {
                p = process;
            }
            if (!p.isAlive()) {
                throw new AssertionError(name + " exited with " + p.exitValue() + " before serving; log:\n" + logTail());
            }
            try {
                HttpResponse<String> r = get("/health");
                if (r.statusCode() == 200 && r.body().contains("\"status\"")) {
                    return;
                }
                last = r.statusCode() + " " + r.body();
            } catch (IOException e) {
                last = e.toString();
            }
            p.waitFor(100, TimeUnit.MILLISECONDS); // returns at once should it exit
        }
        throw new AssertionError(name + " not healthy within " + within + " (" + last + "); log:\n" + logTail());
    }

    /** The body of {@code GET /metrics}. */
    String metrics() throws Exception {
        HttpResponse<String> r = get("/metrics");
        if (r.statusCode() != 200) {
            throw new AssertionError(name + " /metrics answered " + r.statusCode() + ": " + r.body());
        }
        return r.body();
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        SSLContext ssl;
        try {
            ssl = SSLContext.getInstance("TLS");
            ssl.init(null, new TrustManager[] {TestCertificates.trustAll()}, null);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        HttpClient client = HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).GET().build();
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** SIGKILL, as a crash or a pulled plug: no shutdown path runs. Waits until the process is gone. */
    synchronized void kill() throws InterruptedException {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            throw new AssertionError(name + " survived SIGKILL for 60 s");
        }
        removeHook();
    }

    /**
     * SIGTERM, as a service manager stops a hub, without the SIGKILL that {@link #close} falls back
     * to: waits until the process is gone and returns its exit code.
     */
    synchronized int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(name + " survived SIGTERM for 60 s; log:\n" + logTail());
        }
        removeHook();
        return process.exitValue();
    }

    /**
     * Waits until the hub's log holds {@code fragment} (polling, never a fixed sleep); fails with
     * the tail of the log when the process exits first or {@code within} passes.
     */
    void awaitLog(String fragment, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            if (Files.exists(log) && Files.readString(log, StandardCharsets.UTF_8).contains(fragment)) {
                return;
            }
            Process p;
            synchronized (this) {
                p = process;
            }
            if (!p.isAlive()) {
                throw new AssertionError(name + " exited with " + p.exitValue() + " before logging '" + fragment
                        + "'; log:\n" + logTail());
            }
            p.waitFor(50, TimeUnit.MILLISECONDS); // returns at once should it exit
        }
        throw new AssertionError(name + " did not log '" + fragment + "' within " + within + "; log:\n" + logTail());
    }

    /** The last lines of the hub's log (failure messages). */
    String logTail() {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** Ends the process: SIGTERM, then SIGKILL if it has not exited within 20 s. */
    @Override
    public synchronized void close() throws InterruptedException {
        if (process == null) {
            return;
        }
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(60, TimeUnit.SECONDS);
            }
        }
        removeHook();
        process = null;
    }

    private void removeHook() {
        if (hook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the JVM is already exiting: the hook runs anyway
            }
            hook = null;
        }
    }

    /**
     * A port that 127.0.0.1 can bind now, chosen below the kernel's ephemeral range (32768 and
     * up on Linux) so the test's own outgoing connections cannot take it before the hub binds it.
     */
    static int freePort() throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            int candidate = dev.synapsehub.mesh.LoopbackPorts.candidate();
            try (ServerSocket s = new ServerSocket(candidate, 1, InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IOException("no free port in 20000..32000 after 200 attempts");
    }
}
