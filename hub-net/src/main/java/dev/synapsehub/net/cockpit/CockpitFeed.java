package dev.synapsehub.net.cockpit;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.ActorObserver;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.event.ClaimDeniedEvent;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.net.session.SessionRegistry;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.DefaultHttpContent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The cockpit's live feed: committed batches handed over by the writer (never rendered on it),
 * rendered on the cockpit thread into a bounded ring of recent changes and recent denials, and
 * pushed to every open server-sent-events stream. Presence is not journaled, so the cockpit
 * thread diffs the online set once a second and streams who joined and who left.
 *
 * <p>Everything but {@link #observing} and the counters runs on the cockpit thread.
 */
final class CockpitFeed {
    private static final Logger LOG = LoggerFactory.getLogger(CockpitFeed.class);
    /** Recent changes kept for a newly opened page. */
    static final int RECENT = 200;
    /** Batches waiting for the cockpit thread at most; beyond, streams are told to reload. */
    static final int QUEUE = 4096;
    /** Joins and leaves listed per presence change at most; beyond, the change says resync. */
    static final int MAX_PRESENCE_NAMES = 200;

    /** The marker {@link #stateReplaced} queues (compared by identity). */
    private static final List<JournaledEvent> REPLACED = new ArrayList<>(0);
    private final SessionRegistry registry;
    private final BlockingQueue<List<JournaledEvent>> handedOver = new ArrayBlockingQueue<>(QUEUE);
    private final ArrayDeque<String> recent = new ArrayDeque<>();
    private final ArrayDeque<ObjectNode> denials = new ArrayDeque<>();
    private final List<Stream> streams = new CopyOnWriteArrayList<>();
    private final dev.synapsehub.core.Clock clock;
    /** The online set at the last look; null while nobody watches (the next look only takes it in). */
    private Set<String> online;
    private long lastSeq;
    private volatile boolean overflowed;
    final AtomicLong eventsSeen = new AtomicLong();
    final AtomicLong batchesDropped = new AtomicLong();
    final AtomicLong streamsDropped = new AtomicLong();
    final AtomicLong statesReplaced = new AtomicLong();

    /** One open event stream and the kinds it asked for (empty: all). */
    private record Stream(Channel channel, Set<String> kinds) {
        boolean wants(String kind) {
            return kinds.isEmpty() || kinds.contains(kind);
        }
    }

    CockpitFeed(SessionRegistry registry, dev.synapsehub.core.Clock clock) {
        this.registry = registry;
        this.clock = clock;
    }

    /** An observer that tells {@code inner} everything and hands committed batches to this feed. */
    ActorObserver observing(ActorObserver inner) {
        return new ActorObserver() {
            @Override
            public void committed(long nanos, int commands, int events) {
                inner.committed(nanos, commands, events);
            }

            @Override
            public void decided(Command command, long nanos) {
                inner.decided(command, nanos);
            }

            @Override
            public void published(List<JournaledEvent> committed) {
                inner.published(committed);
                handOver(committed);
            }
        };
    }

    /**
     * A committed batch for the feed: what this hub's writer published, or what a mesh node
     * applied for another node's decision. Never waits: beyond {@link #QUEUE} it is dropped and
     * the open pages are told to reload.
     */
    void handOver(List<JournaledEvent> committed) {
        if (!handedOver.offer(committed)) {
            batchesDropped.incrementAndGet();
            overflowed = true;
        }
    }

    /**
     * The state was replaced wholesale (a mesh node installed a snapshot): queued in order with
     * the batches, so that the streams are told to reload after what came before and before what
     * comes after. Never waits (a full queue overflows, which tells them to reload as well).
     */
    void stateReplaced() {
        handOver(REPLACED);
    }

    /** The journal's seq when the cockpit started (cockpit thread): batches already seen keep a later one. */
    void startFrom(long seq) {
        lastSeq = Math.max(lastSeq, seq);
    }

    /** Streams the cluster status (federation peers, mesh nodes) after it changed (cockpit thread). */
    void cluster(String json) {
        push("cluster", json, "cluster");
    }

    /** Renders what the writer handed over and pushes it to the streams (cockpit thread). */
    void drain() {
        if (overflowed) {
            overflowed = false;
            LOG.warn("cockpit feed fell behind the writer; {} batches dropped so far, telling open pages to reload",
                    batchesDropped.get());
            handedOver.clear();
            push("resync", "{\"reason\":\"feed_overflow\"}", "resync");
        }
        List<List<JournaledEvent>> batches = new ArrayList<>();
        handedOver.drainTo(batches, 256);
        if (batches.isEmpty()) {
            return;
        }
        StringBuilder all = new StringBuilder();
        Map<Stream, StringBuilder> filtered = new java.util.HashMap<>();
        for (List<JournaledEvent> batch : batches) {
            if (batch == REPLACED) {
                // what was rendered before is older than the new state: the pages reload instead
                all.setLength(0);
                filtered.clear();
                statesReplaced.incrementAndGet();
                LOG.info("the hub's state was replaced by a snapshot; telling open cockpit pages to reload");
                push("resync", "{\"reason\":\"state_replaced\"}", "resync");
                continue;
            }
            for (JournaledEvent journaled : batch) {
                eventsSeen.incrementAndGet();
                lastSeq = Math.max(lastSeq, journaled.seq());
                ObjectNode item = FeedEvents.render(journaled);
                if (item == null) {
                    continue;
                }
                String kind = item.get("kind").asText();
                if (journaled.event() instanceof ClaimDeniedEvent d) {
                    remember(denials, FeedEvents.denial(d));
                }
                String text = item.toString();
                remember(recent, text);
                String frame = frame(journaled.seq(), "change", text);
                all.append(frame);
                for (Stream s : streams) {
                    if (!s.kinds().isEmpty() && s.wants(kind)) {
                        filtered.computeIfAbsent(s, k -> new StringBuilder()).append(frame);
                    }
                }
            }
        }
        for (Stream s : streams) {
            String chunk = s.kinds().isEmpty() ? all.toString() : filtered.getOrDefault(s, new StringBuilder()).toString();
            if (!chunk.isEmpty()) {
                write(s, chunk);
            }
        }
    }

    /** Streams who joined and who left since the last look (cockpit thread, once a second). */
    void presence() {
        if (streams.isEmpty()) {
            online = null; // nobody watches: the next watcher loads a fresh page anyway
            return;
        }
        Set<String> now = new HashSet<>(registry.online());
        if (online == null) {
            baseline(now);
            return;
        }
        List<String> joined = new ArrayList<>();
        for (String n : now) {
            if (!online.contains(n)) {
                joined.add(n);
            }
        }
        List<String> left = new ArrayList<>();
        for (String n : online) {
            if (!now.contains(n)) {
                left.add(n);
            }
        }
        online = now;
        if (joined.isEmpty() && left.isEmpty()) {
            return;
        }
        ObjectNode o = FeedEvents.JSON.objectNode();
        o.put("kind", "presence");
        o.put("ts", clock.nowSeconds());
        o.put("online", now.size());
        if (joined.size() + left.size() > MAX_PRESENCE_NAMES) {
            o.put("resync", true);
        } else {
            Map<String, Double> seen = registry.lastSeen();
            ArrayNode j = o.putArray("joined");
            joined.stream().sorted().forEach(n -> {
                ObjectNode a = j.addObject();
                a.put("name", n);
                Double at = seen.get(n);
                if (at != null) {
                    a.put("last_seen", at);
                }
            });
            ArrayNode l = o.putArray("left");
            left.stream().sorted().forEach(n -> {
                ObjectNode a = l.addObject();
                a.put("name", n);
                Double at = seen.get(n);
                if (at != null) {
                    a.put("last_seen", at);
                }
            });
        }
        push("presence", o.toString(), "presence");
    }

    /** A comment line so that idle streams stay open through proxies (cockpit thread). */
    void heartbeat() {
        for (Stream s : streams) {
            write(s, ": keepalive\n\n");
        }
    }

    /** Opens a stream on {@code channel} (the response head is written): hello, then the live feed. */
    void open(Channel channel, Set<String> kinds, double now) {
        Stream s = new Stream(channel, Set.copyOf(kinds));
        ObjectNode hello = FeedEvents.JSON.objectNode();
        hello.put("seq", lastSeq);
        hello.put("now", now);
        write(s, "retry: 3000\n" + frame(lastSeq, "hello", hello.toString()));
        streams.add(s);
        channel.closeFuture().addListener(f -> streams.remove(s));
        if (online == null) {
            // taken as the stream opens, not at the next comparison: an agent that joins after
            // hello (and after the page read its presence view) must be streamed as joined
            baseline(new HashSet<>(registry.online()));
        }
    }

    /** Who was here before anyone watched did not just join: a baseline, no names. */
    private void baseline(Set<String> now) {
        online = now;
        ObjectNode o = FeedEvents.JSON.objectNode();
        o.put("kind", "presence");
        o.put("ts", clock.nowSeconds());
        o.put("online", now.size());
        o.put("baseline", true);
        push("presence", o.toString(), "presence");
    }

    /** The most recent changes, oldest first (cockpit thread). */
    List<String> recent(int limit) {
        return tail(new ArrayList<>(recent), limit);
    }

    /** The most recent claim denials, newest first (cockpit thread). */
    List<ObjectNode> denials(int limit) {
        List<ObjectNode> all = new ArrayList<>(denials);
        java.util.Collections.reverse(all);
        return all.subList(0, Math.min(limit, all.size()));
    }

    int streamCount() {
        return streams.size();
    }

    long lastSeq() {
        return lastSeq;
    }

    /** Ends every stream (the hub is stopping). */
    void closeAll() {
        for (Stream s : streams) {
            s.channel().close();
        }
        streams.clear();
    }

    private void push(String kind, String json, String event) {
        for (Stream s : streams) {
            if (s.wants(kind) || event.equals("resync")) {
                write(s, frame(lastSeq, event, json));
            }
        }
    }

    private void write(Stream s, String text) {
        Channel ch = s.channel();
        if (!ch.isActive()) {
            streams.remove(s);
            return;
        }
        if (!ch.isWritable()) {
            // a page that does not read its stream must not hold the hub's memory: drop it; the
            // page reconnects and reloads its views
            streamsDropped.incrementAndGet();
            LOG.info("closing a cockpit event stream to {}: it stopped reading", ch.remoteAddress());
            streams.remove(s);
            ch.close();
            return;
        }
        ch.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8)));
    }

    private static String frame(long seq, String event, String data) {
        return "id: " + seq + "\nevent: " + event + "\ndata: " + data + "\n\n";
    }

    private static <T> void remember(ArrayDeque<T> ring, T item) {
        ring.addLast(item);
        if (ring.size() > RECENT) {
            ring.removeFirst();
        }
    }

    private static <T> List<T> tail(List<T> all, int limit) {
        return all.subList(Math.max(0, all.size() - limit), all.size());
    }
}
