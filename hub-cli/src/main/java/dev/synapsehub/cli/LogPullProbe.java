package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * {@code federation doctor}'s check of one route: connects with the pin and client certificate the
 * hub uses, registers as the hub's own id with the route's token and sends one
 * {@code multihub_log_request}, as the hub's follower does. A reachable peer that refuses this hub
 * answers such a pull with a null {@code log_end_seq}, so a handshake alone would pass it.
 *
 * <p>The probe holds this hub's id on the peer while it runs (at most about 15 s: 5 s to connect,
 * 5 s for the registration's answer, 5 s for the pull's): a running hub whose link reconnects
 * meanwhile is refused {@code name_conflict} for that poll. Run it with the hub stopped, or expect
 * a WARN or one failed poll.
 */
final class LogPullProbe {
    /** What the probe found: {@code verdict} is ok, WARN or FAIL. */
    record Finding(String verdict, String detail) {
    }

    /**
     * One probe of a URI judged by both kinds of route's rules: they differ only on a null log end,
     * so a watch route and a claim route sharing the URI each get their own verdict from one probe.
     */
    record Result(Finding forWatch, Finding forClaim) {
        /** Both kinds of route judge this finding alike. */
        static Result either(Finding f) {
            return new Result(f, f);
        }

        /** The finding by the rules of a claim route ({@code claimRoute}) or of a watch route. */
        Finding forRoute(boolean claimRoute) {
            return claimRoute ? forClaim : forWatch;
        }
    }

    private static final Set<String> ANSWERS = Set.of("multihub_log_snapshot", "name_conflict", "auth_denied", "error");

    private LogPullProbe() {
    }

    /**
     * Probes one URI. An owner hub without a journal answers every log pull with a null log end, as a
     * refusal does, while it decides forwarded claims all the same: for a claim route a null log end
     * is a WARN. A watched peer must serve its log, so for a watch route it FAILs.
     */
    static Result probe(URI uri, ClientTls tls, String hubId, String token) {
        long start = System.nanoTime();
        try (HubClient c = HubClient.connect(uri, Duration.ofSeconds(5), tls)) {
            long millis = (System.nanoTime() - start) / 1_000_000;
            String reached = uri + " reachable in " + millis + " ms (" + transport(uri, tls) + ")";
            ObjectNode hello = c.frame(hubId, "heartbeat");
            hello.put("payload", "online");
            if (token != null) {
                hello.put("token", token);
            }
            c.send(hello);
            ObjectNode w = c.awaitWhileOpen(f -> Set.of("welcome", "name_conflict", "auth_denied", "error")
                    .contains(f.path("type").asText()), Duration.ofSeconds(5));
            if ("error".equals(w.path("type").asText())) {
                return Result.either(refusedWithError(c, reached, hubId, w));
            }
            if (!"welcome".equals(w.path("type").asText())) {
                return Result.either(refusedRegistration(reached, hubId, w));
            }
            double skew = w.path("timestamp").asDouble() - System.currentTimeMillis() / 1000.0;
            String welcome = String.format(Locale.ROOT, "protocol %d, clock skew %.3f s",
                    w.path("protocol_version").asInt(1), skew);
            ObjectNode pull = c.frame(hubId, "multihub_log_request");
            pull.put("target", "all");
            pull.put("after_seq", 0);
            pull.put("limit", 1);
            try {
                c.send(pull);
            } catch (Exception closed) { // ClosedChannelException, thrown unchecked by Netty
                // the peer closed after refusing the registration (its error frame, if any, is queued)
                return Result.either(refusedWithError(c, reached, hubId, null));
            }
            ObjectNode reply;
            try {
                reply = c.awaitWhileOpen(f -> ANSWERS.contains(f.path("type").asText()), Duration.ofSeconds(5));
            } catch (TimeoutException e) {
                if (c.closeFuture().isDone()) {
                    return Result.either(refusedWithError(c, reached, hubId, null));
                }
                throw e;
            }
            if ("error".equals(reply.path("type").asText())) {
                return Result.either(refusedWithError(c, reached, hubId, reply));
            }
            if (!"multihub_log_snapshot".equals(reply.path("type").asText())) {
                return Result.either(refusedRegistration(reached, hubId, reply));
            }
            if (!reply.path("log_end_seq").canConvertToLong()) {
                return new Result(new Finding("FAIL", reached + ", but the peer refuses this hub's log pulls "
                        + "(log_end_seq null for '" + hubId + "'): check that its serving policy grants this hub and "
                        + "that this hub's client certificate is signed by its client CA (or the peer keeps no journal)"),
                        new Finding("WARN", reached + ", but a log pull as '" + hubId + "' answers log_end_seq null: "
                        + "cannot tell a refusal from an owner that keeps no journal: if the owner runs with --db, check "
                        + "that its serving policy grants this hub and that this hub's client certificate is signed by "
                        + "its client CA"));
            }
            return Result.either(new Finding("ok", reached + ", " + welcome + "; a log pull as '" + hubId + "' is served (log end "
                    + reply.path("log_end_seq").asLong() + ")"));
        } catch (IOException e) {
            return Result.either(new Finding("FAIL", uri + ": " + e.getMessage()));
        } catch (TimeoutException e) {
            return Result.either(new Finding("FAIL", uri + ": no answer to a log pull as '" + hubId + "': "
                    + e.getMessage()));
        }
    }

