package dev.synapsehub.federation.follow;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.AuditJournal;
import dev.synapsehub.federation.link.PeerLink;
import dev.synapsehub.net.wire.CanonicalJson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.DoubleSupplier;

/**
 * Follows one peer's log on a thread of its own (a slow or dead peer delays no other): each poll
 * pulls pages after the cursor within its budget, checks them, folds them, and commits cursor,
 * fold and mirror together only when every page of the poll checked out. A failed poll changes
 * nothing but the peer's error and backoff (the last observation stays: fails closed).
 *
 * <p>Checks (contract §11.1): a reply within the bound; {@code log_end_seq} known; no more
 * events than the page's {@code limit}; events contiguous from the requested cursor + 1; each
 * event well formed. Each poll after the first
 * re-reads the last event it folded (one event of overlap) and compares its fingerprint: the
 * same content is idempotent, different content at the same seq quarantines the peer, journals
 * {@code multihub_equivocation}, and stops following it until an operator recovery. A peer whose
 * log ends before the cursor (restarted with a shorter log) fails its polls until it catches up
 * (then the overlap check decides) or an operator recovers it.
 *
 * <p>One page is requested ahead: the next request leaves before the current page is checked
 * and folded, so the peer reads and writes it meanwhile; a page that fails its checks fails the
 * poll, and the early reply is never read.
 */
final class PeerFollower {
    private static final Logger LOG = LoggerFactory.getLogger(PeerFollower.class);
    private static final int MAX_PAGE = 5000;

    private final WatchPeer peer;
    private final LinkFor links;
    /** The link of the last poll (status), null before the first. */
    private volatile PeerLink link;
    private final WatchSettings settings;
    private final AdvisoryFold fold;
    private final Mirror mirror;
    private final AuditJournal audit;
    private final String localHubId;
    private final ScheduledExecutorService thread;
    private final DoubleSupplier clock;
    private final WatchMetrics metrics;
    private int failures;
    private String lastLogged;

    /** The link this follower polls through (status: round trip, certificate expiry). */
    PeerLink link() {
        return link;
    }

    /**
     * The link to poll through, asked before each request: the routes in force may have changed
     * (a peers file edited), or may not be known (a peers file that does not validate: the poll
     * fails as a transport failure, the cursor and last observation kept).
     */
    interface LinkFor {
        PeerLink get() throws IOException;
    }

    PeerFollower(WatchPeer peer, LinkFor links, WatchSettings settings, AdvisoryFold fold, Mirror mirror,
                 AuditJournal audit, String localHubId, ScheduledExecutorService thread, DoubleSupplier clock,
                 WatchMetrics metrics) {
        this.peer = peer;
        this.links = links;
        this.settings = settings;
        this.fold = fold;
        this.mirror = mirror;
        this.audit = audit;
        this.localHubId = localHubId;
        this.thread = thread;
        this.clock = clock;
        this.metrics = metrics;
    }

    /** A check that failed: the poll commits nothing. {@code kind} labels it on {@code /metrics}. */
    static final class PollFailure extends Exception {
        final String kind;

        PollFailure(String kind, String message) {
            super(message);
            this.kind = kind;
        }
    }

    /** Schedules the first poll now. */
    void start() {
        schedule(0);
    }

    private void schedule(long delayMillis) {
        if (!thread.isShutdown()) {
            thread.schedule(this::pollSafely, delayMillis, TimeUnit.MILLISECONDS);
        }
    }

    private void pollSafely() {
        try {
            schedule(poll());
        } catch (RuntimeException fault) {
            LOG.error("multihub watch: poll of peer '{}' hit an unexpected fault", peer.label(), fault);
            metrics.pollFailures.incrementAndGet();
            metrics.observationErrors.increment(peer.label(), "fault");
            schedule(backoff(++failures));
        }
    }

    /** One extra poll now (after a recovery); the regular schedule goes on. */
    void pollOnce() {
        try {
            poll();
        } catch (RuntimeException fault) {
            LOG.error("multihub watch: poll of peer '{}' hit an unexpected fault", peer.label(), fault);
        }
    }

