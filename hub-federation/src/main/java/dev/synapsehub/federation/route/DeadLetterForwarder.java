package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.event.DeadLetterEscalationEvent;
import dev.synapsehub.core.messaging.AddressMatcher;
import dev.synapsehub.federation.AuditJournal;
import dev.synapsehub.federation.LabelledCounters;
import dev.synapsehub.federation.link.PeerLink;
import dev.synapsehub.federation.link.PeerLinks;
import dev.synapsehub.net.extension.HubServices;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The sending side of {@code dead_letter_forwarding} (contract §11.5, F5, F6): when this hub
 * escalates its dead letters to a recipient ({@code --dead-letter-escalation N}, every N-th
 * directed message nobody received) and every part of the target belongs to a namespace that
 * another hub owns ({@code --namespace-owner}, resolving {@code remote}), the owner is told over
 * the operator relay route to it ({@code --relay-peer HUB_ID=URI}): the warm link with this hub's
 * client certificate and the route's pin, registered as this hub's {@code --hub-id}. The frame is
 * {@code dead_letter_forwarding {forwarding: {target, count, origin_hub_id, owner_hub_id}}},
 * {@code sender} and {@code origin_hub_id} this hub's id, {@code count} the escalation's count.
 *
 * <p>The owner never answers the report (fire-and-forget), and refuses one silently (F5: no
 * grant, no certificate, not its namespace): this side cannot tell a refusal from an acceptance,
 * so neither is retried. What it can tell is that the owner read it: a small request sent right
 * after it on the same connection ({@code channel_list_request}, the smallest reply a v2 hub
 * gives) is answered only after the report was handled. Both go out together
 * ({@link PeerLink#sendConfirmed}): the link is shared with claims, relays and log pulls, and an
 * answer on another connection would prove nothing. A report is then journaled here as the
 * audit-only {@code dead_letter_forwarding} record {@code direction: "out"}. An {@code error}
 * answer (an owner without the verb) is not retried either. A connection that fails, or no
 * answer within the route's bound, is retried after 1, 2 and 4 s ({@value #MAX_ATTEMPTS} attempts
 * in all), then given up (logged, counted); a retry after a lost answer may repeat a report the
 * owner already read.
 *
 * <p>Bounds: per owner, reports wait in a queue of at most {@value #MAX_WAITING} targets, where a
 * newer escalation of a target replaces the one still waiting (counts only grow, so the newest
 * says it all); beyond, a new target is dropped and counted. At most
 * {@link DeadLetterForwardingServer#MAX_REPORTS_PER_WINDOW} reports go to one owner per
 * {@link DeadLetterForwardingServer#WINDOW_SECONDS} s (what an owner of ours accepts); the rest
 * wait for the next window. One thread of its own sends, so a connect that hangs delays no claim.
 */
public final class DeadLetterForwarder implements AutoCloseable {
    /** Targets waiting per owner at most. */
    static final int MAX_WAITING = 256;
    /** Attempts per report at most (the first and three retries). */
    static final int MAX_ATTEMPTS = 4;
    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterForwarder.class);

    private final HubServices hub;
    private final OwnershipResolver resolver;
    private final ForwardSettings routes;
    private final dev.synapsehub.federation.trust.PeerRouteSource source;
    private final PeerLinks links;
    private final AuditJournal audit;
    /** Times the attempts (and the retries' back-off); the attempts themselves run on {@link #sends}. */
    private final ScheduledExecutorService sender;
    /**
     * Runs the attempts, a thread per owner with reports to send (each owner's drain runs once at a
     * time): an attempt blocks while its link connects (up to 10 s), so an owner whose host
     * never answers would otherwise delay every other owner's reports by that much per attempt.
     */
    private final java.util.concurrent.ExecutorService sends = ClaimForwarder.connector("synapse-dead-letter-sending");
    private final Map<String, Outlet> outlets = new HashMap<>();
    private final LogBudget dropLog = new LogBudget(LOG, DeadLetterForwardingServer.MAX_LOG_LINES_PER_WINDOW,
            DeadLetterForwardingServer.WINDOW_SECONDS, "dropped dead-letter reports");
    private final LabelledCounters outcomes = new LabelledCounters("synapse_dead_letter_forwardings_total",
            "Dead-letter reports to the owning hub, by owner and outcome: sent (the owner read it), answered_error "
                    + "(the owner answered an error), retried (an attempt failed; another follows), transport_failure (given "
                    + "up after the last attempt), dropped (queue full), lead_lost (a mesh node lost the lead before sending it).",
            "owner", "outcome");

    /** On a mesh node: whether this node leads now (only the leader holds the cluster's links). */
    private volatile java.util.function.BooleanSupplier mayLink = () -> true;

    /**
     * On a mesh node: a report is sent only while {@code leads} holds; one waiting when this node
     * loses the lead is given up (logged, counted {@code lead_lost}), never sent from a follower,
     * whose link would take the cluster's hub id at the owner from the new leader. Call before use.
     */
    public DeadLetterForwarder onlyWhile(java.util.function.BooleanSupplier leads) {
        this.mayLink = leads;
        return this;
    }

    /** One report waiting: the escalation's count and the attempts made so far. */
    private record Report(long count, int attempts) {
    }

    /** What waits for one owner, and its send window; guarded by itself. */
    private static final class Outlet {
        final ClaimRoute route;
        final LinkedHashMap<String, Report> waiting = new LinkedHashMap<>();
        boolean draining;
        long windowStart = Long.MIN_VALUE;
        int sentInWindow;

        Outlet(ClaimRoute route) {
            this.route = route;
        }
    }

    public DeadLetterForwarder(HubServices hub, OwnershipResolver resolver, ForwardSettings routes, PeerLinks links,
                               AuditJournal audit, ScheduledExecutorService sender) {
        this(hub, resolver, routes, links, audit, sender, RouteLookup.fixedRelays(routes));
    }

    /**
     * {@code source}: the relay routes in force, asked before each attempt (a peers file); while
     * they cannot be known an attempt fails as a transport failure and is retried.
     */
    public DeadLetterForwarder(HubServices hub, OwnershipResolver resolver, ForwardSettings routes, PeerLinks links,
                               AuditJournal audit, ScheduledExecutorService sender,
                               dev.synapsehub.federation.trust.PeerRouteSource source) {
        this.source = source;
        this.hub = hub;
        this.resolver = resolver;
        this.routes = routes;
        this.links = links;
        this.audit = audit;
        this.sender = sender;
    }

    /** A committed escalation (any thread, never blocks): queued for the owner when the target is another hub's. */
    public void escalated(DeadLetterEscalationEvent escalation) {
        if (routes.routes().isEmpty() && !source.reloads()) {
            return;
        }
        ClaimRoute route = routeFor(escalation.target());
        if (route == null) {
            return;
        }
        Outlet o;
        synchronized (outlets) {
            o = outlets.computeIfAbsent(route.hubId(), k -> new Outlet(route));
        }
        boolean start;
        synchronized (o) {
            if (!o.waiting.containsKey(escalation.target()) && o.waiting.size() >= MAX_WAITING) {
                outcomes.increment(route.hubId(), "dropped");
                // the committing thread: a flood of escalations costs it a counter, not a log write each
                dropLog.warn(hub.clock().nowSeconds(), "Dead-letter report for '{}' to owner {} dropped: {} reports "
                        + "already wait", escalation.target(), route.hubId(), MAX_WAITING);
                return;
            }
            o.waiting.remove(escalation.target()); // re-queued at the end with the newer count
            o.waiting.put(escalation.target(), new Report(escalation.count(), 0));
            start = !o.draining;
            o.draining = true;
        }
        if (start) {
            schedule(o, 0);
        }
    }

    /**
     * The relay route to the one hub that owns every part of {@code target}, or null: a part in a
     * local, ungoverned or partitioned namespace, parts owned by two hubs, or no route.
     */
    public ClaimRoute routeFor(String target) {
        double now = hub.clock().nowSeconds();
        String owner = null;
        for (String part : AddressMatcher.parts(target)) {
            Resolution r = resolver.resolve(part, now);
            if (r.ownership() != Ownership.REMOTE || owner != null && !owner.equals(r.ownerHubId())) {
                return null;
            }
            owner = r.ownerHubId();
        }
        if (owner == null) {
            return null;
        }
        try {
            dev.synapsehub.federation.trust.PeerRoute to = source.current().relay().get(owner);
            return to == null ? null : new ClaimRoute(owner, to.uri(), to.pin());
        } catch (java.io.IOException invalid) {
            // queued all the same: each attempt asks again, and fails (retried) while the routes are unknown
            return new ClaimRoute(owner, null, null);
        }
    }

    private void schedule(Outlet o, long delayMillis) {
        try {
            sender.schedule(() -> {
                try {
                    sends.execute(() -> drain(o));
                } catch (RejectedExecutionException stopping) { // the hub is stopping: what waits is not sent
                    stopDraining(o);
                }
            }, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) { // the hub is stopping: what waits is not sent
            stopDraining(o);
        }
    }

    /** No drain of {@code o} runs until its next report starts one. */
    private static void stopDraining(Outlet o) {
        synchronized (o) {
            o.draining = false;
        }
    }

    /** Sends what waits for {@code o}, oldest first, until it is empty, its window is full, or a send failed. */
    private void drain(Outlet o) {
        try {
            while (true) {
                String target;
                Report report;
                synchronized (o) {
                    long now = System.nanoTime();
                    long window = (long) (DeadLetterForwardingServer.WINDOW_SECONDS * 1e9);
                    if (o.windowStart == Long.MIN_VALUE || now - o.windowStart >= window) {
                        o.windowStart = now;
                        o.sentInWindow = 0;
                    }
                    if (o.waiting.isEmpty()) {
                        o.draining = false;
                        return;
                    }
                    if (o.sentInWindow >= DeadLetterForwardingServer.MAX_REPORTS_PER_WINDOW) {
                        schedule(o, TimeUnit.NANOSECONDS.toMillis(window - (now - o.windowStart)) + 1);
                        return;
                    }
                    Iterator<Map.Entry<String, Report>> first = o.waiting.entrySet().iterator();
                    Map.Entry<String, Report> e = first.next();
                    first.remove();
                    target = e.getKey();
                    report = e.getValue();
                    o.sentInWindow++;
                }
                if (!send(o, target, report)) {
                    return; // a retry is scheduled
                }
            }
        } catch (RuntimeException fault) { // nothing else would see it: the scheduled future is dropped
            hub.metrics().faults.incrementAndGet();
            LOG.error("Dead-letter forwarding to owner {} failed inside this hub", o.route.hubId(), fault);
            stopDraining(o);
        }
    }

    /** One attempt; false when it failed and a retry of {@code o} was scheduled. */
    private boolean send(Outlet o, String target, Report report) {
        ClaimRoute route = o.route;
        if (!mayLink.getAsBoolean()) {
            outcomes.increment(route.hubId(), "lead_lost");
            LOG.warn("Dead-letter report for '{}' ({} messages) to owner {} given up: this node no longer leads the "
                    + "cluster (the next escalation of the target carries the higher count)", target, report.count(),
                    route.hubId());
            return true;
        }
        ObjectNode frame = JsonNodeFactory.instance.objectNode();
        frame.put("type", DeadLetterForwardingServer.TYPE);
        frame.put("target", route.hubId());
        ObjectNode forwarding = frame.putObject("forwarding");
        forwarding.put("target", target);
        forwarding.put("count", report.count());
        forwarding.put("origin_hub_id", hub.hubId());
        forwarding.put("owner_hub_id", route.hubId());
        ObjectNode barrier = JsonNodeFactory.instance.objectNode();
        barrier.put("type", "channel_list_request");
        Duration bound = routes.bound();
        Throwable failure;
        try {
            dev.synapsehub.federation.trust.PeerRoute to = source.current().relay().get(route.hubId());
            if (to == null) {
                throw new java.io.IOException("no relay route to owner " + route.hubId() + " any more");
            }
            ClaimRoute live = new ClaimRoute(to.name(), to.uri(), to.pin());
            PeerLink link = links.link(live.hubId(), live.uri(), routes.tlsFor(live), to.token());
            link.sendConfirmed(frame, barrier, "channel_list", bound).get(bound.toMillis() + 1000, TimeUnit.MILLISECONDS);
            failure = null;
        } catch (java.io.IOException e) {
            failure = e;
        } catch (ExecutionException e) {
            failure = e.getCause() != null ? e.getCause() : e;
        } catch (TimeoutException e) {
            failure = e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = e;
        }
        if (!mayLink.getAsBoolean()) {
            // the lead was lost during the attempt, perhaps after the leadership listener dropped the links:
            // a link opened now would keep the cluster's hub id at the owner from the new leader
            links.retain(java.util.Set.of());
        }
        if (failure == null) {
            outcomes.increment(route.hubId(), "sent");
            journal(target, report.count(), route.hubId());
            return true;
        }
        if (failure instanceof PeerLink.Answered) {
            outcomes.increment(route.hubId(), "answered_error");
            LOG.warn("Owner {} answered the dead-letter report for '{}' with an error, not retried: {}", route.hubId(),
                    target, failure.getMessage());
            return true;
        }
        int attempts = report.attempts() + 1;
        if (attempts >= MAX_ATTEMPTS || failure instanceof InterruptedException) {
            outcomes.increment(route.hubId(), "transport_failure");
            LOG.warn("Dead-letter report for '{}' ({} messages) to owner {} given up after {} attempts: {}", target,
                    report.count(), route.hubId(), attempts, failure.toString());
            return true;
        }
        outcomes.increment(route.hubId(), "retried");
        LOG.info("Dead-letter report for '{}' to owner {} failed (attempt {} of {}), retried: {}", target, route.hubId(),
                attempts, MAX_ATTEMPTS, failure.toString());
        synchronized (o) {
            o.sentInWindow--; // it did not reach the owner
            o.waiting.putIfAbsent(target, new Report(report.count(), attempts)); // a newer escalation wins
        }
        schedule(o, 1000L << (attempts - 1));
        return false;
    }

    /** The outbound audit record ({@code direction: "out"}, contract §12.4); the owner journals its own. */
    private void journal(String target, long count, String owner) {
        ObjectNode p = AuditJournal.payload();
        p.put("target", target).put("count", count).put("origin_hub_id", hub.hubId())
                .put("owner_hub_id", owner).put("direction", "out");
        audit.record(DeadLetterForwardingServer.TYPE, p).whenComplete((committed, failure) -> {
            if (failure != null || !Boolean.TRUE.equals(committed)) {
                hub.metrics().faults.incrementAndGet();
                LOG.warn("The outbound dead_letter_forwarding audit for '{}' was not journaled: {}", target,
                        failure != null ? failure.toString() : "refused by the writer");
            }
        });
    }

    /** Reports to {@code owner} with {@code outcome} (tests). */
    public long outcomes(String owner, String outcome) {
        return outcomes.get(owner, outcome);
    }

    /** The Prometheus samples of dead-letter reports. */
    public void appendMetrics(StringBuilder out) {
        outcomes.appendTo(out);
    }

    @Override
    public void close() {
        sender.shutdownNow();
        sends.shutdownNow();
    }
}
