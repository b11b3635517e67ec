package dev.synapsehub.core.messaging;

import java.util.List;
import java.util.Objects;

/**
 * One bound connection as the edge sees it when a chat arrives; the core never sees sockets.
 *
 * @param name the bound connection name (sidecars {@code X-rx}, {@code X-pane-rx} included)
 * @param roles roles declared on registration
 * @param live the consume-liveness verdict of §8.6 for this connection's logical identity
 *     (true when stale-recipient tracking is off)
 * @param wakeCapability the declared wake capability, or {@code unknown}
 */
public record OnlineAgent(String name, List<String> roles, boolean live, String wakeCapability) {
    public OnlineAgent {
        Objects.requireNonNull(name, "name");
        roles = roles == null ? List.of() : List.copyOf(roles);
        wakeCapability = wakeCapability == null || wakeCapability.isBlank() ? "unknown" : wakeCapability;
    }

    /** A live connection without roles. */
    public static OnlineAgent live(String name) {
        return new OnlineAgent(name, List.of(), true, "direct");
    }
}
