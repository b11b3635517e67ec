package dev.synapsehub.federation.follow;

import dev.synapsehub.client.tls.ClientTls;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The standing watch (contract §11.2, F6), validated once: the peers, how often each is polled,
 * the token and the client identity presented to every peer, the per-poll budget, and the
 * bound on each reply (10 s).
 */
public record WatchSettings(List<WatchPeer> peers, Duration interval, String token, Path clientCertFile,
                            Path clientKeyFile, PollBudget budget, Duration replyTimeout) {
    /** Default interval 30 s; floor 1 s. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(30);

    public WatchSettings {
        peers = List.copyOf(peers);
        if (interval.compareTo(Duration.ofSeconds(1)) < 0) {
            interval = Duration.ofSeconds(1);
        }
    }

    /** No watch. */
    public static WatchSettings none() {
        return new WatchSettings(List.of(), DEFAULT_INTERVAL, null, null, null, PollBudget.DEFAULT,
                Duration.ofSeconds(10));
    }

    /** How this hub secures its connection to {@code peer}. */
    public ClientTls tlsFor(WatchPeer peer) {
        ClientTls tls = peer.pin() == null ? ClientTls.NONE : ClientTls.pinned(peer.pin());
        return clientCertFile == null ? tls : tls.withClientCertificate(clientCertFile, clientKeyFile);
    }
}
