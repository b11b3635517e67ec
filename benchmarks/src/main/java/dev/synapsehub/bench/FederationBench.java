package dev.synapsehub.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.PemFiles;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorSettings;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.federation.FederationExtension;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.PollBudget;
import dev.synapsehub.federation.follow.SqliteMirror;
import dev.synapsehub.federation.follow.WatchPeer;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.route.ClaimRoute;
import dev.synapsehub.federation.route.ForwardSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.federation.trust.FederationStore;
import dev.synapsehub.federation.trust.PeeringRecord;
import dev.synapsehub.federation.trust.Provenance;
import dev.synapsehub.federation.trust.ServingTrust;
import dev.synapsehub.journal.DurableCoordination;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.tls.TlsFiles;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Federation over loopback TLS, two hubs in one JVM (a plain {@code main}: it measures sockets,
 * TLS, SQLite and threads, not a hot loop).
 *
 * <ul>
 *   <li>{@code catchup --events N}: hub-b's journal holds N events; hub-a starts watching it and
 *       the time until hub-a has folded all N (committed to its mirror) gives events/s.</li>
 *   <li>{@code coldcatchup --events N --runs R}: the realistic cold case. hub-b is a separate,
 *       long-running JVM ({@code serve}) that has already served {@code --warmups} catch-ups;
 *       each run is a freshly started follower JVM ({@code follow}) catching up all N events from
 *       it. Reports events/s folded, the follower JVM's CPU per event by thread (catch-up window
 *       and whole JVM life), and the serving JVM's CPU per event by thread over the same run.
 *       Both children stop by themselves: the server when this JVM's pipe to it closes or after
 *       {@code --serve-seconds}, a follower after 10 minutes at most. With
 *       {@code --probe-claims-per-s R} an agent on hub-b claims R times a second during each run
 *       (on a copy of the journal) and the claims' latencies are reported.</li>
 *   <li>{@code forward --claims K [--warmup W]}: on hub-a, K claims in hub-b's namespace (forwarded
 *       over the warm link and granted by hub-b) and K claims in hub-a's own namespace (local), one
 *       at a time, interleaved, after W pairs not measured (default 2,000: a steady state, the code of both paths
 *       compiled; 200, the default before, measured mostly code the JIT had not compiled yet); send-to-grant
 *       latency percentiles of both, from the same run.</li>
 * </ul>
 * Certificates are made with {@code openssl} in {@code --dir}, as docs/federation.md shows.
 */
