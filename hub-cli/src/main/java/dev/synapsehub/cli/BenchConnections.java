package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.NetTransport;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The load tool's connections: one event loop group for the measured agents and a separate one
 * for idle connections (so reading ten thousand idle sockets never delays a measured reply), registration in
 * parallel (a bounded pool, so 10,000 idle connections open in reasonable time), and a tally
 * of the close codes the hub sent, with a hint when they mean the hub's connection limits.
 * Given several hubs (the nodes of a mesh), the i-th connection of each {@link #open} call
 * goes to hub i modulo their number.
 */
final class BenchConnections implements AutoCloseable {
    private final List<URI> urls;
    private final String token;
    private final Duration timeout;
    private final int parallelism;
    private final EventLoopGroup group;
    private final EventLoopGroup idleGroup;
    private final List<HubClient> clients = Collections.synchronizedList(new ArrayList<>());
    private final Map<Integer, LongAdder> closeCodes = new ConcurrentHashMap<>();
    private final Map<HubClient, CompletableFuture<HubClient.CloseStatus>> closeRecorded =
            new ConcurrentHashMap<>();
    private volatile boolean closing;
    private final SourceAddresses sources;
    /** Connections opened so far: the next one's index into {@link #sources}. */
    private final AtomicInteger opened = new AtomicInteger();

    BenchConnections(URI url, String token, Duration timeout, int parallelism) {
        this(List.of(url), token, timeout, parallelism, null);
    }

    /**
     * Connections spread round-robin over {@code urls} (at least one), each socket bound to the
     * next of {@code sources} in turn (null: the system picks the source address).
     */
    BenchConnections(List<URI> urls, String token, Duration timeout, int parallelism, SourceAddresses sources) {
        if (urls.isEmpty()) {
            throw new IllegalArgumentException("no hub to connect to");
        }
        this.sources = sources;
        this.urls = List.copyOf(urls);
        this.token = token;
        this.timeout = timeout;
        this.parallelism = Math.max(1, parallelism);
        this.group = NetTransport.choose(true).group(Math.max(1, Runtime.getRuntime().availableProcessors()), "bench-io");
        this.idleGroup = NetTransport.choose(true).group(1, "bench-idle-io"); // its thread starts with the first connection
    }

    /**
     * Opens and registers one connection per name, {@code parallelism} at a time. Each is left
     * discarding what it receives (unparsed) until its workload installs a listener.
     */
    List<HubClient> open(List<String> names, PrintWriter progress) throws IOException {
        return open(names, progress, group);
    }

    /** Like {@link #open}, on the idle connections' own event loop. */
    List<HubClient> openIdle(List<String> names, PrintWriter progress) throws IOException {
        return open(names, progress, idleGroup);
    }

    private List<HubClient> open(List<String> names, PrintWriter progress, EventLoopGroup loops) throws IOException {
        if (names.isEmpty()) {
            return List.of();
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(parallelism, names.size()),
                new DefaultThreadFactory("bench-connect", true));
        AtomicInteger done = new AtomicInteger();
        try {
            List<Future<HubClient>> futures = new ArrayList<>(names.size());
            for (int i = 0; i < names.size(); i++) {
                String name = names.get(i);
                URI url = urls.get(i % urls.size());
                futures.add(pool.submit(() -> {
                    HubClient c = register(name, url, loops);
                    done.incrementAndGet();
                    return c;
                }));
            }
            List<HubClient> out = new ArrayList<>(names.size());
            long lastPrint = System.nanoTime();
            for (Future<HubClient> f : futures) {
                while (true) {
                    try {
                        out.add(f.get(200, TimeUnit.MILLISECONDS));
                        break;
                    } catch (TimeoutException e) {
                        long now = System.nanoTime();
                        if (progress != null && now - lastPrint >= 1_000_000_000L) {
                            lastPrint = now;
                            progress.printf(Locale.ROOT, "\r  connected %,d of %,d   ", done.get(), names.size());
                            progress.flush();
                        }
                    }
                }
            }
            if (progress != null && names.size() >= 1000) {
                progress.printf(Locale.ROOT, "\r  connected %,d of %,d   %n", done.get(), names.size());
            }
            return out;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw cause instanceof IOException io ? io : new IOException(String.valueOf(cause.getMessage()), cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while connecting");
        } finally {
            pool.shutdownNow();
        }
    }

    /** Opens one connection without registering it (the caller sends its own first frame). */
    HubClient connect() throws IOException {
        return connect(urls.get(0), group);
    }

    private HubClient connect(URI url, EventLoopGroup loops) throws IOException {
        HubClient c = HubClient.connect(url, timeout, loops, false,
                sources == null ? null : sources.forConnection(opened.getAndIncrement()));
        track(c);
        return c;
    }

    /**
     * Registers {@code name} and waits until the hub has processed it: its own
     * {@code presence_update} (joined) arrives, or the private answer to a tiny probe sent right
     * after the heartbeat (a hub with --presence-fanout-limit stops announcing joins), or a
     * refusal. The raw text is only scanned, never parsed.
     */
    private HubClient register(String name, URI url, EventLoopGroup loops) throws IOException {
        HubClient c = connect(url, loops);
        CompletableFuture<String> answer = new CompletableFuture<>();
        String joined = "\"agent\":\"" + name + "\"";
        String probeTask = "bench-registration-probe-" + name;
        c.onText(t -> {
            if (answer.isDone()) {
                return;
            }
            if ((t.contains("\"presence_update\"") && t.contains(joined))
                    || (t.contains("\"wait_denied\"") && t.contains(probeTask))) {
                answer.complete(null);
            } else if (t.contains("\"auth_denied\"") || t.contains("\"name_conflict\"")) {
                answer.complete(t);
            }
        });
        // after the close code is counted, so a failed set-up can already print its hint
        closeRecorded.get(c).thenAccept(st -> answer.completeExceptionally(
                new IOException("connection closed (" + st.code() + " " + st.reason() + ")")));
        ObjectNode hb = c.frame(name, "heartbeat");
        hb.put("payload", "online");
        if (token != null) {
            hb.put("token", token);
        }
        c.sendAsync(hb);
        ObjectNode probe = c.frame(name, "wait_request");
        probe.put("task_id", probeTask);
        c.sendAsync(probe);
        String refusal;
        try {
            refusal = answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new IOException("registering " + name + ": no presence_update within " + timeout.toSeconds() + " s");
        } catch (ExecutionException e) {
            throw new IOException("registering " + name + ": " + e.getCause().getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
        if (refusal != null) {
            throw new IOException("registering " + name + " refused: " + refusal);
        }
        c.onBytes(b -> { });
        c.clearPending();
        return c;
    }

    private void track(HubClient c) {
        clients.add(c);
        closeRecorded.put(c, c.closeFuture().thenApply(s -> {
            if (!closing) {
                closeCodes.computeIfAbsent(s.code(), k -> new LongAdder()).increment();
            }
            return s;
        }));
    }

    /** Connections the hub (or the network) closed while the tool still wanted them. */
    long closedByHub() {
        return closeCodes.values().stream().mapToLong(LongAdder::sum).sum();
    }

    /** The close codes seen so far, e.g. {@code 4013 x3, -1 x1}; empty when none. */
    String closeSummary() {
        StringBuilder b = new StringBuilder();
        new java.util.TreeMap<>(closeCodes).forEach((code, n) -> {
            b.append(b.length() == 0 ? "" : ", ").append(code).append(" x").append(n.sum());
        });
        return b.toString();
    }

    /** Prints what the hub's limits need when it refused connections with 4013 or 4015. */
    void printHints(PrintWriter err, int wanted) {
        LongAdder capacity = closeCodes.get(4013);
        if (capacity != null) {
            err.printf(Locale.ROOT, "hint: the hub closed %,d connection(s) with 4013 (hub at capacity): this run opens %,d;"
                    + " start the hub with --max-clients %d or more (plus whatever else connects)%n", capacity.sum(), wanted,
                    wanted);
        }
        LongAdder perHost = closeCodes.get(4015);
        if (perHost != null) {
            err.printf(Locale.ROOT, "hint: the hub closed %,d connection(s) with 4015 (too many connections from host):"
                    + " start it with --max-connections-per-host 0%n", perHost.sum());
        }
        LongAdder dropped = closeCodes.get(-1);
        if (dropped != null) {
            err.printf(Locale.ROOT, "hint: %,d connection(s) ended without a close frame: the hub stopped, the network"
                    + " dropped them, or the hub dropped a reader that fell too far behind its broadcasts (this tool,"
                    + " when it shares the machine with the hub); the figures cover fewer agents than asked. If the hub"
                    + " counted slow readers, fewer --agents or --in-flight load it less.%n", dropped.sum());
        }
        err.flush();
    }

    /**
     * Makes the idle connections' loop read in passes at most one every {@code interval}: after
     * each pass its thread sleeps out the rest of the interval, so the hub's sends meanwhile wake
     * nobody and the next pass finds every socket that got something ready at once, in one
     * {@code epoll_wait}, each read taking all that came since the last. The idle agents stand
     * for other machines; what this costs them (up to one interval per frame) shows in the
     * observer's line, which reads on the same loop.
     */
    void readIdleInPasses(Duration interval) {
        long nanos = interval.toNanos();
        if (nanos <= 0) {
            return;
        }
        EventLoop loop = idleGroup.next();
        loop.execute(new Runnable() {
            private long passStart = System.nanoTime();

            @Override
            public void run() {
                // runs once per loop iteration, after its I/O: sleep until the next pass is due
                long rest = passStart + nanos - System.nanoTime();
                if (rest > 0) {
                    LockSupport.parkNanos(rest);
                }
                passStart = System.nanoTime();
                if (!closing && !loop.isShuttingDown()) {
                    try {
                        // scheduled, not executed: a due scheduled task lets the loop poll its
                        // sockets (without blocking) before running it again
                        loop.schedule(this, 0, TimeUnit.NANOSECONDS);
                    } catch (RejectedExecutionException shuttingDown) {
                        // the loop is closing: nothing left to pace
                    }
                }
            }
        });
    }

    @Override
    public void close() {
        closing = true;
        List<HubClient> all;
        synchronized (clients) {
            all = new ArrayList<>(clients);
        }
        for (HubClient c : all) {
            c.close();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        idleGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
