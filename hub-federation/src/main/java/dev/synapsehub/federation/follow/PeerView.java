package dev.synapsehub.federation.follow;

import java.util.Map;

/**
 * What this hub knows of one watched peer: where it has read the peer's log to, how that went,
 * and the claims the peer's log asserts (the advisory fold, INV-MH-2).
 *
 * @param cursor the last peer seq folded (0: none)
 * @param logEnd the peer's log end at the last successful poll (-1: unknown)
 * @param lastSuccess epoch seconds of the last successful poll (0: never)
 * @param lastError the last failed poll's reason, or null
 * @param clockSkewSeconds the peer's clock minus ours at the last connection (NaN: unknown)
 * @param quarantine why the peer is quarantined (equivocation), or null
 * @param generation the peer log generation (raised by each operator recovery)
 * @param claims by task id, every claim the peer's log asserts (live or run out)
 */
public record PeerView(String peer, long cursor, long logEnd, double lastSuccess, String lastError,
                       double clockSkewSeconds, String quarantine, long generation, Map<String, ObservedClaim> claims) {
    public PeerView {
        claims = Map.copyOf(claims);
    }

    /** A peer not yet polled. */
    public static PeerView fresh(String peer) {
        return new PeerView(peer, 0, -1, 0, null, Double.NaN, null, 0, Map.of());
    }

    /** Events the peer has that this hub has not folded yet (0 when unknown). */
    public long lag() {
        return logEnd < 0 ? 0 : Math.max(0, logEnd - cursor);
    }

    /** True while quarantined for equivocation. */
    public boolean quarantined() {
        return quarantine != null;
    }

    PeerView failed(String error, double skew) {
        return new PeerView(peer, cursor, logEnd, lastSuccess, error, Double.isNaN(skew) ? clockSkewSeconds : skew,
                quarantine, generation, claims);
    }
}
