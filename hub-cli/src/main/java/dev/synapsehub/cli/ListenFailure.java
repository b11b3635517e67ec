package dev.synapsehub.cli;

import java.util.Locale;

/**
 * A listening socket the hub could not open, told as the setting to change: it is a
 * configuration problem (exit 2, which the systemd unit does not restart), not an internal error.
 * Netty's epoll transport reports it as its own IOException, not a {@link java.net.BindException},
 * so the cause chain is read by the system's message.
 */
final class ListenFailure {
    private ListenFailure() {
    }

    /** The refusal to report for {@code failure}, or null when it is no bind failure. */
    static IllegalArgumentException explain(Throwable failure, String host, int port) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage() == null ? "" : t.getMessage().toLowerCase(Locale.ROOT);
            String why = null;
            if (message.contains("address already in use")) {
                why = "address already in use (another hub or program holds it; choose another --port)";
            } else if (message.contains("cannot assign requested address")) {
                why = "no interface of this machine has that address (check --host)";
            } else if (message.contains("permission denied") && (t instanceof java.net.BindException
                    || message.contains("bind"))) {
                why = "permission denied (a port below 1024 needs privileges; choose another --port)";
            }
            if (why != null) {
                return new IllegalArgumentException("cannot listen on " + host + ":" + port + ": " + why, failure);
            }
        }
        return null;
    }
}
