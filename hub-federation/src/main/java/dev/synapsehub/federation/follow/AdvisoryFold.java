package dev.synapsehub.federation.follow;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The advisory view of every watched peer (INV-MH-2): per peer, the claims its log asserts and
 * how following it goes. It is read by the ownership resolver (partition detection) and the
 * {@code multihub_observed} query, and it grants nothing: no claim path reads it to allow
 * anything. Each peer's view is replaced whole when a poll commits, so readers on any thread
 * see either the old or the new observation, never half of one.
 */
public final class AdvisoryFold {
    private final Map<String, PeerView> peers = new ConcurrentHashMap<>();
    private final Map<String, Double> complete = new ConcurrentHashMap<>();

    /**
     * Notes that a poll of {@code peer} committed at {@code at} read its log to the end it
     * reported (not one budget-bounded step of a longer read): the view is a complete observation.
     */
    public void markComplete(String peer, double at) {
        complete.merge(peer, at, Math::max);
    }

    /** When a poll of {@code peer} last read its whole log (0: never in this fold's life). */
    public double completeAt(String peer) {
        return complete.getOrDefault(peer, 0.0);
    }

    /** Starts tracking {@code view}'s peer (start-up, from the mirror). */
    public void put(PeerView view) {
        peers.put(view.peer(), view);
    }

    /** The view of one peer, or null when not watched. */
    public PeerView peer(String peer) {
        return peers.get(peer);
    }

    /** Every watched peer, by label. */
    public List<PeerView> peers() {
        List<PeerView> out = new ArrayList<>(peers.values());
        out.sort(Comparator.comparing(PeerView::peer));
        return out;
    }

    /** The peers whose logs assert a live claim in {@code namespace} at {@code now}. */
    public Set<String> asserting(String namespace, double now) {
        Set<String> out = new TreeSet<>();
        for (PeerView v : peers.values()) {
            for (ObservedClaim c : v.claims().values()) {
                if (c.namespace().equals(namespace) && c.liveAt(now)) {
                    out.add(v.peer());
                    break;
                }
            }
        }
        return out;
    }

    /** Every namespace in which some peer asserts a live claim at {@code now}. */
    public Set<String> assertedNamespaces(double now) {
        Set<String> out = new TreeSet<>();
        for (PeerView v : peers.values()) {
            for (ObservedClaim c : v.claims().values()) {
                if (c.liveAt(now)) {
                    out.add(c.namespace());
                }
            }
        }
        return out;
    }
}
