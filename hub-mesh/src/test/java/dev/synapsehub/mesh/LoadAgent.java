package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.mesh.History.Kind;
import dev.synapsehub.mesh.History.Result;
import dev.synapsehub.mesh.History.Scope;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A wire agent for the failover tests: claims a random task, then releases it or hands it to
 * its partner (who releases it), with an idem_key on every request. A request whose outcome it
 * cannot learn (an error that may hide a commit, a timeout, a dropped connection) is recorded
 * {@code UNKNOWN}; the agent reconnects, to any live node, and retries once under the same key
 * to learn the outcome. Bounded in operations and by a stop flag.
 */
final class LoadAgent implements Runnable {
    static final Duration OP_TIMEOUT = Duration.ofSeconds(10);

    /** A task and its file scope. */
    record TaskSpec(String id, Scope scope) {
    }

    private record Held(String task, Scope scope, long epoch) {
    }

    private record Reply(Result result, long epoch, String owner) {
    }

    final String name;
    private final Supplier<List<URI>> nodes;
    private final List<TaskSpec> tasks;
    private final History history;
    private final Random random;
    private final int maxOps;
    private final Queue<Held> handed = new ConcurrentLinkedQueue<>();
    private volatile LoadAgent partner;
    private volatile boolean stop;
    private HubClient client;
    private String node;
    private int preferred;
    private long seq;
    private volatile Throwable failure;

    LoadAgent(String name, int preferred, Supplier<List<URI>> nodes, List<TaskSpec> tasks, History history, long seed,
              int maxOps) {
        this.name = name;
        this.preferred = preferred;
        this.nodes = nodes;
        this.tasks = tasks;
        this.history = history;
        this.random = new Random(seed);
        this.maxOps = maxOps;
    }

    void partner(LoadAgent other) {
        this.partner = other;
    }

    void stop() {
        stop = true;
    }

    Throwable failure() {
        return failure;
    }