    /** One poll; returns the delay before the next. */
    long poll() {
        PeerView view = fold.peer(peer.label());
        long interval = settings.interval().toMillis();
        if (view.quarantined()) {
            return interval;
        }
        long pos = view.cursor();
        String accepted;
        try {
            accepted = mirror.fingerprint(peer.label());
        } catch (Mirror.MirrorException e) {
            return failed(view, "mirror", e.getMessage());
        }
        boolean overlap = pos > 0 && accepted != null;
        PollDelta delta = new PollDelta();
        long logEnd = view.logEnd();
        String fingerprint = accepted;
        LogPage newestPage = null; // the page of the last event folded: its fingerprint is the new cursor's
        LogPage.Event newest = null;
        long deadline = System.nanoTime() + settings.budget().time().toNanos();
        int pages = 0;
        long events = 0;
        boolean caughtUp = false;
        try {
            long after = overlap ? pos - 1 : pos;
            int asked = (int) Math.min(MAX_PAGE, settings.budget().events() + (overlap ? 1 : 0));
            CompletableFuture<LogPage> pending = request(after, asked);
            while (true) {
                LogPage snapshot = pending.get(settings.replyTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
                pending = null;
                List<LogPage.Event> list = snapshot.events();
                if (!snapshot.logEndKnown()) {
                    throw new PollFailure("no_log_end", "the peer served no log end (log_end_seq null: it refused this hub, or keeps"
                            + " no journal)");
                }
                if (list == null) {
                    throw new PollFailure("malformed", "malformed snapshot: 'events' is not a list");
                }
                if (list.size() > asked) { // a peer ignoring the page size could make one poll unbounded
                    throw new PollFailure("oversized_page", "oversized page: the peer served " + list.size() + " events where this hub"
                            + " asked for at most " + asked + " (limit); nothing of this poll is folded");
                }
                logEnd = snapshot.logEnd();
                if (list.isEmpty()) {
                    if (logEnd < pos || overlap) {
                        throw new PollFailure("log_behind_cursor", "the peer's log ends at seq " + logEnd + ", behind this hub's cursor "
                                + pos + " (restarted with a shorter log?)"); // failed() adds "keeping the last observation"
                    }
                    caughtUp = true;
                    break;
                }
                // Ask for the next page before checking and folding this one, so the peer reads
                // and writes it meanwhile. Taken on trust from the unchecked page: should this
                // page fail its checks, the poll fails and the early reply is never read.
                LogPage.Event tail = list.get(list.size() - 1);
                long tailSeq = tail.seqIntegral ? tail.seq : -1;
                long eventsAfter = events + (list.size() > (overlap ? 1 : 0) ? list.size() : 0); // as counted below
                int nextAsked = (int) Math.min(MAX_PAGE, settings.budget().events() - eventsAfter);
                if (tailSeq > after && tailSeq < logEnd && pages + 1 < settings.budget().pages() && nextAsked > 0
                        && System.nanoTime() <= deadline) {
                    pending = request(tailSeq, nextAsked);
                }
                int from = 0;
                if (overlap) { // the poll's first event is the last one folded (after == pos - 1)
                    LogPage.Event again = list.get(0);
                    long seq = checked(again, after + 1);
                    String live = snapshot.fingerprint(again);
                    if (!live.equals(accepted)) {
                        quarantine(view, seq, accepted, live);
                        return interval;
                    }
                    overlap = false; // the same content again: idempotent
                    from = 1;
                }
                if (from < list.size()) {
                    pos = foldPage(list, from, after + 1 + from, delta);
                    newestPage = snapshot;
                    newest = list.get(list.size() - 1);
                    events += list.size();
                }
                pages++;
                if (pos >= logEnd) {
                    caughtUp = true;
                    break;
                }
                if (pending == null) {
                    break; // a budget is spent: resumable, commit this step and continue at once
                }
                after = pos;
                asked = nextAsked;
            }
            if (newest != null) { // once a poll, not once a page: only the last one is kept
                fingerprint = newestPage.fingerprint(newest);
            }
        } catch (PollFailure e) {
            return failed(view, e.kind, e.getMessage());
        } catch (IOException e) { // an event's own text did not parse again: cannot happen for a page that parsed
            return failed(view, "malformed", "malformed event: " + e.getMessage());
        } catch (ExecutionException e) {
            boolean timedOut = e.getCause() instanceof TimeoutException;
            String message = e.getCause() == null ? e.toString() : e.getCause().getMessage();
            // the error our serving side answers when retention deleted the rows after the cursor (LogServer)
            boolean compacted = message != null
                    && message.contains("answered error: " + dev.synapsehub.federation.serve.LogServer.COMPACTED + ":");
            return failed(view, timedOut ? "timeout" : compacted ? "compacted" : "transport", message);
        } catch (TimeoutException e) {
            return failed(view, "timeout", "no reply within " + settings.replyTimeout().toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return interval;
        }
        Map<String, ObservedClaim> claims = new HashMap<>(view.claims());
        List<ObservedClaim> upserts = new java.util.ArrayList<>();
        List<String> releases = new java.util.ArrayList<>();
        delta.claims(peer.label()).forEach((task, claim) -> {
            if (claim == null) {
                claims.remove(task);
                releases.add(task);
            } else {
                claims.put(task, claim);
                upserts.add(claim);
            }
        });
        PeerView next = new PeerView(peer.label(), pos, logEnd, clock.getAsDouble(), null, skew(view), null,
                view.generation(), claims);
        try {
            mirror.commit(next, fingerprint, upserts, releases);
        } catch (Mirror.MirrorException e) {
            return failed(view, "mirror", e.getMessage());
        }
        fold.put(next);
        if (caughtUp) { // a step cut short by a budget is not a complete observation (a heal needs one)
            fold.markComplete(peer.label(), next.lastSuccess());
        }
        metrics.eventsFolded.addAndGet(events);
        metrics.polls.incrementAndGet();
        if (failures > 0 || lastLogged != null) {
            LOG.info("multihub watch: peer '{}' reachable again; cursor {}", peer.label(), pos);
        }
        failures = 0;
        lastLogged = null;
        return caughtUp ? interval : 0;
    }

    /** Sends one {@code multihub_log_request} for up to {@code limit} events after {@code after}. */
    private CompletableFuture<LogPage> request(long after, int limit) {
        ObjectNode request = JsonNodeFactory.instance.objectNode();
        request.put("type", "multihub_log_request");
        request.put("target", "all");
        request.put("after_seq", after);
        request.put("limit", limit);
        PeerLink l;
        try {
            l = links.get();
        } catch (IOException refused) {
            return CompletableFuture.failedFuture(refused);
        }
        link = l;
        return l.request(request, "multihub_log_snapshot", LogPage.DECODER, settings.replyTimeout());
    }

    /**
     * Checks and folds {@code list} from index {@code from}, whose seq must be {@code expected};
     * returns the last seq folded. A method of its own so the JIT compiles this per-event loop
     * small, rather than the whole of {@link #poll} on stack replacement, again and again.
     */
    static long foldPage(List<LogPage.Event> list, int from, long expected, PollDelta delta) throws PollFailure {
        long seq = expected - 1;
        for (int i = from, n = list.size(); i < n; i++) {
            LogPage.Event e = list.get(i);
            seq = checked(e, seq + 1);
            delta.fold(e);
        }
        return seq;
    }

    /** The event's seq, after checking it is the expected one and well formed. */
    static long checked(LogPage.Event e, long expected) throws PollFailure {
        if (!e.seqIntegral) {
            throw new PollFailure("malformed", "malformed event: no integer seq (expected seq " + expected + ")");
        }
        if (e.seq != expected) {
            throw new PollFailure("gap", "events not contiguous: expected seq " + expected + ", got " + e.seq);
        }
        if (!e.tsNumber || e.kind == null || e.payload == LogPage.PayloadShape.OTHER) {
            throw new PollFailure("malformed", "malformed event at seq " + expected + ": needs ts number, kind string, payload object");
        }
        return expected;
    }

    /** SHA-256 of the event's canonical JSON (sorted keys, compact), as {@code sha256:<hex>}. */
    static String fingerprint(JsonNode event) {
        ObjectNode canonical = JsonNodeFactory.instance.objectNode();
        canonical.set("seq", event.get("seq"));
        canonical.set("ts", event.get("ts"));
        canonical.set("kind", event.get("kind"));
        canonical.set("payload", event.get("payload") == null ? JsonNodeFactory.instance.nullNode() : event.get("payload"));
        return "sha256:" + AuditJournal.sha256(CanonicalJson.write(canonical, true));
    }

    private void quarantine(PeerView view, long seq, String accepted, String conflicting) {
        double now = clock.getAsDouble();
        String why = "equivocation at seq " + seq + ": accepted " + accepted + ", now " + conflicting;
        PeerView q = new PeerView(view.peer(), view.cursor(), view.logEnd(), view.lastSuccess(), why, skew(view), why,
                view.generation(), view.claims());
        try {
            mirror.commit(q, accepted, List.of(), List.of());
        } catch (Mirror.MirrorException e) {
            LOG.error("multihub watch: cannot persist the quarantine of '{}': {}", peer.label(), e.getMessage());
        }
        metrics.equivocations.incrementAndGet();
        metrics.observationErrors.increment(peer.label(), "equivocation");
        LOG.error("multihub watch: peer '{}' served different content at seq {} than before; quarantined until "
                + "an operator recovers it (synapse-hub federation recover {})", peer.label(), seq, peer.label());
        ObjectNode p = AuditJournal.payload();
        AuditJournal.putIdentity(p, "peer_id", peer.label());
        AuditJournal.putIdentity(p, "observer_id", localHubId);
        p.put("seq", seq);
        p.put("accepted_fingerprint", accepted);
        p.put("conflicting_fingerprint", conflicting);
        p.put("detected_at", now);
        p.put("status", "quarantined");
        audit.record("multihub_equivocation", p).join(); // journaled before anyone sees the quarantine
        fold.put(q);
    }

    private long failed(PeerView view, String kind, String error) {
        failures++;
        metrics.pollFailures.incrementAndGet();
        metrics.observationErrors.increment(peer.label(), kind);
        PeerView failed = view.failed(error, skew(view));
        fold.put(failed);
        if (!error.equals(lastLogged)) {
            try { // once per distinct error, as logged: a peer down for a day is not a write per poll
                mirror.failed(failed);
            } catch (Mirror.MirrorException e) {
                LOG.warn("multihub watch: {}", e.getMessage());
            }
            LOG.warn("multihub watch: poll of peer '{}' failed: {}; keeping the last observation", peer.label(), error);
            lastLogged = error;
        }
        return backoff(failures);
    }

    private long backoff(int failed) {
        long interval = settings.interval().toMillis();
        long cap = Math.max(interval, 300_000);
        return Math.min(cap, interval << Math.min(failed - 1, 6));
    }

    private double skew(PeerView view) {
        PeerLink l = link;
        PeerLink.Welcome w = l == null ? null : l.welcome();
        return w == null ? view.clockSkewSeconds() : w.clockSkewSeconds();
    }
}
