package dev.synapsehub.net.cockpit;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.net.auth.AuthThrottle;
import dev.synapsehub.net.auth.ConnectTokenAuth;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.protocol.HubMetrics;
import dev.synapsehub.net.session.SessionRegistry;

/**
 * What the cockpit reads and answers with, and nothing more; wired once by {@code HubServer}.
 *
 * @param actor the writer, read (never written) for the views
 * @param tokens the bearer check of {@code /ui/api/} on a token hub
 * @param authThrottle the per-host throttle of failed bearer checks, shared with the WebSocket path
 * @param extensions the plugged-in modules' taps, cluster panels and rows
 * @param hubId this hub's id (the overview)
 * @param hubVersion the version the overview reports
 * @param secured whether the hub asks for a token (the overview)
 * @param startedAt when the hub started (hub clock seconds)
 * @param journaled whether the hub has a durable journal (the overview)
 */
public record CockpitSources(
        CoordinationActor actor,
        SessionRegistry registry,
        Clock clock,
        HubMetrics metrics,
        ConnectTokenAuth tokens,
        AuthThrottle authThrottle,
        HubExtensions extensions,
        String hubId,
        String hubVersion,
        boolean secured,
        double startedAt,
        boolean journaled) {
}
