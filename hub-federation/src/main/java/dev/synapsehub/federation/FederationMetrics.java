package dev.synapsehub.federation;

import java.util.concurrent.atomic.AtomicLong;

import static dev.synapsehub.net.protocol.PrometheusText.counter;

/** Federation counters exported on {@code /metrics} (contract §10 names where it has them). */
public final class FederationMetrics {
    /** Peer requests refused by the serving policy (reason logged, never sent). */
    public final AtomicLong federationDenied = new AtomicLong();
    /** Log pulls answered with events to an authorised peer. */
    public final AtomicLong logRequestsServed = new AtomicLong();
    /** Events served to peers. */
    public final AtomicLong logEventsServed = new AtomicLong();
    /** Log pulls not read because the log reader had too many waiting (answered empty, log end null). */
    public final AtomicLong logRequestsBusy = new AtomicLong();
    /** Log pulls whose next rows retention had deleted (answered with an error naming the gap). */
    public final AtomicLong logRequestsCompacted = new AtomicLong();
    /** Log pages read before their pull came (the page after one just served). */
    public final AtomicLong logPagesReadAhead = new AtomicLong();
    /** Log pulls answered with a page read ahead. */
    public final AtomicLong logPagesServedAhead = new AtomicLong();
    /** Reads ahead that failed (the pull then read its page itself). */
    public final AtomicLong logReadAheadFailures = new AtomicLong();
    /** Claims this hub forwarded to an owning hub. */
    public final AtomicLong forwardedClaims = new AtomicLong();
    /** Unkeyed claims answered with the verdict of an identical forward already in flight, instead of sent again. */
    public final AtomicLong forwardedClaimsJoined = new AtomicLong();
    /** Forwarded claims the owner granted. */
    public final AtomicLong forwardedClaimsGranted = new AtomicLong();
    /** Forwarded claims refused (by the owner, by transport failure, or by timeout). */
    public final AtomicLong forwardedClaimsDenied = new AtomicLong();
    /** Forwarded claims with no answer within the bound. */
    public final AtomicLong forwardedClaimTimeouts = new AtomicLong();
    /** Claims refused here because their namespace is not owned here (remote without route, ungoverned, partitioned). */
    public final AtomicLong ownershipRefusals = new AtomicLong();
    /** Claims decided here on behalf of a peer hub. */
    public final AtomicLong peerClaimsDecided = new AtomicLong();
    /** Peers' forwarded claims whose decision threw or did not end within its bound (the peer's next were let go on). */
    public final AtomicLong peerClaimsStalled = new AtomicLong();
    /** Forwarded claims by owning hub and outcome (granted, denied, timeout, transport_failure, malformed). */
    public final LabelledCounters forwardOutcomes = new LabelledCounters("synapse_forwarded_claim_outcomes_total",
            "Forwarded claims by owning hub and outcome: granted, denied (by the owner), timeout, "
                    + "transport_failure, malformed (result).", "owner", "outcome");

    /** Appends the counters in Prometheus text format. */
    public void appendTo(StringBuilder s) {
        appendServingTo(s);
        counter(s, "synapse_forwarded_claims_total", "Claims forwarded to their namespace's owning hub"
                + " (unkeyed retries that joined an identical forward in flight included: see _joined_total).",
                forwardedClaims.get());
        counter(s, "synapse_forwarded_claims_joined_total",
                "Unkeyed claims answered with the verdict of an identical forward in flight (not sent again).",
                forwardedClaimsJoined.get());
        counter(s, "synapse_forwarded_claims_granted_total", "Forwarded claims the owner granted.",
                forwardedClaimsGranted.get());
        counter(s, "synapse_forwarded_claims_denied_total", "Forwarded claims refused (owner, transport or timeout).",
                forwardedClaimsDenied.get());
        counter(s, "synapse_forwarded_claim_timeouts_total", "Forwarded claims unanswered within 10 s.",
                forwardedClaimTimeouts.get());
        counter(s, "synapse_namespace_ownership_refusals_total",
                "Claims refused here: namespace remote without a route, ungoverned, or partitioned.",
                ownershipRefusals.get());
        counter(s, "synapse_peer_claims_decided_total", "Claims decided here on behalf of a peer hub.",
                peerClaimsDecided.get());
        counter(s, "synapse_peer_claims_stalled_total", "Claims forwarded by a peer hub whose decision here threw or"
                + " did not end within 30 s; each is logged, and the peer's later requests are decided without waiting"
                + " for it.", peerClaimsStalled.get());
        forwardOutcomes.appendTo(s);
    }

    /** Appends the log-serving counters only (a mesh node serves logs and routes nothing). */
    public void appendServingTo(StringBuilder s) {
        counter(s, "synapse_federation_denied_total", "Peer requests refused by the serving policy.", federationDenied.get());
        counter(s, "synapse_multihub_log_requests_served_total", "Log pulls served to authorised peers.",
                logRequestsServed.get());
        counter(s, "synapse_multihub_log_events_served_total", "Journal events served to peers.", logEventsServed.get());
        counter(s, "synapse_multihub_log_requests_busy_total",
                "Log pulls not read because 1,024 were already waiting for the log reader (answered empty, log end null).",
                logRequestsBusy.get());
        counter(s, "synapse_multihub_log_requests_compacted_total",
                "Log pulls whose next rows retention had deleted (answered with an error naming the gap).",
                logRequestsCompacted.get());
        counter(s, "synapse_multihub_log_pages_read_ahead_total",
                "Log pages read before their pull came (the page after one just served to a peer).",
                logPagesReadAhead.get());
        counter(s, "synapse_multihub_log_pages_served_ahead_total", "Log pulls answered with a page read ahead.",
                logPagesServedAhead.get());
        counter(s, "synapse_multihub_log_read_ahead_failures_total",
                "Reads ahead that failed (the pull then read its page itself).", logReadAheadFailures.get());
    }
}