    @Override
    public void run() {
        try {
            for (int ops = 0; !stop && ops < maxOps; ops++) {
                Held mine = handed.poll();
                if (mine != null) {
                    release(mine);
                    continue;
                }
                TaskSpec t = tasks.get(random.nextInt(tasks.size()));
                Reply claimed = claim(t);
                if (claimed.result() != Result.GRANTED) {
                    continue;
                }
                Held held = new Held(t.id(), t.scope(), claimed.epoch());
                LoadAgent to = partner;
                if (to != null && random.nextInt(4) == 0) {
                    Reply moved = handoff(held, to);
                    if (moved.result() == Result.GRANTED) {
                        to.handed.add(new Held(held.task(), held.scope(), moved.epoch()));
                        continue;
                    }
                }
                release(held);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            failure = e;
        } finally {
            if (client != null) {
                client.close();
            }
        }
    }

    private Reply claim(TaskSpec t) throws InterruptedException {
        ObjectNode f = frame("claim", t.id());
        f.put("worktree", t.scope().worktree());
        t.scope().paths().forEach(f.putArray("paths")::add);
        return perform(Kind.CLAIM, t.id(), t.scope(), null, null, f,
                r -> "claim_granted".equals(r.path("type").asText()) && mine(r, t.id()) && name.equals(owner(r)),
                r -> "claim_denied".equals(r.path("type").asText()) && mine(r, t.id()));
    }

    private Reply release(Held h) throws InterruptedException {
        ObjectNode f = frame("release", h.task());
        f.put("epoch", h.epoch());
        return perform(Kind.RELEASE, h.task(), h.scope(), h.epoch(), null, f,
                r -> "release_granted".equals(r.path("type").asText()) && mine(r, h.task()) && name.equals(owner(r)),
                r -> "release_denied".equals(r.path("type").asText()) && mine(r, h.task()));
    }

    private Reply handoff(Held h, LoadAgent to) throws InterruptedException {
        ObjectNode f = frame("handoff", h.task());
        f.put("to_agent", to.name);
        f.put("epoch", h.epoch());
        return perform(Kind.HANDOFF, h.task(), h.scope(), h.epoch(), to.name, f,
                r -> "handoff_granted".equals(r.path("type").asText()) && mine(r, h.task())
                        && name.equals(r.path("previous_owner").asText()),
                r -> "handoff_denied".equals(r.path("type").asText()) && mine(r, h.task()));
    }

    private static boolean mine(ObjectNode r, String task) {
        return task.equals(r.path("task_id").asText());
    }

    private static String owner(ObjectNode r) {
        return r.path("owner").asText();
    }

    private ObjectNode frame(String type, String task) {
        ObjectNode f = MeshJson.MAPPER.createObjectNode();
        f.put("sender", name);
        f.put("target", "System");
        f.put("type", type);
        f.put("payload", "");
        f.put("task_id", task);
        f.put("idem_key", name + "-" + (++seq));
        return f;
    }

    /** Sends, records, and on an unknown outcome reconnects and asks once more under the same key. */
    private Reply perform(Kind kind, String task, Scope scope, Long epochArg, String target, ObjectNode f,
                          Predicate<ObjectNode> granted, Predicate<ObjectNode> denied) throws InterruptedException {
        Reply reply = null;
        // the request is decided after it was first sent (one clock in this JVM), and a retry
        // replays that first answer: an older frame is another node's late publication of an
        // earlier decision
        double notBefore = System.currentTimeMillis() / 1000.0 - 0.001;
        long requested = 0;
        for (int attempt = 0; attempt < 2 && !stop; attempt++) {
            ensureConnected();
            long invoked = System.nanoTime();
            requested = attempt == 0 ? invoked : requested;
            reply = send(f, fresh(granted, notBefore), fresh(denied, notBefore));
            history.add(new History.Op(name, node, kind, task, scope, requested, epochArg, target, invoked,
                    System.nanoTime(), reply.result(), reply.epoch(), reply.owner()));
            if (reply.result() != Result.UNKNOWN) {
                return reply;
            }
            disconnect();
        }
        return reply == null ? new Reply(Result.UNKNOWN, 0, null) : reply;
    }

    private static Predicate<ObjectNode> fresh(Predicate<ObjectNode> p, double notBefore) {
        return p.and(r -> r.path("timestamp").asDouble() >= notBefore);
    }

    private Reply send(ObjectNode f, Predicate<ObjectNode> granted, Predicate<ObjectNode> denied) {
        client.clearPending();
        client.send(f);
        try {
            ObjectNode r = client.awaitWhileOpen(granted.or(denied).or(e -> "error".equals(e.path("type").asText())),
                    OP_TIMEOUT);
            if (granted.test(r)) {
                return new Reply(Result.GRANTED, r.path("epoch").asLong(), owner(r));
            }
            if (denied.test(r)) {
                return new Reply(Result.DENIED, 0, null);
            }
            return new Reply(Result.UNKNOWN, 0, null); // commit_unknown, busy, journal_failed, ...
        } catch (TimeoutException | RuntimeException e) {
            return new Reply(Result.UNKNOWN, 0, null);
        }
    }

    private void ensureConnected() throws InterruptedException {
        while (client == null || !client.isOpen()) {
            disconnect();
            List<URI> live = nodes.get();
            if (live.isEmpty()) {
                Thread.sleep(50);
                continue;
            }
            URI uri = live.get(Math.floorMod(preferred++, live.size()));
            try {
                HubClient c = HubClient.connect(uri, OP_TIMEOUT);
                c.register(name, null, OP_TIMEOUT);
                client = c;
                node = uri.toString();
            } catch (Exception e) {
                Thread.sleep(50); // that node went away or still binds our old session: try the next
            }
        }
    }

    private void disconnect() {
        if (client != null) {
            client.close();
            client = null;
        }
    }
}
