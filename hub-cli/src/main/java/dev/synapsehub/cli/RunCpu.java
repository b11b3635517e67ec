package dev.synapsehub.cli;

import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Locale;
import java.util.OptionalDouble;

/**
 * The CPU time the hub and the load tool itself spent during one measured phase. The two share
 * the machine, so a latency figure means little without both. The hub's is read from its
 * {@code /metrics} ({@code process_cpu_seconds_total}) before and after; the tool's from its own
 * JVM. Either is reported as unknown, never as zero, when it cannot be read.
 */
final class RunCpu {
    /** The hub's metric: CPU seconds its process has used. */
    static final String HUB_METRIC = "process_cpu_seconds_total";
    private static final Duration SCRAPE_TIMEOUT = Duration.ofSeconds(3);
    /** Where a hub's metrics token comes from, for a hub started with {@code --metrics-token}. */
    static final String TOKEN_ENV = "SYNAPSE_METRICS_TOKEN";

    /** The hubs' {@code /metrics}: several for the nodes of a mesh, whose CPU is summed. */
    private final java.util.List<URI> metrics;
    private final HttpClient http;
    private final String token = System.getenv(TOKEN_ENV);
    private OptionalDouble hubBefore = OptionalDouble.empty();
    private OptionalDouble hubAfter = OptionalDouble.empty();
    private String hubProblem = "not read";
    private long selfBefore = -1;
    private long selfAfter = -1;
    private long startNanos;
    private long stopNanos;

    /** {@code metrics}: the hub's {@code /metrics} URL, null when the hub's CPU is not to be read. */
    RunCpu(URI metrics) {
        this(metrics, java.util.List.of());
    }

    private RunCpu(URI first, java.util.List<URI> more) {
        java.util.List<URI> all = new java.util.ArrayList<>();
        if (first != null) {
            all.add(first);
            all.addAll(more);
        }
        this.metrics = java.util.List.copyOf(all);
        this.http = all.isEmpty() ? null : HttpClient.newBuilder().connectTimeout(SCRAPE_TIMEOUT).build();
    }

    /** Every hub process of the run (a mesh's nodes, at least one): their CPU is added up. */
    static RunCpu summing(java.util.List<URI> metrics) {
        return new RunCpu(metrics.get(0), metrics.subList(1, metrics.size()));
    }

    /** The {@code /metrics} URL on a hub's WebSocket port: ws → http, wss → https. */
    static URI metricsUrl(URI hub) {
        String scheme = "wss".equalsIgnoreCase(hub.getScheme()) ? "https" : "http";
        return URI.create(scheme + "://" + hub.getRawAuthority() + "/metrics");
    }

    /**
     * Reads both counters at the start of the measured phase. The wall clock brackets the reads
     * (taken before them here, after them in {@link #stop}): the CPU counted includes the reads,
     * so a phase shorter than a scrape of /metrics still gets a share of at most what was used.
     */
    void start() {
        startNanos = System.nanoTime();
        hubBefore = scrapeHub();
        selfBefore = ownCpuNanos();
    }

    /** Reads both counters at the end of the measured phase. */
    void stop() {
        selfAfter = ownCpuNanos();
        hubAfter = hubBefore.isPresent() ? scrapeHub() : OptionalDouble.empty();
        stopNanos = System.nanoTime();
    }

    /** Wall-clock seconds the CPU figures cover, from the first read to the last; 0 before {@link #stop}. */
    double wallSeconds() {
        return stopNanos > startNanos ? (stopNanos - startNanos) / 1e9 : 0;
    }

    /** CPU seconds the hub used between start and stop, when both reads succeeded. */
    OptionalDouble hubSeconds() {
        if (hubBefore.isEmpty() || hubAfter.isEmpty()) {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of(hubAfter.getAsDouble() - hubBefore.getAsDouble());
    }

    /** CPU seconds this tool used between start and stop, when the JVM measures it. */
    OptionalDouble selfSeconds() {
        return selfBefore < 0 || selfAfter < 0 ? OptionalDouble.empty() : OptionalDouble.of((selfAfter - selfBefore) / 1e9);
    }

    void print(PrintWriter out) {
        double wall = wallSeconds();
        OptionalDouble hub = hubSeconds();
        out.printf(Locale.ROOT, "hub CPU             %s%n", hub.isPresent() ? share(hub.getAsDouble(), wall)
                : "unknown (" + hubProblem + ")");
        OptionalDouble self = selfSeconds();
        out.printf(Locale.ROOT, "bench CPU           %s%n", self.isPresent() ? share(self.getAsDouble(), wall)
                : "unknown (this JVM does not measure its process CPU time)");
    }

    private static String share(double cpu, double wall) {
        if (wall <= 0) {
            return String.format(Locale.ROOT, "%.2f s  (share unknown: the measured phase was not timed)", cpu);
        }
        return String.format(Locale.ROOT, "%.2f s  (%.0f %% of one core over %.2f s)", cpu, 100 * cpu / wall, wall);
    }

    private OptionalDouble scrapeHub() {
        if (metrics.isEmpty()) {
            hubProblem = "not asked for";
            return OptionalDouble.empty();
        }
        double sum = 0;
        for (URI one : metrics) {
            OptionalDouble v = scrapeHub(one);
            if (v.isEmpty()) {
                return v; // a partial sum would understate the hub's CPU
            }
            sum += v.getAsDouble();
        }
        return OptionalDouble.of(sum);
    }

    private OptionalDouble scrapeHub(URI metrics) {
        try {
            HttpRequest.Builder request = HttpRequest.newBuilder(metrics).timeout(SCRAPE_TIMEOUT).GET();
            if (token != null && !token.isBlank()) {
                request.header("Authorization", "Bearer " + token.strip());
            }
            HttpResponse<String> r = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 401) {
                hubProblem = metrics + " answered 401: the hub asks for its metrics token; give it in " + TOKEN_ENV;
                return OptionalDouble.empty();
            }
            if (r.statusCode() != 200) {
                hubProblem = metrics + " answered " + r.statusCode() + ": start the hub with --metrics";
                return OptionalDouble.empty();
            }
            OptionalDouble v = counter(r.body(), HUB_METRIC);
            if (v.isEmpty()) {
                hubProblem = metrics + " has no " + HUB_METRIC;
            }
            return v;
        } catch (java.io.IOException e) {
            hubProblem = "cannot read " + metrics + ": " + e.getMessage();
            return OptionalDouble.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            hubProblem = "interrupted";
            return OptionalDouble.empty();
        }
    }

    /** The value of an unlabelled sample {@code name} in Prometheus text exposition, if there is one. */
    static OptionalDouble counter(String exposition, String name) {
        for (String line : exposition.split("\n")) {
            if (line.startsWith(name + " ")) {
                String[] parts = line.trim().split("\\s+");
                try {
                    return OptionalDouble.of(Double.parseDouble(parts[1]));
                } catch (NumberFormatException e) {
                    return OptionalDouble.empty();
                }
            }
        }
        return OptionalDouble.empty();
    }

    /** CPU nanoseconds this process has used, or -1 when the JVM does not say. */
    static long ownCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : -1;
    }
}