    /** What the connect proved of the transport: a ws:// route has no TLS, a wss:// one without a pin a CA's. */
    private static String transport(URI uri, ClientTls tls) {
        if (!ClientTls.secure(uri)) {
            return "plain ws, no TLS";
        }
        return tls != null && tls.pin() != null ? "TLS and pin ok" : "TLS ok, certificate verified by a CA for the host";
    }

    /**
     * The peer answered with an {@code error} frame ({@code error}, or null when the connection closed
     * first: a refusal frame it sent is then looked for among those received): a peer that refuses the registration itself (identity binding, close 4013) sends the
     * error and closes, and the finding gives both; an error on an open connection is the pull's.
     */
    private static Finding refusedWithError(HubClient c, String reached, String hubId, ObjectNode error) {
        if (error == null) {
            try {
                error = c.awaitWhileOpen(f -> Set.of("error", "name_conflict", "auth_denied")
                        .contains(f.path("type").asText()), Duration.ZERO);
            } catch (TimeoutException none) {
                // only the close says why
            }
            if (error != null && !"error".equals(error.path("type").asText())) {
                return refusedRegistration(reached, hubId, error);
            }
        }
        HubClient.CloseStatus close = null;
        try {
            close = c.awaitClose(Duration.ofSeconds(1));
        } catch (TimeoutException stillOpen) {
            // not closed: the error answers the pull
        }
        String payload = error == null ? null : error.path("payload").asText();
        if (close == null) {
            return new Finding("FAIL", reached + ", but the peer answered the log pull with an error: " + payload);
        }
        return new Finding("FAIL", reached + ", but the peer refused registering '" + hubId + "': "
                + (payload == null ? "" : payload + "; ") + "closed " + close.code() + " " + close.reason());
    }

    private static Finding refusedRegistration(String reached, String hubId, ObjectNode f) {
        String payload = f.path("payload").asText();
        return switch (f.path("type").asText()) {
            // the running hub's own link holds the name: not a fault, and the pull cannot be checked from here
            case "name_conflict" -> new Finding("WARN", reached + "; '" + hubId + "' is already online there (this "
                    + "hub running?), so whether it may pull the log is not checked: see `federation status` ("
                    + payload + ")");
            case "auth_denied" -> new Finding("FAIL", reached + ", but the peer refused the connect token: " + payload);
            default -> new Finding("FAIL", reached + ", but the peer answered the log pull with an error: " + payload);
        };
    }
}
