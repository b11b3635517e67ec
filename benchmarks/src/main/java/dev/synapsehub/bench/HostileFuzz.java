package dev.synapsehub.bench;

import dev.synapsehub.client.HubClient;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * A bounded hostile load for the heap investigation of issue 11: connections that come and go
 * under random (and hostile) names, with leases, takeovers, keyed claims with big notes, big and
 * directed chats, history and mailbox reads, and junk frames. Not a pass/fail test: it only
 * drives the hub, whose heap is read with {@code jcmd GC.class_histogram} meanwhile
 * (docs/benchmarks.md, "Heap under a hostile run").
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.synapsehub.bench.HostileFuzz URL SECONDS CONNECTIONS SEED</pre>
 *
 * Stops after {@code SECONDS} (at most 600) or 2,000,000 frames, whichever comes first. Only
 * for a hub on 127.0.0.1.
 */
public final class HostileFuzz {
    private static final int MAX_FRAMES = 2_000_000;
    private static final String[] VERBS = {"claim", "release", "handoff", "checkpoint", "task_update", "chat",
        "ack", "heartbeat", "history_request", "resume_request", "state_request", "who_request", "board_request",
        "ledger_task", "ledger_progress", "resource", "advertise", "wait_request", "manifest_request"};

    /** One open connection and the name (as JSON string content) it registered. */
    private record Conn(HubClient client, String name) {
    }

    private HostileFuzz() {
    }

    public static void main(String[] args) throws Exception {
        URI url = URI.create(args.length > 0 ? args[0] : "ws://127.0.0.1:8876/");
        if (!"127.0.0.1".equals(url.getHost())) {
            throw new IllegalArgumentException("loopback only: " + url);
        }
        long seconds = Math.min(600, args.length > 1 ? Long.parseLong(args[1]) : 60);
        int connections = args.length > 2 ? Integer.parseInt(args[2]) : 32;
        Random random = new Random(args.length > 3 ? Long.parseLong(args[3]) : 11);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        List<Conn> open = new ArrayList<>();
        long frames = 0;
        long names = 0;
        while (System.nanoTime() < deadline && frames < MAX_FRAMES) {
            if (open.size() < connections || random.nextInt(50) == 0) {
                if (open.size() >= connections) {
                    open.remove(random.nextInt(open.size())).client().close(); // churn
                }
                try {
                    HubClient c = HubClient.connect(url, Duration.ofSeconds(5));
                    c.onBytes(b -> { }); // read and drop whatever comes back
                    String name = name(random, names++);
                    c.sendText("{\"sender\":\"" + name + "\",\"type\":\"heartbeat\",\"lease\":" + random.nextBoolean()
                            + ",\"takeover\":" + random.nextBoolean() + ",\"mailbox\":" + random.nextBoolean()
                            + ",\"since_seq\":0}");
                    open.add(new Conn(c, name));
                } catch (Exception refused) {
                    Thread.sleep(10); // at capacity, or the hub closed it: try again later
                }
                continue;
            }
            Conn c = open.get(random.nextInt(open.size()));
            if (!c.client().isOpen()) {
                open.remove(c);
                continue;
            }
            String f = frame(random);
            // most frames carry the bound name; a few another one (a name switch)
            try {
                c.client().sendText(f.startsWith("{\"type\"") && random.nextInt(100) > 0
                        ? "{\"sender\":\"" + c.name() + "\"," + f.substring(1) : f);
            } catch (Exception closedMeanwhile) { // thrown as is by the sync: a closed channel
                open.remove(c);
            }
            frames++;
            if (frames % 200 == 0) {
                Thread.sleep(1); // keep the load bounded rather than flood the loopback
            }
        }
        open.forEach(c -> c.client().close());
        System.out.println("hostile fuzz: " + frames + " frames, " + names + " connections");
    }

    private static String name(Random r, long n) {
        return switch (r.nextInt(6)) {
            case 0 -> "fuzz/" + n;
            case 1 -> "fuzz/\\u00e9l\\u00e8ve-" + n;
            case 2 -> "fuzz/" + "x".repeat(200) + n;
            case 3 -> "fuzz/" + Long.toHexString(r.nextLong());
            case 4 -> "SynapseHub\\u200b" + n; // refused
            default -> "fuzz/p" + r.nextInt(64); // names that come back: takeovers, leases
        };
    }

    private static String frame(Random r) {
        switch (r.nextInt(12)) {
            case 0:
                return junk(r);
            case 1:
                return "{\"type\":\"chat\",\"target\":\"fuzz/p" + r.nextInt(64) + "\",\"payload\":\""
                        + "y".repeat(r.nextInt(256 * 1024)) + "\",\"receipt_requested\":true}";
            case 2:
                return "{\"type\":\"claim\",\"task_id\":\"t" + r.nextInt(100_000) + "\",\"worktree\":\"w"
                        + r.nextInt(8) + "\",\"note\":\"" + "n".repeat(r.nextInt(64 * 1024)) + "\",\"idem_key\":\"k"
                        + r.nextLong() + "\"}";
            default:
                String verb = VERBS[r.nextInt(VERBS.length)];
                return "{\"type\":\"" + verb + "\",\"task_id\":\"t" + r.nextInt(1000) + "\",\"seq\":" + r.nextInt(1000)
                        + ",\"target\":\"fuzz/p" + r.nextInt(64) + "\",\"payload\":\"p" + r.nextInt() + "\",\"title\":\"t\","
                        + "\"kind\":\"k" + r.nextInt(100) + "\",\"name\":\"n" + r.nextInt(100_000) + "\",\"text\":\"x\","
                        + "\"epoch\":" + r.nextInt(5) + ",\"since\":" + r.nextInt(100) + ",\"idem_key\":\"i" + r.nextInt(1 << 20)
                        + "\",\"mailbox\":true,\"since_seq\":" + r.nextInt(100) + "}";
        }
    }

    private static String junk(Random r) {
        switch (r.nextInt(5)) {
            case 0:
                byte[] b = new byte[1 + r.nextInt(300)];
                r.nextBytes(b);
                return new String(b, StandardCharsets.ISO_8859_1);
            case 1:
                return "{\"type\":\"claim\",\"task_id\":\"s-\\ud800\"}";
            case 2:
                return "[".repeat(200);
            case 3:
                return "{\"type\":\"claim\",\"ttl_seconds\":" + "9".repeat(400) + "}";
            default:
                return "{\"type\":\"chec\\u212apoint\"}";
        }
    }
}
