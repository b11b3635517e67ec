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
        return explain(failure, host + ":" + port, "--port", "--host");
    }

    /**
     * As {@link #explain(Throwable, String, int)} for a mesh node's Raft address, which its own entry
     * in {@code --mesh-peers} sets (the same list on every node), not {@code --port}.
     */
    static IllegalArgumentException explainRaft(dev.synapsehub.mesh.RaftAddressUnavailable failure) {
        dev.synapsehub.mesh.MeshPeer self = failure.self();
        String entry = self.id() + "'s entry in --mesh-peers, on every node";
        return explain(failure, self.address() + " (mesh node " + self.id() + "'s Raft address)",
                "port in " + entry, "the host in " + entry);
    }

    private static IllegalArgumentException explain(Throwable failure, String address, String portSetting,
                                                    String hostSetting) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage() == null ? "" : t.getMessage().toLowerCase(Locale.ROOT);
            String why = null;
            if (message.contains("address already in use")) {
                why = "address already in use (another hub or program holds it; choose another " + portSetting + ")";
            } else if (message.contains("cannot assign requested address")) {
                why = "no interface of this machine has that address (check " + hostSetting + ")";
            } else if (message.contains("permission denied") && (t instanceof java.net.BindException
                    || message.contains("bind"))) {
                why = "permission denied (a port below 1024 needs privileges; choose another " + portSetting + ")";
            }
            if (why != null) {
                return new IllegalArgumentException("cannot listen on " + address + ": " + why, failure);
            }
        }
        return null;
    }
}
