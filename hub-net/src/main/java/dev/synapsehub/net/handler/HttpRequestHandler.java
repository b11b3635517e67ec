package dev.synapsehub.net.handler;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.net.auth.AuthThrottle;
import dev.synapsehub.net.auth.MetricsAuth;
import dev.synapsehub.net.cockpit.Cockpit;
import dev.synapsehub.net.protocol.HubHealth;
import dev.synapsehub.net.protocol.HubMetrics;
import dev.synapsehub.net.protocol.HubMetricsText;
import dev.synapsehub.net.protocol.StateCounts;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

/**
 * HTTP on the hub port (contract §3.1, §10): {@code /health} and {@code /metrics} when metrics
 * are enabled (403 otherwise), the cockpit under {@code /ui} when it is on (404 otherwise), the
 * Host/Origin guard for everything else, then the WebSocket upgrade further down the pipeline.
 */
public final class HttpRequestHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private static final String UPGRADE_REQUIRED = "Upgrade Required: this is a WebSocket endpoint; connect with a"
            + " WebSocket client.\n";
    private static final String UNAUTHORIZED = "unauthorized: send the metrics token as Authorization: Bearer <token>\n";
    private static final String COCKPIT_DISABLED = "cockpit disabled (start the hub with --ui)\n";
    private static final String FAULT = "Internal Server Error: the hub could not build this answer; the fault was"
            + " logged\n";
    private static final Logger LOG = LoggerFactory.getLogger(HttpRequestHandler.class);

    private final CoordinationActor actor;
    private final Clock clock;
    private final boolean metricsEnabled;
    private final MetricsAuth metricsAuth;
    private final AuthThrottle authThrottle;
    private final HostGuard guard;
    private final HubMetricsText metricsText;
    private final HubMetrics metrics;
    private final Cockpit cockpit;

    /**
     * Reads the live-claim count through {@code actor} for {@code /health} and {@code /metrics}
     * ({@code metricsEnabled} false: both 403; a request {@code metricsAuth} does not admit: 401,
     * and a failure {@code authThrottle} counts against its host);
     * with the operator cockpit at {@code /ui} ({@code cockpit} null: not served). A fault while
     * building either answer is counted in {@code metrics}' faults.
     */
    public HttpRequestHandler(CoordinationActor actor, Clock clock, boolean metricsEnabled, MetricsAuth metricsAuth,
            AuthThrottle authThrottle, HostGuard guard, HubMetricsText metricsText, HubMetrics metrics,
            Cockpit cockpit) {
        super(false);
        this.actor = actor;
        this.clock = clock;
        this.metricsEnabled = metricsEnabled;
        this.metricsAuth = metricsAuth;
        this.authThrottle = authThrottle;
        this.guard = guard;
        this.metricsText = metricsText;
        this.metrics = metrics;
        this.cockpit = cockpit;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (request.decoderResult().isFailure() || !request.uri().startsWith("/")) {
            // absolute form (GET http://host/health), asterisk form (OPTIONS *) or an undecodable
            // request: nothing further down answers it, so it would hang until the idle close
            request.release();
            respond(ctx, HttpResponseStatus.BAD_REQUEST, "text/plain; charset=utf-8",
                    "Bad Request: the request target must be a path such as /health\n", false);
            return;
        }
        String path;
        try {
            path = new QueryStringDecoder(request.uri()).path();
        } catch (IllegalArgumentException badEscape) { // "/%zz": a client's mistake, not a fault of the hub
            request.release();
            respond(ctx, HttpResponseStatus.BAD_REQUEST, "text/plain; charset=utf-8",
                    "Bad Request: the request target cannot be decoded\n", false);
            return;
        }
        if ("/health".equals(path) || "/metrics".equals(path)) {
            try {
                serveHttp(ctx, request, path);
            } finally {
                request.release();
            }
            return;
        }
        if (cockpit != null && Cockpit.owns(path)) {
            cockpit.serve(ctx, request, guard); // its own Host/Origin check; releases the request
            return;
        }
        if (!guard.admits(request.headers().get(HttpHeaderNames.HOST), request.headers().get(HttpHeaderNames.ORIGIN))) {
            request.release();
            respond(ctx, HttpResponseStatus.FORBIDDEN, "text/plain; charset=utf-8", "Forbidden: untrusted Host or Origin\n",
                    false);
            return;
        }
        if (!request.headers().containsValue(HttpHeaderNames.UPGRADE, "websocket", true)) {
            request.release();
            if (Cockpit.owns(path)) { // the cockpit is off: say so, as /health does without --metrics
                respond(ctx, HttpResponseStatus.NOT_FOUND, "text/plain; charset=utf-8", COCKPIT_DISABLED, false);
                return;
            }
            // a plain GET on any other path: 426, as the contract's table says (A9)
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    HttpResponseStatus.UPGRADE_REQUIRED, Unpooled.copiedBuffer(UPGRADE_REQUIRED, StandardCharsets.UTF_8));
            response.headers().set(HttpHeaderNames.UPGRADE, "websocket");
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
            HttpUtil.setContentLength(response, response.content().readableBytes());
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        ctx.fireChannelRead(request); // on to the WebSocket handshake
    }

    private void serveHttp(ChannelHandlerContext ctx, FullHttpRequest request, String path) {
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        if (!metricsEnabled) {
            respond(ctx, HttpResponseStatus.FORBIDDEN, "text/plain; charset=utf-8", "metrics disabled\n", false);
            return;
        }
        String host = AuthThrottle.hostOf(ctx.channel().remoteAddress());
        long wait = metricsAuth.secured() ? authThrottle.blockedFor(host) : 0; // counted and logged by the throttle
        boolean admitted = wait == 0 && metricsAuth.admits(request.headers().get(HttpHeaderNames.AUTHORIZATION),
                queryOf(request));
        if (!admitted) {
            if (wait == 0) {
                authThrottle.failed(host);
            }
            String body = wait > 0
                    ? "unauthorized: too many failed attempts from this host: retry in " + wait + " s\n" : UNAUTHORIZED;
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.UNAUTHORIZED,
                    Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
            response.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, MetricsAuth.CHALLENGE);
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
            HttpUtil.setContentLength(response, response.content().readableBytes());
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (!HttpMethod.GET.equals(request.method())) {
            respond(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", "GET only\n", false);
            return;
        }
        double now = clock.nowSeconds();
        // the live-claim count is the one thing read through the writer; a writer that does not
        // answer in time makes it unknown (null), never 0, and the hub degraded
        // (a count: sorting a copy of 100,000 claims to count them held the writer for the first /health of a start)
        if ("/health".equals(path)) {
            actor.read(s -> s.claims().liveCount(now))
                    .orTimeout(HubMetricsText.BEHIND.toMillis(), TimeUnit.MILLISECONDS)
                    .whenComplete((claims, failure) -> ctx.executor().execute(() -> answer(ctx, path, () -> {
                        OptionalInt active = failure == null ? OptionalInt.of(claims) : OptionalInt.empty();
                        HubHealth verdict = metricsText.verdict(failure != null);
                        respond(ctx, HttpResponseStatus.valueOf(verdict.httpStatus()), "application/json",
                                metricsText.health(verdict, active, now), keepAlive);
                    })));
            return;
        }
        // the state's sizes in one read: counts only
        actor.read(s -> StateCounts.of(s, now))
                .orTimeout(HubMetricsText.BEHIND.toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((counts, failure) -> ctx.executor().execute(() -> answer(ctx, path, () ->
                        respond(ctx, HttpResponseStatus.OK, HubMetricsText.PROMETHEUS_CONTENT_TYPE,
                                metricsText.prometheus(failure == null ? counts : null), keepAlive))));
    }

    /**
     * Builds and sends an answer to {@code path}; a fault while building it (the hub's figures, or
     * an extension's) is logged once, counted in {@code synapse_faults_total} and answered 500,
     * never left for the client's timeout.
     */
    private void answer(ChannelHandlerContext ctx, String path, Runnable build) {
        try {
            build.run();
        } catch (RuntimeException | Error fault) {
            metrics.faults.incrementAndGet();
            LOG.error("fault while building the answer to {}; answered 500", path, fault);
            respond(ctx, HttpResponseStatus.INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", FAULT, false);
        }
    }

    /** The query's parameters when a token may come in it; none when undecodable (the token is then missing). */
    private java.util.Map<String, java.util.List<String>> queryOf(FullHttpRequest request) {
        if (!metricsAuth.queryTokenOk()) {
            return java.util.Map.of();
        }
        try {
            return new QueryStringDecoder(request.uri()).parameters();
        } catch (IllegalArgumentException badEscape) {
            return java.util.Map.of();
        }
    }

    private static void respond(ChannelHandlerContext ctx, HttpResponseStatus status, String type, String body,
                                boolean keepAlive) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, type);
        HttpUtil.setContentLength(response, response.content().readableBytes());
        if (keepAlive) {
            HttpUtil.setKeepAlive(response, true);
            ctx.writeAndFlush(response);
        } else {
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
