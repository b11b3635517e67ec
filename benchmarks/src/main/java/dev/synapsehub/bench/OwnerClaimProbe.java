package dev.synapsehub.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * An agent on the serving hub claiming at a steady rate while a follower catches up: how long a
 * claim waits on the owner while it serves pages. Paced from intended send times, so a claim
 * sent late because the previous one was slow counts from when it should have gone (no
 * coordinated omission). Bounded: it stops when asked, or after {@code maxSeconds}.
 */
final class OwnerClaimProbe implements AutoCloseable {
    private final HubClient client;
    private final String name;
    private final long periodNanos;
    private final long maxNanos;
    private final List<long[]> latencies = new ArrayList<>(); // {from intended, from actual send} ns
    private final Thread thread;
    private volatile boolean stop;
    private volatile Exception failure;

    private final String taskPrefix;

    /** Connects and registers agent {@code name}, which claims tasks named {@code name}-N once started. */
    OwnerClaimProbe(URI uri, ClientTls tls, String name, int perSecond, int maxSeconds) throws Exception {
        this.client = HubClient.connect(uri, Duration.ofSeconds(10), tls);
        this.name = name;
        this.taskPrefix = name.replace('/', '-');
        this.periodNanos = 1_000_000_000L / perSecond;
        this.maxNanos = Duration.ofSeconds(maxSeconds).toNanos();
        client.register(name, null, Duration.ofSeconds(10));
        thread = new Thread(this::run, "owner-claim-probe");
        thread.setDaemon(true);
    }

    /** Starts claiming. */
    OwnerClaimProbe start() {
        thread.start();
        return this;
    }

    private void run() {
        long begin = System.nanoTime();
        try {
            for (long i = 0; !stop && System.nanoTime() - begin < maxNanos; i++) {
                long intended = begin + i * periodNanos;
                long wait = intended - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
                String task = taskPrefix + "-" + i;
                ObjectNode f = client.frame(name, "claim");
                f.put("task_id", task);
                f.putArray("paths").add("probe/" + task); // a scope of its own: no claim waits on another
                long sent = System.nanoTime();
                client.send(f);
                ObjectNode reply = client.await(r -> task.equals(r.path("task_id").asText())
                        && r.path("type").asText().startsWith("claim_"), Duration.ofSeconds(15));
                long now = System.nanoTime();
                if (!"claim_granted".equals(reply.path("type").asText())) {
                    throw new IllegalStateException("probe claim not granted: " + reply);
                }
                client.clearPending();
                synchronized (latencies) {
                    latencies.add(new long[] {now - intended, now - sent});
                }
            }
        } catch (Exception e) {
            failure = e;
        }
    }

    /** Stops claiming and returns the summary line (from intended send / from actual send). */
    String stopAndSummarise() throws Exception {
        stop = true;
        thread.join(20_000);
        if (failure != null) {
            throw new IllegalStateException("the owner claim probe failed", failure);
        }
        long[] intended;
        long[] actual;
        synchronized (latencies) {
            intended = latencies.stream().mapToLong(l -> l[0]).sorted().toArray();
            actual = latencies.stream().mapToLong(l -> l[1]).sorted().toArray();
        }
        if (intended.length == 0) {
            return "owner claims: none completed";
        }
        return String.format(Locale.ROOT, "owner claims meanwhile: %d; from intended send p50 %.2f ms, p99 %.2f ms, max %.2f ms; "
                        + "from actual send p50 %.2f ms, p99 %.2f ms, max %.2f ms", intended.length,
                pct(intended, 0.5), pct(intended, 0.99), intended[intended.length - 1] / 1e6,
                pct(actual, 0.5), pct(actual, 0.99), actual[actual.length - 1] / 1e6);
    }

    private static double pct(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(p * sorted.length))] / 1e6;
    }

    @Override
    public void close() throws Exception {
        stop = true;
        thread.join(20_000);
        client.close();
    }
}
