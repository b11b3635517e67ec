package dev.synapsehub.net.extension;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.net.protocol.HubMetrics;
import dev.synapsehub.net.protocol.Outbox;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;

/**
 * The hub services an extension may use (federation, the mesh edge), and nothing more: the
 * writer, the hub's clock, frame building, the outbox, the live sessions, the fault counters and
 * this hub's id. Wired once by {@code HubServer}.
 *
 * @param hubId this hub's configured id ({@code --hub-id})
 */
public record HubServices(
        CoordinationActor actor,
        Clock clock,
        HubFrames frames,
        Outbox outbox,
        SessionRegistry registry,
        HubMetrics metrics,
        String hubId) {
}
