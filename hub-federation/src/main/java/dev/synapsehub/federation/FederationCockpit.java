package dev.synapsehub.federation;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.follow.AdvisoryFold;
import dev.synapsehub.federation.follow.ObservedClaim;
import dev.synapsehub.federation.follow.PeerView;
import dev.synapsehub.federation.serve.ObservedQuery;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * What the operator cockpit shows of federation: per watched peer whether its last poll
 * worked, the cursor, lag, clock skew, quarantine, last error and the namespaces it contests
 * (a partition), and the claims the peers' logs assert, paged and filtered here. Everything is
 * read from the advisory fold and the partition tracker as they are; it grants nothing (INV-MH-2).
 */
final class FederationCockpit {
    private final String hubId;
    private final AdvisoryFold fold;
    private final Supplier<Map<String, Set<String>>> partitions;

    FederationCockpit(String hubId, AdvisoryFold fold, Supplier<Map<String, Set<String>>> partitions) {
        this.hubId = hubId;
        this.fold = fold;
        this.partitions = partitions;
    }

    /** {@code {kind: federation, hub_id, peers: [...], partitions: [...]}}. */
    ObjectNode status(double now) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("kind", "federation");
        o.put("hub_id", hubId);
        Map<String, Set<String>> contested = partitions.get();
        ArrayNode peers = o.putArray("peers");
        for (PeerView v : fold.peers()) {
            ObjectNode p = ObservedQuery.render(v, now, false);
            // reachable: the last poll succeeded (a failure since sets last_error until the next success)
            p.put("reachable", v.lastSuccess() > 0 && v.lastError() == null);
            p.put("observed_claims", v.claims().size());
            p.put("observed_live_claims", v.claims().values().stream().filter(c -> c.liveAt(now)).count());
            ArrayNode ns = p.putArray("partitioned_namespaces");
            contested.forEach((namespace, hubs) -> {
                if (hubs.contains(v.peer())) {
                    ns.add(namespace);
                }
            });
            peers.add(p);
        }
        ArrayNode parts = o.putArray("partitions");
        contested.forEach((namespace, hubs) -> {
            ObjectNode p = parts.addObject();
            p.put("namespace", namespace);
            hubs.forEach(p.putArray("contesting_hubs")::add);
        });
        return o;
    }

    /** The claims the watched peers assert, by peer then task, those matching, one page. */
    ObjectNode observed(Predicate<String> matches, int offset, int limit, double now) {
        List<ObservedClaim> all = new ArrayList<>();
        for (PeerView v : fold.peers()) {
            all.addAll(v.claims().values());
        }
        all.sort(Comparator.comparing(ObservedClaim::peer).thenComparing(ObservedClaim::taskId));
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("advisory", true);
        ArrayNode rows = o.putArray("claims");
        int matched = 0;
        for (ObservedClaim c : all) {
            if (!(matches.test(c.taskId()) || matches.test(c.owner()) || matches.test(c.peer())
                    || matches.test(c.namespace()))) {
                continue;
            }
            if (matched++ < offset || rows.size() >= limit) {
                continue;
            }
            ObjectNode r = rows.addObject();
            r.put("observed_on", c.peer());
            r.put("task_id", c.taskId());
            r.put("owner", c.owner());
            r.put("namespace", c.namespace());
            r.put("lease_expires_at", c.leaseExpiresAt());
            r.put("live", c.liveAt(now));
            r.put("epoch", c.epoch());
            r.put("status", c.status());
            r.put("seq", c.seq());
        }
        o.put("total", all.size());
        o.put("matched", matched);
        o.put("offset", offset);
        o.put("limit", limit);
        return o;
    }
}
