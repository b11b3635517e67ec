package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.client.HubClient;

import java.io.IOException;
import java.util.concurrent.TimeoutException;

/**
 * The hub refused an operator command's connection: what it said and what to do, told at once
 * rather than as "no answer" once --timeout has passed.
 */
final class HubRefusal extends Exception {
    private final int exitCode;

    private HubRefusal(String message, int exitCode) {
        super(message);
        this.exitCode = exitCode;
    }

    /** The exit code to return (docs/operations.md, "Exit codes"). */
    int exitCode() {
        return exitCode;
    }

    /**
     * Registers as {@code client} says ({@code extra}: members added to the heartbeat, or null)
     * and returns {@code welcome}; a refusal the hub answered with, or closed the connection for,
     * is thrown as a HubRefusal.
     */
    static ObjectNode register(HubClient hub, ClientOptions client, ObjectNode extra)
            throws HubRefusal, TimeoutException, IOException {
        String token = client.token(); // a token file that cannot be read is no refusal
        try {
            return extra == null ? hub.register(client.name, token, client.timeout())
                    : hub.register(client.name, token, extra, client.timeout());
        } catch (Exception e) { // a wait on, or a send to (Netty's undeclared ClosedChannelException), a closed connection
            for (ObjectNode f : hub.pending()) {
                if ("auth_denied".equals(f.path("type").asText())) {
                    // a wrong or missing token is the command line's to fix: exit 2, not 3 (retrying cannot help)
                    throw new HubRefusal(client.url + ": auth denied: " + f.path("payload").asText()
                            + " (give the hub's token with --token, --token-file or SYNAPSE_TOKEN)", ExitCodes.USAGE);
                }
            }
            HubRefusal closed = closed(hub, client);
            if (closed != null) {
                throw closed;
            }
            throw e;
        }
    }

    /**
     * The hub's close of {@code hub}'s connection as a refusal, or null when it is open (a failed
     * send or an unanswered wait is then something else). Waits a moment for the close frame, which
     * may be read just after a send to the closing connection failed.
     */
    static HubRefusal closed(HubClient hub, ClientOptions client) {
        HubClient.CloseStatus status;
        try {
            status = hub.closeFuture().get(1, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | TimeoutException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
        CloseReasons why = CloseReasons.of(status, client.name);
        return new HubRefusal(why.line(client.url.toString(), status), why.exitCode());
    }
}
