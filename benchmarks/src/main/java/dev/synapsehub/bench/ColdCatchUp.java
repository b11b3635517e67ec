package dev.synapsehub.bench;

import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.PemFiles;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The driver of {@code FederationBench coldcatchup}: a follower started fresh catches up from a
 * peer that has been running for a while, as a real one would. The serving hub runs in its own JVM
 * and serves {@code warmups} catch-ups first, so its code is JIT-compiled before the measured
 * runs; each measured run is a new follower JVM, so the follower's JIT is on the clock, and the
 * serving hub's is not (in {@code catchup} both are in one fresh JVM and both are paid).
 */
final class ColdCatchUp {
    private static final Duration START_BOUND = Duration.ofMinutes(5);
    private static final Duration FOLLOW_BOUND = Duration.ofMinutes(11); // the follower's own is 10

    private ColdCatchUp() {
    }

    static void run(Path dir, int events, int runs, int warmups, String serverJvm, String followerJvm,
                    int serveSeconds, int probeClaimsPerSecond) throws Exception {
        Path journal = FederationBench.peerJournal(dir, events);
        Path portFile = dir.resolve("serve.port");
        Files.deleteIfExists(portFile);
        List<String> serve = command(dir, serverJvm, "serve", "--dir", dir.toString(), "--events", Integer.toString(events),
                "--serve-seconds", Integer.toString(serveSeconds));
        if (probeClaimsPerSecond > 0) { // the probe's claims are journaled: on a copy, so the generated log stays as it is
            Path copy = dir.resolve("serve-probe-" + events + ".db");
            for (String suffix : List.of("-wal", "-shm")) {
                Files.deleteIfExists(Path.of(copy + suffix));
            }
            Files.copy(journal, copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            serve = new ArrayList<>(serve);
            serve.addAll(List.of("--journal", copy.toString()));
        }
        Process server = new ProcessBuilder(serve).redirectErrorStream(true)
                .redirectOutput(dir.resolve("serve.log").toFile()).start(); // stdin stays a pipe: its end stops it
        try {
            String[] portAndEnd = awaitPortFile(portFile, server).split(" ");
            String uri = "wss://127.0.0.1:" + portAndEnd[0] + "/";
            String end = portAndEnd[1];
            System.out.printf(Locale.ROOT, "serving JVM pid %d: %s events at %s; log %s%n", server.pid(), end, uri,
                    dir.resolve("serve.log"));
            List<String> follow = command(dir, followerJvm, "follow", "--dir", dir.toString(), "--uri", uri, "--end", end);
            for (int w = 1; w <= warmups; w++) {
                System.out.printf(Locale.ROOT, "warm-up %d of %d (the serving JVM's JIT)%n", w, warmups);
                follower(follow, dir.resolve("follow-warmup-" + w + ".log"), server);
            }
            List<String> summary = new ArrayList<>();
            Path serverTasks = Path.of("/proc/" + server.pid() + "/task");
            for (int run = 1; run <= runs; run++) {
                System.out.printf(Locale.ROOT, "run %d of %d: a fresh follower JVM%n", run, runs);
                Map<String, Long> serverCpu0 = FederationBench.threadCpu(serverTasks);
                long serverTotal0 = sum(serverCpu0);
                OwnerClaimProbe probe = probeClaimsPerSecond <= 0 ? null : new OwnerClaimProbe(URI.create(uri),
                        ClientTls.pinned(PemFiles.pinOf(dir.resolve("b-server.pem"))), "proj/probe-" + run,
                        probeClaimsPerSecond, (int) FOLLOW_BOUND.toSeconds()).start();
                String result;
                try {
                    result = follower(follow, dir.resolve("follow-" + run + ".log"), server);
                } finally {
                    if (probe != null) {
                        try {
                            String line = probe.stopAndSummarise();
                            System.out.println(line);
                            summary.add("run " + run + ": " + line);
                        } finally {
                            probe.close();
                        }
                    }
                }
                Map<String, Long> serverByThread = FederationBench.cpuByThreadGroup(serverTasks, serverCpu0);
                long serverCpu = sum(FederationBench.threadCpu(serverTasks)) - serverTotal0;
                double n = Double.parseDouble(field(result, "events"));
                System.out.printf(Locale.ROOT, "serving JVM CPU over this run: %.2f s = %.2f us per event; by thread (s):%n",
                        serverCpu / 1e9, serverCpu / 1e3 / n);
                FederationBench.printByThread(serverByThread);
                double seconds = Double.parseDouble(field(result, "seconds"));
                summary.add(String.format(Locale.ROOT, "run %d: %.0f events/s folded; follower CPU %.2f us/event in the "
                                + "catch-up, %.2f us/event for its whole JVM life; serving JVM %.2f us/event; load %.1f",
                        run, n / seconds, Long.parseLong(field(result, "window_cpu_ns")) / 1e3 / n,
                        Long.parseLong(field(result, "jvm_cpu_ns")) / 1e3 / n, serverCpu / 1e3 / n,
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()));
            }
            summary.forEach(System.out::println);
        } finally {
            server.getOutputStream().close(); // its end of input: the serving JVM closes the hub and exits
            if (!server.waitFor(30, TimeUnit.SECONDS)) {
                server.destroy();
                server.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * The java command of this JVM running {@link FederationBench} with {@code jvm} options and {@code args}.
     * sqlite-jdbc unpacks its native library into the temporary directory at every start and removes
     * it only at a normal exit: a child killed on its time bound would leave a copy in /tmp, so the
     * children unpack into {@code dir} (given first: a {@code jvm} option can still move it).
     */
    private static List<String> command(Path dir, String jvm, String... args) {
        List<String> c = new ArrayList<>();
        c.add(ProcessHandle.current().info().command().orElse("java"));
        c.add("-Dorg.sqlite.tmpdir=" + dir.toAbsolutePath());
        c.addAll(Arrays.stream(jvm.trim().split("\\s+")).filter(a -> !a.isEmpty()).toList());
        c.addAll(List.of("-cp", System.getProperty("java.class.path"), FederationBench.class.getName()));
        c.addAll(List.of(args));
        return c;
    }

    private static String awaitPortFile(Path portFile, Process server) throws Exception {
        long deadline = System.nanoTime() + START_BOUND.toNanos();
        while (!Files.exists(portFile)) {
            if (!server.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("the serving JVM did not start listening (alive: " + server.isAlive()
                        + "); see serve.log");
            }
            Thread.sleep(50);
        }
        return Files.readString(portFile).trim();
    }

    /** Runs one follower JVM to its end, prints its output, and returns its RESULT line. */
    private static String follower(List<String> command, Path log, Process server) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(FOLLOW_BOUND.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("the follower did not finish within " + FOLLOW_BOUND + "; see " + log);
        }
        List<String> lines = Files.readAllLines(log);
        lines.stream().filter(l -> !l.startsWith("RESULT") && !l.contains(" INFO ") && !l.startsWith("INFO:")
                && !l.matches("^[A-Z][a-z]{2} \\d+, \\d{4} .*")).forEach(System.out::println);
        if (p.exitValue() != 0 || !server.isAlive()) {
            throw new IllegalStateException("the follower exited " + p.exitValue() + " (serving JVM alive: "
                    + server.isAlive() + "); see " + log);
        }
        return lines.stream().filter(l -> l.startsWith("RESULT ")).findFirst()
                .orElseThrow(() -> new IOException("no RESULT line in " + log));
    }

    private static String field(String result, String name) {
        for (String part : result.split(" ")) {
            if (part.startsWith(name + "=")) {
                return part.substring(name.length() + 1);
            }
        }
        throw new IllegalArgumentException("no " + name + " in " + result);
    }

    private static long sum(Map<String, Long> byThread) {
        return byThread.values().stream().mapToLong(Long::longValue).sum();
    }
}
