package dev.synapsehub.federation.follow;

import java.util.Collection;
import java.util.List;

/**
 * Where the follower keeps what it observed, so a restarted follower resumes from its cursors
 * and has its advisory view back at once: {@link SqliteMirror} beside the journal with
 * {@code --db}, {@link #memory()} without.
 */
public interface Mirror extends AutoCloseable {
    /** Every peer view stored (start-up). */
    List<PeerView> load() throws MirrorException;

    /** The fingerprint of the last event folded from {@code peer}, or null. */
    String fingerprint(String peer) throws MirrorException;

    /**
     * Commits one poll atomically: the peer's new view (cursor, log end, success, quarantine,
     * generation), the fingerprint of its last event, the claims it set and the tasks it released.
     */
    void commit(PeerView view, String fingerprint, Collection<ObservedClaim> upserts, Collection<String> releases)
            throws MirrorException;

    /**
     * Records that a poll failed: {@code view.lastError()} only, so an offline view shows it; the
     * cursor, observation and fingerprint stay as the last good poll committed them.
     */
    default void failed(PeerView view) throws MirrorException {
    }

    /** Replaces every claim of {@code view.peer()} with none and stores {@code view} (recovery). */
    void reset(PeerView view) throws MirrorException;

    @Override
    void close();

    /** Failure to read or write the mirror. */
    final class MirrorException extends Exception {
        public MirrorException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A mirror that keeps only fingerprints in memory (a hub without {@code --db}). */
    static Mirror memory() {
        java.util.Map<String, String> fingerprints = new java.util.concurrent.ConcurrentHashMap<>();
        return new Mirror() {
            @Override
            public List<PeerView> load() {
                return List.of();
            }

            @Override
            public String fingerprint(String peer) {
                return fingerprints.get(peer);
            }

            @Override
            public void commit(PeerView view, String fingerprint, Collection<ObservedClaim> upserts,
                    Collection<String> releases) {
                if (fingerprint != null) {
                    fingerprints.put(view.peer(), fingerprint);
                }
            }

            @Override
            public void reset(PeerView view) {
                fingerprints.remove(view.peer());
            }

            @Override
            public void close() {
            }
        };
    }
}
