package dev.synapsehub.net.cockpit;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.board.BoardSnapshot;
import dev.synapsehub.core.board.BoardStatus;
import dev.synapsehub.core.board.BoardTask;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.messaging.DeadLetter;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The cockpit's JSON views, filtered and paged on the server so that a page never carries a
 * fleet's whole state. The writer only copies references out (a claim list, the board, the
 * mailbox counts); filtering, sorting and rendering run on the cockpit thread.
 */
final class CockpitViews {
    /** How long a view waits for the writer before it is answered 503. */
    static final long WRITER_WAIT_MILLIS = 2_000;

    private final CockpitSources hub;
    private final CockpitFeed feed;
    private final Executor cockpit;

    private final ClusterWatch cluster;
    /** Done once the feed has the journal's seq at start: the views that show it wait for it. */
    private final CompletableFuture<Void> seeded;

    CockpitViews(CockpitSources hub, CockpitFeed feed, Executor cockpit, ClusterWatch cluster,
                 CompletableFuture<Void> seeded) {
        this.hub = hub;
        this.feed = feed;
        this.seeded = seeded;
        this.cockpit = cockpit;
        this.cluster = cluster;
    }

    /** Federation peers and mesh nodes as the extensions report them now ({@code panels}: empty on a plain hub). */
    CompletableFuture<ObjectNode> cluster() {
        return CompletableFuture.supplyAsync(() -> cluster.view(hub.clock().nowSeconds()), cockpit);
    }

    /** The claims watched peers assert (advisory, they grant nothing here), filtered and paged. */
    CompletableFuture<ObjectNode> observed(ViewQuery q) {
        return CompletableFuture.supplyAsync(() -> {
            ObjectNode rows = hub.extensions().cockpitRows("observed", q::matches, q.offset(), q.limit(),
                    hub.clock().nowSeconds());
            if (rows == null) { // not federated: an empty list, not an error
                rows = page(q, 0, 0, List.of(), "claims");
                rows.put("advisory", true);
            }
            rows.put("filter", q.q());
            return rows;
        }, cockpit);
    }

    /**
     * Identity to pending directed messages, or null on a hub without a journal: it has no
     * mailbox (no seq, no ack), so the core's counts never drain and {@code who} says null too.
     */
    private Map<String, Integer> mailboxes(dev.synapsehub.core.state.CoordinationState s) {
        return hub.journaled() ? s.messaging().mailboxPending() : null;
    }

    /** Hub identity, counts and the feed's own accounting. */
    CompletableFuture<ObjectNode> overview() {
        double now = hub.clock().nowSeconds();
        record Counts(int claims, int tasks, int deadLetters, Integer backlog) {
        }
        return seeded.thenCompose(started -> read(s -> {
            Map<String, Integer> pending = mailboxes(s);
            return new Counts(liveClaims(s, now), s.board().taskCount(), s.messaging().deadLetters(now).size(),
                    pending == null ? null : pending.values().stream().mapToInt(Integer::intValue).sum());
        }))
                .thenApplyAsync(c -> {
                    ObjectNode o = FeedEvents.JSON.objectNode();
                    o.put("hub_id", hub.hubId());
                    o.put("hub_version", hub.hubVersion());
                    o.put("now", now);
                    o.put("started_at", hub.startedAt());
                    o.put("secured", hub.secured());
                    o.put("journaled", hub.journaled());
                    o.put("agents_online", hub.registry().online().size());
                    o.put("agents_known", hub.registry().lastSeen().size());
                    o.put("live_claims", c.claims());
                    o.put("board_tasks", c.tasks());
                    o.put("dead_letter_targets", c.deadLetters());
                    o.put("mailbox_backlog", c.backlog());
                    cluster.kinds(now).forEach(o.putArray("cluster")::add);
                    ObjectNode f = o.putObject("feed");
                    f.put("last_seq", feed.lastSeq());
                    f.put("events_seen", feed.eventsSeen.get());
                    f.put("batches_dropped", feed.batchesDropped.get());
                    f.put("streams", feed.streamCount());
                    f.put("streams_dropped", feed.streamsDropped.get());
                    f.put("states_replaced", feed.statesReplaced.get());
                    return o;
                }, cockpit);
    }