public final class FederationBench {
    private FederationBench() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: FederationBench catchup|coldcatchup|forward --dir DIR [--events N] [--runs R]"
                    + " [--claims K] [--probe-claims-per-s R]");
            System.exit(2);
        }
        Path dir = Path.of(option(args, "--dir", "/tmp/fedbench"));
        Files.createDirectories(dir);
        Setup s = new Setup(dir);
        switch (args[0]) {
            case "catchup" -> catchUp(s, Integer.parseInt(option(args, "--events", "1000000")),
                    Integer.parseInt(option(args, "--runs", "1")));
            case "forward" -> {
                int k = Integer.parseInt(option(args, "--claims", "2000"));
                forward(s, k, Integer.parseInt(option(args, "--warmup", "2000")));
            }
            case "coldcatchup" -> ColdCatchUp.run(s.dir, Integer.parseInt(option(args, "--events", "1000000")),
                    Integer.parseInt(option(args, "--runs", "3")), Integer.parseInt(option(args, "--warmups", "1")),
                    option(args, "--server-jvm", "-Xmx2g"), option(args, "--follower-jvm", "-Xmx2g"),
                    Integer.parseInt(option(args, "--serve-seconds", "1800")),
                    Integer.parseInt(option(args, "--probe-claims-per-s", "0")));
            case "serve" -> serve(s, Integer.parseInt(option(args, "--events", "1000000")),
                    Integer.parseInt(option(args, "--serve-seconds", "1800")), option(args, "--journal", ""));
            case "follow" -> follow(s, URI.create(option(args, "--uri", "")), Long.parseLong(option(args, "--end", "0")));
            default -> throw new IllegalArgumentException(args[0]);
        }
        System.exit(0);
    }

    private static String option(String[] args, String name, String fallback) {
        for (int i = 0; i < args.length - 1; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return fallback;
    }

    /** Certificates, hub-b's store and serving policy granting hub-a. */
    private static final class Setup {
        final Path dir;
        final Path ca;
        final Path policy;

        Setup(Path dir) throws Exception {
            this.dir = dir;
            ca = dir.resolve("ca.pem");
            if (!Files.exists(ca)) {
                run(dir, "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=bench-ca");
                for (String h : List.of("a", "b")) {
                    run(dir, "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                            "-keyout", h + "-server.key", "-out", h + "-server.pem", "-days", "2", "-subj", "/CN=hub-" + h,
                            "-addext", "subjectAltName=IP:127.0.0.1");
                }
                run(dir, "openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                        "a-client.key", "-out", "a-client.csr", "-subj", "/CN=hub-a");
                run(dir, "openssl", "x509", "-req", "-in", "a-client.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                        "-CAcreateserial", "-out", "a-client.pem", "-days", "2");
            }
            String pin = PemFiles.pinOf(dir.resolve("a-client.pem")).text();
            new FederationStore(List.of(new PeeringRecord("a.example", List.of("proj"), List.of(pin), List.of("k"),
                    List.of(), null, false, new Provenance("bench", 0, "bench")))).write(dir.resolve("federation.json"));
            Files.copy(ca, dir.resolve("client-ca.pem"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            policy = dir.resolve("serving-policy.json");
            Files.writeString(policy, "{\"version\":1,\"federation_store\":\"federation.json\",\"client_ca_file\":"
                    + "\"client-ca.pem\",\"grants\":[{\"sender\":\"hub-a\",\"domain_id\":\"a.example\",\"namespace\":"
                    + "\"proj\",\"signing_key_id\":\"k\"}]}");
            try (var files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    if (Files.isRegularFile(p)) {
                        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
                    }
                }
            }
        }

        TlsFiles tls(String h) {
            return new TlsFiles(dir.resolve(h + "-server.pem"), dir.resolve(h + "-server.key"), null);
        }

        ClientTls toB() throws IOException {
            return ClientTls.pinned(PemFiles.pinOf(dir.resolve("b-server.pem")))
                    .withClientCertificate(dir.resolve("a-client.pem"), dir.resolve("a-client.key"));
        }
    }

    private static void run(Path dir, String... command) throws Exception {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(dir.resolve("openssl.log").toFile()).start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed; see " + dir.resolve("openssl.log"));
        }
    }

    /** A started hub and what to close. */
    private record Hub(DurableCoordination durable, HubServer server, FederationExtension federation) {
        URI uri() {
            return URI.create("wss://127.0.0.1:" + server.boundPort() + "/");
        }

        void close() throws Exception {
            server.close();
            durable.actor().close();
        }
    }

    /** The suffixes of a hub's files beside its journal: WAL, shared memory, lock, and the federation mirror's. */
    private static final List<String> DB_FILES = List.of("", "-wal", "-shm", "-lock", ".federation.db", ".federation.db-wal", ".federation.db-shm");

    private static Hub hub(Path db, String id, TlsFiles tls, FederationSettings settings) throws Exception {
        DurableCoordination d = DurableCoordination.open(db, Clock.system(), () -> new CoordinationState(
                RegistryLimits.DEFAULTS.withMaxClaimsPerPrincipal(10_000_000), 100_000), ActorSettings.DEFAULTS);
        FederationExtension ext = new FederationExtension(settings, d.journal(), SqliteMirror.open(db));
        HubServer server = new HubServer(HubConfig.builder().host("127.0.0.1").port(0).hubId(id).tls(tls).build(),
                d.actor(), Clock.system(), d.journal(), new HubExtensions(List.of(ext)));
        server.start();
        return new Hub(d, server, ext);
    }

    private static Hub owner(Setup s, Path db) throws Exception {
        ServingTrust trust = ServingTrust.load(s.policy, m -> { });
        return hub(db, "hub-b", s.tls("b").withClientCa(trust.startupPolicy().clientCaFile()), new FederationSettings(
                trust, WatchSettings.none(), new NamespaceOwners("hub-b", Map.of("proj", "hub-b", "aproj", "hub-a")),
                ForwardSettings.none()));
    }

    /**
     * {@code runs} catch-ups of the same hub-b, each by a fresh hub-a (new journal, new mirror):
     * the first also pays the JIT compiling hub-a's paths, later ones show the steady state.
     */
    static void catchUp(Setup s, int n, int runs) throws Exception {
        Hub b = owner(s, peerJournal(s.dir, n));
        for (int run = 1; run <= runs; run++) {
            System.out.printf(Locale.ROOT, "run %d of %d%n", run, runs);
            catchUp(s, b);
        }
        b.close();
    }

    /** hub-b's journal of {@code n} generated events in {@code dir}, written on first use. */
    static Path peerJournal(Path dir, int n) throws Exception {
        Path bDb = dir.resolve("catchup-b-" + n + ".db");
        if (!Files.exists(bDb)) {
            long t0 = System.nanoTime();
            ClaimLogWriter.write(bDb, n, "proj/");
            System.out.printf(Locale.ROOT, "wrote %d events to %s in %.1f s%n", n, bDb, (System.nanoTime() - t0) / 1e9);
        }
        return bDb;
    }

    private static void catchUp(Setup s, Hub b) throws Exception {
        long pages0 = b.federation().metrics().logRequestsServed.get();
        long served0 = b.federation().metrics().logEventsServed.get();
        long end = b.durable().journal().lastSeq();
        catchUp(s, b.uri(), end);
        long pages = b.federation().metrics().logRequestsServed.get() - pages0;
        long served = b.federation().metrics().logEventsServed.get() - served0;
        System.out.printf(Locale.ROOT, "served: %d pages, %d events (%.0f per page; %d events served more than once)%n",
                pages, served, (double) served / Math.max(1, pages), served - end);
    }

    /** One catch-up of {@code end} events by a fresh hub-a (new journal, new mirror) from the hub at {@code uri}. */
    private static void catchUp(Setup s, URI uri, long end) throws Exception {
        Path aDb = s.dir.resolve("catchup-a-" + ProcessHandle.current().pid() + ".db");
        for (String suffix : DB_FILES) {
            Files.deleteIfExists(Path.of(aDb + suffix));
        }
        ClientTls tls = s.toB();
        WatchPeer peer = new WatchPeer("hub-b", uri, tls.pin());
        WatchSettings watch = new WatchSettings(List.of(peer), Duration.ofSeconds(1), null, s.dir.resolve("a-client.pem"),
                s.dir.resolve("a-client.key"), PollBudget.DEFAULT, Duration.ofSeconds(10));
        Map<String, Long> cpu0 = threadCpu(Path.of("/proc/self/task"));
        long process0 = processCpu();
        long t0 = System.nanoTime();
        Hub a = hub(aDb, "hub-a", s.tls("a"), new FederationSettings(ServingTrust.none(), watch,
                new NamespaceOwners("hub-a", Map.of("proj", "hub-b")), ForwardSettings.none()));
        long started = System.nanoTime();
        long firstFolded = 0;
        long deadline = t0 + Duration.ofMinutes(10).toNanos();
        while (a.federation().fold().peer("hub-b").cursor() < end) {
            if (firstFolded == 0 && a.federation().fold().peer("hub-b").cursor() > 0) {
                firstFolded = System.nanoTime();
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not caught up after 10 minutes: "
                        + a.federation().fold().peer("hub-b"));
            }
            Thread.sleep(2);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        long processCpu = processCpu() - process0;
        Map<String, Long> byThread = cpuByThreadGroup(Path.of("/proc/self/task"), cpu0);
        System.out.printf(Locale.ROOT, "catch-up: %d events folded in %.2f s = %.0f events/s (%d observed claims, "
                + "load %.1f, TLS %s)%n", end, seconds, end / seconds, a.federation().fold().peer("hub-b").claims().size(),
                java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                dev.synapsehub.client.tls.TlsEngine.provider());
        System.out.printf(Locale.ROOT, "catch-up CPU: %.2f s for the JVM = %.2f us per event; by thread (s):%n",
                processCpu / 1e9, processCpu / 1e3 / end);
        printByThread(byThread);
        System.out.printf(Locale.ROOT, "hub started after %.3f s, first events folded after %.3f s%n",
                (started - t0) / 1e9, (firstFolded == 0 ? System.nanoTime() - t0 : firstFolded - t0) / 1e9);
        System.out.printf(Locale.ROOT, "RESULT events=%d seconds=%.3f window_cpu_ns=%d jvm_cpu_ns=%d%n", end, seconds,
                processCpu, processCpu());
        a.close();
        for (String suffix : DB_FILES) {
            Files.deleteIfExists(Path.of(aDb + suffix));
        }
    }

    static void printByThread(Map<String, Long> byThread) {
        byThread.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .filter(e -> e.getValue() >= 10_000_000L)
                .forEach(e -> System.out.printf(Locale.ROOT, "  %-28s %6.2f%n", e.getKey(), e.getValue() / 1e9));
    }

    /**
     * {@code serve}: hub-b over its generated journal until standard input closes (the driver
     * ended) or {@code maxSeconds} pass. Writes "PORT END" to {@code serve.port} once listening.
     */
    static void serve(Setup s, int n, int maxSeconds, String journal) throws Exception {
        Hub b = owner(s, journal.isEmpty() ? peerJournal(s.dir, n) : Path.of(journal));
        Path portFile = s.dir.resolve("serve.port");
        Path tmp = s.dir.resolve("serve.port.tmp");
        Files.writeString(tmp, b.server().boundPort() + " " + b.durable().journal().lastSeq());
        Files.move(tmp, portFile, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        System.out.printf(Locale.ROOT, "serving %d events on port %d (TLS %s)%n", b.durable().journal().lastSeq(),
                b.server().boundPort(), dev.synapsehub.client.tls.TlsEngine.provider());
        Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // only its end matters
                }
            } catch (IOException gone) {
                // the driver is gone: stop as on end of input
            }
        }, "serve-stdin");
        stdin.setDaemon(true);
        stdin.start();
        stdin.join(maxSeconds * 1000L);
        System.out.printf(Locale.ROOT, "served: %d pages, %d events; stopping%n",
                b.federation().metrics().logRequestsServed.get(), b.federation().metrics().logEventsServed.get());
        b.close();
    }

    /** {@code follow}: one catch-up in this (fresh) JVM from the hub at {@code uri} up to {@code end}. */
    static void follow(Setup s, URI uri, long end) throws Exception {
        System.out.printf(Locale.ROOT, "follower JVM up %d ms before the catch-up starts%n",
                java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime());
        catchUp(s, uri, end);
    }

    /**
     * CPU time (ns) of every thread of a process by task id, from {@code /proc/PID/task} (Linux):
     * unlike the JMX bean it includes the JIT compiler and GC threads. Keyed "tid name".
     */
    static Map<String, Long> threadCpu(Path taskDir) {
        Map<String, Long> out = new java.util.HashMap<>();
        java.io.File[] tasks = taskDir.toFile().listFiles();
        if (tasks == null) {
            return out;
        }
        for (java.io.File t : tasks) {
            try {
                String stat = Files.readString(t.toPath().resolve("stat"));
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
                out.put(t.getName() + " " + name, ticks * 10_000_000L); // USER_HZ = 100
            } catch (IOException | RuntimeException gone) {
                // the thread ended meanwhile
            }
        }
        return out;
    }

    /** CPU time since {@code before} of the threads, summed by name with digits removed. */
    static Map<String, Long> cpuByThreadGroup(Path taskDir, Map<String, Long> before) {
        Map<String, Long> out = new java.util.TreeMap<>();
        threadCpu(taskDir).forEach((key, now) -> {
            long used = now - before.getOrDefault(key, 0L);
            // digits out of thread numbers, but C1 and C2 compiler threads stay apart
            String name = key.substring(key.indexOf(' ') + 1).replaceAll("(?<!^C)[0-9]+", "N");
            out.merge(name, Math.max(0, used), Long::sum);
        });
        return out;
    }

    /** The JVM's CPU time (user + system), nanoseconds. */
    private static long processCpu() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    static void forward(Setup s, int k, int warmup) throws Exception {
        if (k < 1 || k > 1_000_000 || warmup < 0 || warmup > 1_000_000) {
            throw new IllegalArgumentException("--claims is 1 to 1,000,000 and --warmup 0 to 1,000,000");
        }
        for (String h : List.of("b", "a")) {
            for (String suffix : DB_FILES) {
                Files.deleteIfExists(s.dir.resolve("forward-" + h + ".db" + suffix));
            }
        }
        Hub b = owner(s, s.dir.resolve("forward-b.db"));
        ClientTls tls = s.toB();
        ForwardSettings forward = new ForwardSettings(ForwardSettings.byHub(List.of(new ClaimRoute("hub-b", b.uri(),
                tls.pin()))), null, s.dir.resolve("a-client.pem"), s.dir.resolve("a-client.key"), ForwardSettings.BOUND);
        Hub a = hub(s.dir.resolve("forward-a.db"), "hub-a", s.tls("a"), new FederationSettings(ServingTrust.none(),
                WatchSettings.none(), new NamespaceOwners("hub-a", Map.of("proj", "hub-b", "aproj", "hub-a")), forward));
        ClientTls toA = ClientTls.pinned(PemFiles.pinOf(s.dir.resolve("a-server.pem")));
        try (HubClient remote = HubClient.connect(a.uri(), Duration.ofSeconds(5), toA);
             HubClient local = HubClient.connect(a.uri(), Duration.ofSeconds(5), toA)) {
            remote.register("proj/bench", null, Duration.ofSeconds(5));
            local.register("aproj/bench", null, Duration.ofSeconds(5));
            long[] fwd = new long[k];
            long[] loc = new long[k];
            for (int i = 0; i < warmup + k; i++) {
                long f = claim(remote, "proj/bench", "f-" + i);
                long l = claim(local, "aproj/bench", "l-" + i);
                if (i >= warmup) {
                    fwd[i - warmup] = f;
                    loc[i - warmup] = l;
                }
            }
            Arrays.sort(fwd);
            Arrays.sort(loc);
            System.out.printf(Locale.ROOT, "forwarded claim: p50 %.0f us, p90 %.0f us, p99 %.0f us (%d claims)%n",
                    pct(fwd, 0.5), pct(fwd, 0.9), pct(fwd, 0.99), k);
            System.out.printf(Locale.ROOT, "local claim:     p50 %.0f us, p90 %.0f us, p99 %.0f us (%d claims)%n",
                    pct(loc, 0.5), pct(loc, 0.9), pct(loc, 0.99), k);
            System.out.printf(Locale.ROOT, "p50 ratio forwarded/local: %.2f after %d warm-up pairs (load %.1f)%n",
                    pct(fwd, 0.5) / pct(loc, 0.5), warmup,
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        }
        a.close();
        b.close();
    }

    private static long claim(HubClient c, String name, String task) throws Exception {
        ObjectNode f = c.frame(name, "claim");
        f.put("task_id", task);
        long t0 = System.nanoTime();
        c.send(f);
        ObjectNode reply = c.await(r -> task.equals(r.path("task_id").asText()) && (
                "claim_granted".equals(r.path("type").asText()) || "claim_denied".equals(r.path("type").asText())),
                Duration.ofSeconds(15));
        long micros = (System.nanoTime() - t0) / 1000;
        if (!"claim_granted".equals(reply.path("type").asText())) {
            throw new IllegalStateException("not granted: " + reply);
        }
        c.clearPending();
        return micros;
    }

    private static double pct(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(p * sorted.length))];
    }
}
