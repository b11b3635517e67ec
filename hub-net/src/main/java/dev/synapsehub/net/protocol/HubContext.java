package dev.synapsehub.net.protocol;

import dev.synapsehub.core.Clock;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.auth.ConnectTokenAuth;
import dev.synapsehub.net.auth.MessageAuthenticator;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.session.SessionRegistry;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The collaborators every connection shares, wired once by {@code HubServer}.
 *
 * @param configEpoch fingerprint of the effective configuration (who_snapshot, /health)
 * @param journal the durable journal, or null for a hub without one
 * @param history historical reads of the journal (mailbox replay, ack resolution), off the writer
 * @param extensions the modules plugged in by the composition root (federation), possibly none
 */
public record HubContext(
        HubConfig config,
        CoordinationActor actor,
        Clock clock,
        WireJson json,
        HubFrames frames,
        SessionRegistry registry,
        Outbox outbox,
        HubMetrics metrics,
        ConnectTokenAuth tokens,
        MessageAuthenticator messageAuth,
        AtomicLong anonymousNames,
        double startedAt,
        String configEpoch,
        Journal journal,
        HistoricalReads history,
        HubExtensions extensions) {
    /** True when the hub has a durable journal: seqs on chats, mailbox, deferred receipts. */
    public boolean journaled() {
        return journal != null;
    }
}