    /** Agents the hub remembers (online or not), with last-seen and mailbox backlog. */
    CompletableFuture<ObjectNode> presence(ViewQuery q) {
        return read(this::mailboxes).thenApplyAsync(pending -> {
            Set<String> online = new HashSet<>(hub.registry().online());
            TreeMap<String, Double> seen = hub.registry().lastSeen();
            for (String name : online) {
                seen.putIfAbsent(name, null);
            }
            List<ObjectNode> rows = new ArrayList<>();
            int matched = 0;
            for (Map.Entry<String, Double> e : seen.entrySet()) {
                String name = e.getKey();
                boolean on = online.contains(name);
                if ((q.onlineOnly() && !on) || !q.matches(name)) {
                    continue;
                }
                if (matched++ < q.offset() || rows.size() >= q.limit()) {
                    continue;
                }
                ObjectNode a = FeedEvents.JSON.objectNode();
                a.put("name", name);
                a.put("online", on);
                if (e.getValue() != null) {
                    a.put("last_seen", e.getValue());
                }
                if (pending == null) {
                    a.putNull("mailbox_pending"); // no journal, no mailbox
                } else {
                    a.put("mailbox_pending", pending.getOrDefault(name, 0));
                }
                rows.add(a);
            }
            ObjectNode o = page(q, seen.size(), matched, rows, "agents");
            o.put("online", online.size());
            return o;
        }, cockpit);
    }

    /** Live claims sorted by task id, matching the filter on task, owner, worktree or a path. */
    CompletableFuture<ObjectNode> claims(ViewQuery q) {
        double now = hub.clock().nowSeconds();
        // the writer expires and copies references only; the sort is this thread's work
        return read(s -> s.claims().liveAt(now)).thenApplyAsync(claims -> {
            claims.sort(java.util.Comparator.comparing(Claim::taskId));
            List<ObjectNode> rows = new ArrayList<>();
            int matched = 0;
            for (Claim c : claims) {
                if (!q.matches(c.taskId(), List.of(c.owner(), c.worktree() == null ? "" : c.worktree()))
                        && !q.matches("", c.paths())) {
                    continue;
                }
                if (matched++ < q.offset() || rows.size() >= q.limit()) {
                    continue;
                }
                rows.add(FeedEvents.claim(c));
            }
            ObjectNode o = page(q, claims.size(), matched, rows, "claims");
            o.put("now", now);
            return o;
        }, cockpit);
    }

    /**
     * The board as status columns: per column the number matching, and from {@code offset} at most
     * {@code limit} of them (of the one column {@code status} names, when it names one).
     */
    CompletableFuture<ObjectNode> board(ViewQuery q) {
        // the writer copies references only; sorting and working out ready are this thread's work
        return read(s -> s.board().tasksUnsorted()).thenApplyAsync(unsorted -> {
            BoardSnapshot b = BoardSnapshot.of(unsorted, List.of());
            Set<String> ready = new HashSet<>(b.ready());
            ObjectNode o = FeedEvents.JSON.objectNode();
            o.put("filter", q.q());
            o.put("total", b.tasks().size());
            o.put("ready", ready.size());
            ArrayNode columns = o.putArray("columns");
            for (BoardStatus status : BoardStatus.values()) {
                ObjectNode col = columns.addObject();
                col.put("status", status.wire());
                ArrayNode tasks = col.putArray("tasks");
                int matched = 0;
                boolean listed = q.status() == null || q.status() == status; // one column asked: its rows only
                for (BoardTask t : b.tasks()) {
                    if (t.status() != status || !q.matches(t.taskId(), List.of(t.title(), t.project(), t.suggestedOwner()))) {
                        continue;
                    }
                    if (matched++ >= q.offset() && listed && tasks.size() < q.limit()) {
                        tasks.add(FeedEvents.task(t, ready.contains(t.taskId())));
                    }
                }
                col.put("matched", matched);
            }
            return o;
        }, cockpit);
    }

