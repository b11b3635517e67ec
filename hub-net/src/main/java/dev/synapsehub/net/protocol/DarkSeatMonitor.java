package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.ActorRefusedException;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.board.BoardTask;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.PythonFloatFormat;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The dark-seat monitor (contract §8.7, always on): every 5 s it reads who owns an unexpired
 * claim or is the suggested owner of a board task not done or cancelled, and broadcasts one
 * {@code dark_seat_alert} per episode for those without a live waiter for 30 s. Time is the
 * hub's clock (the {@link Clock} it is given), so a test that sets the clock and calls
 * {@link #check()} sees what the scheduled checks would. Never releases or changes anything.
 */
public final class DarkSeatMonitor implements AutoCloseable {
    /** Seconds between checks (§8.7). */
    public static final long PERIOD_SECONDS = 5;
    private static final Logger LOG = LoggerFactory.getLogger(DarkSeatMonitor.class);

    private final CoordinationActor actor;
    private final Outbox outbox;
    private final SessionRegistry registry;
    private final HubFrames frames;
    private final HubMetrics metrics;
    private final Clock clock;
    private final double waiterWindow;
    private final DarkSeats seats = new DarkSeats(); // touched on the outbox thread only
    private volatile ScheduledFuture<?> schedule;

    /**
     * Reads committed state through {@code actor}, decides and broadcasts on {@code outbox}'s thread,
     * asks {@code registry} who has a live waiter (seen within {@code waiterWindow} seconds, the
     * {@code --waiter-liveness-window}); time is {@code clock}'s.
     */
    public DarkSeatMonitor(CoordinationActor actor, Outbox outbox, SessionRegistry registry, HubFrames frames,
            HubMetrics metrics, Clock clock, double waiterWindow) {
        this.actor = actor;
        this.outbox = outbox;
        this.registry = registry;
        this.frames = frames;
        this.metrics = metrics;
        this.clock = clock;
        this.waiterWindow = waiterWindow;
    }

    /** Starts the periodic checks on the outbox thread. */
    public void start() {
        schedule = outbox.executor().scheduleAtFixedRate(() -> check().exceptionally(failure -> null),
                PERIOD_SECONDS, PERIOD_SECONDS, TimeUnit.SECONDS);
    }

    /**
     * One check now: reads committed state through the writer, then decides and broadcasts on
     * the outbox thread. A check the writer refuses (busy, stopping) is skipped and counted in
     * {@code synapse_unanswered_submissions_refused_total}; any other failure is logged once and
     * counted as a fault; the next check runs as usual either way.
     *
     * @return the alerts this check broadcast
     */
    public CompletableFuture<List<DarkSeats.Alert>> check() {
        double now = clock.nowSeconds();
        return actor.read(DarkSeatMonitor::duties)
                .thenApplyAsync(duties -> decide(now, responsibilities(duties, now)), outbox.executor())
                .whenComplete((alerts, failure) -> {
                    if (failure == null || outbox.executor().isShuttingDown()) {
                        return; // stopping: nothing left to alert
                    }
                    if (unwrap(failure) instanceof ActorRefusedException refused) {
                        metrics.unansweredRefusals.incrementAndGet();
                        LOG.debug("dark-seat check skipped: {}", refused.refusal().reason());
                    } else {
                        metrics.faults.incrementAndGet();
                        LOG.error("fault in the dark-seat check", failure);
                    }
                });
    }

    private static Throwable unwrap(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && (c instanceof CompletionException || c instanceof ExecutionException)) {
            c = c.getCause();
        }
        return c;
    }

    /** What the writer hands over: the live claims (unsorted) and the open suggested tasks (owner, task). */
    private record Duties(List<Claim> claims, List<String[]> tasks) {
    }

    /**
     * One pass on the writer: references only, no sort, no expiry run, so it pauses only for the
     * copy of the live claims and of the board's index of open suggested tasks (not every task
     * and note, as a board image would).
     */
    private static Duties duties(CoordinationState s) {
        List<BoardTask> open = s.board().openSuggested();
        List<String[]> tasks = new ArrayList<>(open.size());
        for (BoardTask t : open) {
            tasks.add(new String[] {t.suggestedOwner().strip(), t.taskId()});
        }
        return new Duties(s.claims().liveUnsorted(), tasks);
    }

    /** Identity to its unexpired claims and open suggested tasks, sorted; on the outbox thread. */
    private static Map<String, DarkSeats.Seat> responsibilities(Duties d, double now) {
        Map<String, TreeSet<String>> claims = new TreeMap<>();
        Map<String, TreeSet<String>> tasks = new TreeMap<>();
        for (Claim c : d.claims()) {
            if (c.leaseExpiresAt() > now) {
                claims.computeIfAbsent(c.owner(), k -> new TreeSet<>()).add(c.taskId());
            }
        }
        for (String[] t : d.tasks()) {
            tasks.computeIfAbsent(t[0], k -> new TreeSet<>()).add(t[1]);
        }
        Set<String> identities = new TreeSet<>(claims.keySet());
        identities.addAll(tasks.keySet());
        Map<String, DarkSeats.Seat> out = new TreeMap<>();
        for (String identity : identities) {
            out.put(identity, new DarkSeats.Seat(new ArrayList<>(claims.getOrDefault(identity, new TreeSet<>())),
                    new ArrayList<>(tasks.getOrDefault(identity, new TreeSet<>()))));
        }
        return out;
    }

    private List<DarkSeats.Alert> decide(double now, Map<String, DarkSeats.Seat> responsible) {
        Set<String> online = new HashSet<>(registry.online());
        Map<String, Double> seen = registry.lastSeen();
        List<DarkSeats.Alert> alerts = seats.check(now, responsible, id -> LiveWaiters.has(id, now, waiterWindow, online, seen));
        for (DarkSeats.Alert a : alerts) {
            outbox.broadcast(frames.write(frame(a, now)), null);
        }
        return alerts;
    }

    private ObjectNode frame(DarkSeats.Alert a, double now) {
        double missing = Math.round(a.missingForSeconds() * 1000.0) / 1000.0;
        List<String> what = new ArrayList<>(a.seat().claims());
        for (String t : a.seat().tasks()) {
            if (!what.contains(t)) {
                what.add(t);
            }
        }
        ObjectNode f = frames.envelope("all", "dark_seat_alert", a.identity() + " has no live waiter for "
                + String.join(", ", what) + " (" + PythonFloatFormat.format(missing) + " s)", now);
        f.put("identity", a.identity());
        HubFrames.putStrings(f, "claims", a.seat().claims());
        HubFrames.putStrings(f, "tasks", a.seat().tasks());
        HubFrames.putFloat(f, "missing_for_seconds", missing);
        f.put("remedy", "connect a waiter as " + a.identity() + "-rx (heartbeat at least every "
                + InboundPipeline.seconds(waiterWindow) + " s), or release: synapse-hub release TASK --name " + a.identity());
        return f;
    }

    @Override
    public void close() {
        ScheduledFuture<?> s = schedule;
        if (s != null) {
            s.cancel(false);
        }
    }
}
