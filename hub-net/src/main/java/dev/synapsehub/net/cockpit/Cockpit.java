package dev.synapsehub.net.cockpit;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.ActorObserver;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.net.auth.AuthThrottle;
import dev.synapsehub.net.handler.HostGuard;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The read-only operator cockpit at {@code /ui} ({@code --ui}): a static page from the jar,
 * JSON views under {@code /ui/api/}, and {@code /ui/api/events}, a server-sent-events stream of
 * committed changes. On a token hub every {@code /ui/api/} request needs
 * {@code Authorization: Bearer TOKEN} (401 without); a token in the URL is refused (400), so it
 * never lands in a log or the browser history. The page itself carries no data and is served
 * without the token. Everything runs on one daemon thread of its own, never on the writer.
 */
public final class Cockpit implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Cockpit.class);
    /** The path the cockpit answers under. */
    public static final String PATH = "/ui";
    private static final String API = "/ui/api/";
    /** How often a flood of requests refused for their token is logged (each one is counted). */
    private static final long AUTH_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(60);
    /** The query parameters a token would travel in (in lower case: matched in any case), refused wherever they appear. */
    private static final List<String> TOKEN_FIELDS = List.of("token", "access_token");
    /** The parameters each view takes; anything else is refused 400 rather than ignored. */
    private static final Map<String, Set<String>> PARAMETERS = Map.ofEntries(
            Map.entry("overview", Set.of()),
            Map.entry("presence", with(ViewQuery.PAGE, "online")),
            Map.entry("claims", ViewQuery.PAGE),
            Map.entry("board", with(ViewQuery.PAGE, "status")),
            Map.entry("messaging", ViewQuery.PAGE),
            Map.entry("cards", ViewQuery.PAGE),
            Map.entry("denials", Set.of("q", "limit")),
            Map.entry("recent", Set.of("q", "limit")),
            Map.entry("cluster", Set.of()),
            Map.entry("observed", ViewQuery.PAGE),
            Map.entry("events", Set.of("kinds")));
    private static final String SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private final CockpitSources hub;
    private final ScheduledExecutorService thread;
    private final CockpitFeed feed;
    private final CockpitViews views;
    private final ClusterWatch cluster;
    private final CockpitAssets assets = new CockpitAssets();
    /** Done once the feed has the journal's seq at start (or the writer could not give it). */
    private final CompletableFuture<Void> seeded = new CompletableFuture<>();
    private final RefusalLog authRefusals = new RefusalLog(AUTH_LOG_INTERVAL_NANOS, System.nanoTime());

    private Cockpit(CockpitSources hub) {
        this.hub = hub;
        this.thread = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("synapse-cockpit", true));
        this.feed = new CockpitFeed(hub.registry(), hub.clock());
        this.cluster = new ClusterWatch(hub.extensions());
        this.views = new CockpitViews(hub, feed, thread, cluster, seeded);
    }

    /** Starts the cockpit's thread: the feed drains every 100 ms, presence is compared every second. */
    public static Cockpit start(CockpitSources hub) {
        Cockpit c = new Cockpit(hub);
        c.thread.scheduleWithFixedDelay(c.guarded("draining the feed", c.feed::drain), 100, 100, TimeUnit.MILLISECONDS);
        c.thread.scheduleWithFixedDelay(c.guarded("comparing presence", c.feed::presence), 1, 1, TimeUnit.SECONDS);
        c.thread.scheduleWithFixedDelay(c.guarded("keeping streams alive", c.feed::heartbeat), 15, 15, TimeUnit.SECONDS);
        c.thread.scheduleWithFixedDelay(c.guarded("watching the cluster",
                () -> c.cluster.look(c.feed, hub.clock().nowSeconds())), 1, 1, TimeUnit.SECONDS);
        // a mesh node applies other nodes' decisions without publishing them: the feed gets those too
        hub.extensions().tapReplicated(c.feed::handOver);
        // a mesh node that installs a snapshot gets no events for what changed: the pages reload
        hub.extensions().tapRestored(c.feed::stateReplaced);
        return c;
    }

    /**
     * Gives the feed the seq the journal has reached; call it once {@link #observing} is the writer's
     * observer, so that no batch falls between the two. The feed learns seqs from the batches
     * committed from then on; without this, hello and the views would say 0 after a restart until
     * the next commit. Streams and the views that show the seq wait for it.
     */
    public void seedFeed() {
        hub.actor().read(CoordinationState::lastSeq)
                .orTimeout(CockpitViews.WRITER_WAIT_MILLIS, TimeUnit.MILLISECONDS) // a stuck writer must not hold the pages
                .whenCompleteAsync((seq, failure) -> {
                    if (failure != null) {
                        hub.metrics().faults.incrementAndGet();
                        LOG.warn("cockpit feed: the writer did not give its last seq ({}); the feed starts from the"
                                + " next batch", unwrap(failure).toString());
                    } else {
                        feed.startFrom(seq);
                    }
                    seeded.complete(null);
                }, thread);
    }

    /** True for the paths the cockpit answers. */
    public static boolean owns(String path) {
        return path.equals(PATH) || path.startsWith(PATH + "/");
    }

    /** The observer to give the writer: {@code inner} keeps its job, the feed gets committed batches. */
    public ActorObserver observing(ActorObserver inner) {
        return feed.observing(inner);
    }

    /** Answers one request for a path it {@link #owns}; releases the request. */
    public void serve(ChannelHandlerContext ctx, FullHttpRequest request, HostGuard guard) {
        try {
            route(ctx, request, guard);
        } finally {
            request.release();
        }
    }

    private void route(ChannelHandlerContext ctx, FullHttpRequest request, HostGuard guard) {
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        HttpHeaders headers = request.headers();
        if (!admits(guard, headers.get(HttpHeaderNames.HOST), headers.get(HttpHeaderNames.ORIGIN))) {
            error(ctx, HttpResponseStatus.FORBIDDEN, "forbidden", "untrusted Host or Origin", null, false);
            return;
        }
        if (!HttpMethod.GET.equals(request.method())) {
            error(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "method_not_allowed", "the cockpit is read-only: GET only",
                    null, false);
            return;
        }
        QueryStringDecoder query = new QueryStringDecoder(request.uri());
        String path = query.path();
        // on every path, the page too: a URL with the token lands in proxy logs and the history
        for (String field : query.parameters().keySet()) {
            // Token=, ACCESS_TOKEN=: a server or proxy that ignores case would take it all the same
            if (TOKEN_FIELDS.contains(field.toLowerCase(java.util.Locale.ROOT))) {
                error(ctx, HttpResponseStatus.BAD_REQUEST, "token_in_url",
                        "never put the token in a URL: send it as 'Authorization: Bearer TOKEN'", field, false);
                return;
            }
        }
        if (path.equals(PATH)) {
            FullHttpResponse r = response(HttpResponseStatus.MOVED_PERMANENTLY, "text/plain; charset=utf-8", "see /ui/\n");
            r.headers().set(HttpHeaderNames.LOCATION, PATH + "/");
            send(ctx, r, keepAlive);
            return;
        }
        if (!path.startsWith(API)) {
            CockpitAssets.Asset asset = assets.find(path.substring(PATH.length()));
            if (asset == null) {
                error(ctx, HttpResponseStatus.NOT_FOUND, "not_found", "no such cockpit page: " + path, null, keepAlive);
                return;
            }
            FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                    Unpooled.wrappedBuffer(asset.bytes()));
            r.headers().set(HttpHeaderNames.CONTENT_TYPE, asset.type());
            r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
            send(ctx, r, keepAlive);
            return;
        }
        if (hub.tokens().secured()) {
            String host = AuthThrottle.hostOf(ctx.channel().remoteAddress());
            long wait = hub.authThrottle().blockedFor(host); // counted and logged by the throttle
            if (wait > 0) {
                FullHttpResponse r = json(HttpResponseStatus.UNAUTHORIZED, problem("auth_throttled",
                        "too many failed authentication attempts from this host: retry in " + wait + " s", null));
                r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"synapse-hub\"");
                send(ctx, r, keepAlive);
                return;
            }
            String refused = hub.tokens().check(bearer(headers.get(HttpHeaderNames.AUTHORIZATION)));
            if (refused != null) {
                hub.metrics().authFailures.incrementAndGet();
                hub.authThrottle().failed(host);
                long covered = authRefusals.refused(System.nanoTime());
                if (covered > 0) {
                    LOG.warn("cockpit refused {} API request(s) for their token since the last such line (this one "
                            + "from {}: {}); logged at most once a minute, each counted in synapse_auth_failures_total",
                            covered, ctx.channel().remoteAddress(), refused);
                }
                FullHttpResponse r = json(HttpResponseStatus.UNAUTHORIZED, problem(refused.replace(' ', '_'),
                        refused + ": send 'Authorization: Bearer TOKEN'", null));
                r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"synapse-hub\"");
                send(ctx, r, keepAlive);
                return;
            }
        }
        String view = path.substring(API.length());
        Set<String> accepted = PARAMETERS.get(view);
        if (accepted == null) {
            error(ctx, HttpResponseStatus.NOT_FOUND, "not_found", "no such cockpit view: " + view, null, keepAlive);
            return;
        }
        ViewQuery q;
        Set<String> kinds;
        try {
            q = ViewQuery.of(query, accepted);
            kinds = StreamKinds.of(query);
        } catch (ViewQuery.BadParameter bad) {
            error(ctx, HttpResponseStatus.BAD_REQUEST, "bad_parameter", bad.getMessage(), bad.field, keepAlive);
            return;
        }
        Function<ViewQuery, CompletableFuture<ObjectNode>> reader = switch (view) {
            case "overview" -> x -> views.overview();
            case "presence" -> views::presence;
            case "claims" -> views::claims;
            case "board" -> views::board;
            case "messaging" -> views::messaging;
            case "cards" -> views::cards;
            case "denials" -> views::denials;
            case "recent" -> views::recent;
            case "cluster" -> x -> views.cluster();
            case "observed" -> views::observed;
            case "events" -> null;
            default -> throw new IllegalStateException("a view without a reader: " + view);
        };
        if (reader == null) {
            openStream(ctx, kinds);
            return;
        }
        CompletableFuture<ObjectNode> answer;
        try {
            answer = reader.apply(q);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        answer.whenComplete((body, failure) -> ctx.executor().execute(() -> {
            if (failure == null) {
                hub.extensions().labelRead(body); // a mesh node says how fresh its node-local read is
                send(ctx, json(HttpResponseStatus.OK, body), keepAlive);
            } else if (unwrap(failure) instanceof java.util.concurrent.TimeoutException) {
                error(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, "writer_busy",
                        "the hub's writer did not answer in time; retry shortly", null, keepAlive);
            } else {
                hub.metrics().faults.incrementAndGet();
                LOG.error("fault serving cockpit view {}", view, failure);
                error(ctx, HttpResponseStatus.INTERNAL_SERVER_ERROR, "internal_fault", "the view failed; it was logged",
                        null, false);
            }
        }));
    }

    /** The live feed: a chunked text/event-stream response that stays open. */
    private void openStream(ChannelHandlerContext ctx, Set<String> kinds) {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        head.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        head.headers().set("X-Content-Type-Options", "nosniff");
        HttpUtil.setTransferEncodingChunked(head, true);
        if (ctx.pipeline().get(IdleStateHandler.class) != null) {
            ctx.pipeline().remove(IdleStateHandler.class); // no WebSocket pings on an event stream
        }
        ctx.writeAndFlush(head);
        double now = hub.clock().nowSeconds();
        // after the feed has its starting seq, so that no stream's hello says 0 on a restarted hub
        seeded.thenRunAsync(guarded("opening an event stream", () -> feed.open(ctx.channel(), kinds, now)), thread);
    }

    /**
     * The handshake guard's Host check; an Origin (browsers send one on some same-origin requests)
     * must be the page's own origin or one the operator allowed.
     */
    static boolean admits(HostGuard guard, String host, String origin) {
        if (!guard.admits(host, null)) {
            return false;
        }
        if (origin == null || guard.admits(host, origin)) {
            return true;
        }
        try {
            URI o = new URI(origin.strip());
            String authority = o.getPort() >= 0 ? o.getHost() + ":" + o.getPort() : o.getHost();
            return o.getHost() != null && authority.equalsIgnoreCase(host.strip());
        } catch (Exception e) {
            return false;
        }
    }

    private static Set<String> with(Set<String> names, String more) {
        Set<String> all = new HashSet<>(names);
        all.add(more);
        return Set.copyOf(all);
    }

    private static String bearer(String authorization) {
        if (authorization == null) {
            return null;
        }
        String a = authorization.strip();
        return a.regionMatches(true, 0, "Bearer ", 0, 7) ? a.substring(7).strip() : null;
    }

    private Runnable guarded(String what, Runnable job) {
        return () -> {
            try {
                job.run();
            } catch (RuntimeException e) { // a periodic task that throws is never run again
                hub.metrics().faults.incrementAndGet();
                LOG.error("cockpit fault {}", what, e);
            }
        };
    }

    private static Throwable unwrap(Throwable t) {
        Throwable c = t;
        while (c instanceof java.util.concurrent.CompletionException && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }

    private static ObjectNode problem(String code, String message, String field) {
        ObjectNode o = FeedEvents.JSON.objectNode();
        o.put("error", code);
        o.put("message", message);
        if (field != null) {
            o.put("field", field);
        }
        return o;
    }

    private static void error(ChannelHandlerContext ctx, HttpResponseStatus status, String code, String message,
                              String field, boolean keepAlive) {
        send(ctx, json(status, problem(code, message, field)), keepAlive);
    }

    private static FullHttpResponse json(HttpResponseStatus status, ObjectNode body) {
        FullHttpResponse r = response(status, "application/json", body.toString());
        r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        return r;
    }

    private static FullHttpResponse response(HttpResponseStatus status, String type, String body) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, type);
        return r;
    }

    private static void send(ChannelHandlerContext ctx, FullHttpResponse r, boolean keepAlive) {
        r.headers().set("Content-Security-Policy", SECURITY_POLICY);
        r.headers().set("X-Content-Type-Options", "nosniff");
        r.headers().set("Referrer-Policy", "no-referrer");
        HttpUtil.setContentLength(r, r.content().readableBytes());
        if (keepAlive) {
            HttpUtil.setKeepAlive(r, true);
            ctx.writeAndFlush(r);
        } else {
            ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** Ends the event streams and stops the cockpit's thread. */
    @Override
    public void close() {
        thread.execute(feed::closeAll);
        thread.shutdown();
        try {
            thread.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