    /** Dead letters (most first) and mailbox backlogs (largest first), each from {@code offset}. */
    CompletableFuture<ObjectNode> messaging(ViewQuery q) {
        double now = hub.clock().nowSeconds();
        record Mail(List<DeadLetter> dead, Map<String, Integer> pending) {
        }
        // no journal: no mailboxes, so no backlogs to list
        return read(s -> new Mail(s.messaging().deadLetters(now), java.util.Objects.requireNonNullElse(mailboxes(s),
                Map.of())))
                .thenApplyAsync(m -> {
                    ObjectNode o = FeedEvents.JSON.objectNode();
                    ArrayNode dead = o.putArray("dead_letters");
                    int deadMatched = 0;
                    for (DeadLetter d : m.dead()) {
                        if (!q.matches(d.target(), d.lastSender())) {
                            continue;
                        }
                        if (deadMatched++ >= q.offset() && dead.size() < q.limit()) {
                            ObjectNode a = dead.addObject();
                            a.put("target", d.target());
                            a.put("count", d.count());
                            a.put("last_ts", d.lastTs());
                            a.put("last_sender", d.lastSender());
                        }
                    }
                    o.put("dead_letters_matched", deadMatched);
                    o.put("dead_letters_total", m.dead().size());
                    o.put("offset", q.offset());
                    List<Map.Entry<String, Integer>> backlog = new ArrayList<>();
                    for (Map.Entry<String, Integer> e : m.pending().entrySet()) {
                        if (e.getValue() > 0 && q.matches(e.getKey())) {
                            backlog.add(e);
                        }
                    }
                    backlog.sort(Map.Entry.<String, Integer>comparingByValue(Comparator.reverseOrder())
                            .thenComparing(Map.Entry.comparingByKey()));
                    ArrayNode mail = o.putArray("backlogs");
                    for (int i = q.offset(); i < Math.min(q.offset() + (long) q.limit(), backlog.size()); i++) {
                        ObjectNode a = mail.addObject();
                        a.put("identity", backlog.get(i).getKey());
                        a.put("pending", backlog.get(i).getValue());
                    }
                    o.put("backlogs_matched", backlog.size());
                    o.put("backlogs_total", m.pending().values().stream().filter(v -> v > 0).count());
                    return o;
                }, cockpit);
    }

    /**
     * Persistent capability cards sorted by agent (committed state: what {@code card_remove}
     * withdraws and a restart keeps), filtered on agent, description, model and skills.
     */
    CompletableFuture<ObjectNode> cards(ViewQuery q) {
        return read(s -> s.cards().all()).thenApplyAsync(all -> {
            List<ObjectNode> rows = new ArrayList<>();
            int matched = 0;
            for (dev.synapsehub.core.card.PersistentCard c : all) {
                ObjectNode card = FeedEvents.card(c.agent(), c.cardJson(), c.advertisedAt());
                List<String> fields = new ArrayList<>();
                card.path("skills").forEach(skill -> fields.add(skill.asText()));
                fields.add(card.path("description").asText());
                fields.add(card.path("model").asText());
                if (!q.matches(c.agent(), fields)) {
                    continue;
                }
                if (matched++ >= q.offset() && rows.size() < q.limit()) {
                    rows.add(card);
                }
            }
            return page(q, all.size(), matched, rows, "cards");
        }, cockpit);
    }

    /** Recent claim denials, newest first (since this hub started). */
    CompletableFuture<ObjectNode> denials(ViewQuery q) {
        return CompletableFuture.supplyAsync(() -> {
            ObjectNode o = FeedEvents.JSON.objectNode();
            ArrayNode rows = o.putArray("denials");
            for (ObjectNode d : feed.denials(CockpitFeed.RECENT)) {
                if (rows.size() < q.limit() && q.matches(d.get("claimant").asText(), d.get("reason").asText())) {
                    rows.add(d);
                }
            }
            return o;
        }, cockpit);
    }

    /** The most recent changes, oldest first, as the live feed carried them. */
    CompletableFuture<ObjectNode> recent(ViewQuery q) {
        return seeded.thenApplyAsync(started -> {
            ObjectNode o = FeedEvents.JSON.objectNode();
            o.put("last_seq", feed.lastSeq());
            ArrayNode rows = o.putArray("changes");
            List<String> all = feed.recent(CockpitFeed.RECENT);
            List<String> kept = new ArrayList<>();
            for (String text : all) {
                if (q.matches(text)) {
                    kept.add(text);
                }
            }
            for (String text : kept.subList(Math.max(0, kept.size() - q.limit()), kept.size())) {
                rows.addRawValue(new com.fasterxml.jackson.databind.util.RawValue(text));
            }
            return o;
        }, cockpit);
    }

    private static int liveClaims(dev.synapsehub.core.state.CoordinationState s, double now) {
        s.claims().advanceTo(now); // expiry first, as every read of the registry does
        return s.claims().liveCount();
    }

    private <T> CompletableFuture<T> read(java.util.function.Function<dev.synapsehub.core.state.CoordinationState, T> q) {
        return hub.actor().read(q).orTimeout(WRITER_WAIT_MILLIS, TimeUnit.MILLISECONDS);
    }

    private static ObjectNode page(ViewQuery q, int total, int matched, List<ObjectNode> rows, String field) {
        ObjectNode o = FeedEvents.JSON.objectNode();
        o.put("total", total);
        o.put("matched", matched);
        o.put("offset", q.offset());
        o.put("limit", q.limit());
        o.put("filter", q.q());
        o.putArray(field).addAll(rows);
        return o;
    }
}
