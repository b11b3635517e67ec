package dev.synapsehub.federation.route;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.AuditJournal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Journals partition transitions (contract §11.2, §12.4): entering a partition and a change of
 * its contesting hubs as {@code multihub_partition} ({@code entered} / {@code updated}), its end
 * as {@code multihub_heal}. The last journaled state is restored at start-up, so a restart
 * neither forgets an unresolved partition nor journals it twice. Refreshed from one thread.
 */
public final class PartitionTracker {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionTracker.class);
    private final OwnershipResolver resolver;
    private final AuditJournal audit;
    private final Map<String, Set<String>> partitioned = new TreeMap<>();

    /** {@code restored}: the unresolved partitions the journal holds (namespace → contesting hubs). */
    public PartitionTracker(OwnershipResolver resolver, AuditJournal audit, Map<String, Set<String>> restored) {
        this.resolver = resolver;
        this.audit = audit;
        partitioned.putAll(restored);
        resolver.journaledPartitions().addAll(restored.keySet());
        restored.forEach((ns, hubs) -> LOG.warn("namespace '{}' was partitioned at shutdown (contested by {}); "
                + "claims in it stay refused until the observation clears", ns, hubs));
    }

    /**
     * The unresolved partitions in journal order of {@code records} (kind, payload): an entry or
     * update sets a namespace's contesting hubs, a heal removes it.
     */
    public static Map<String, Set<String>> unresolved(java.util.List<Map.Entry<String, com.fasterxml.jackson.databind.JsonNode>> records) {
        Map<String, Set<String>> out = new TreeMap<>();
        for (Map.Entry<String, com.fasterxml.jackson.databind.JsonNode> r : records) {
            String ns = r.getValue().path("namespace").asText(null);
            if (ns == null) {
                continue;
            }
            if ("multihub_partition".equals(r.getKey())) {
                Set<String> hubs = new TreeSet<>();
                r.getValue().path("contesting_hubs").forEach(h -> hubs.add(h.asText()));
                out.put(ns, hubs);
            } else if ("multihub_heal".equals(r.getKey())) {
                out.remove(ns);
            }
        }
        return out;
    }

    /** The payload of a {@code multihub_partition} record ({@code entered} or {@code updated}). */
    public static ObjectNode partitionPayload(NamespaceOwners owners, String ns, Set<String> contesting, boolean entered) {
        ObjectNode p = AuditJournal.payload();
        p.put("namespace", ns);
        p.put("local_hub_id", owners.localHubId());
        p.put("owner_hub_id", owners.owner(ns));
        ArrayNode hubs = p.putArray("contesting_hubs");
        contesting.forEach(hubs::add);
        p.put("outcome", "partitioned");
        p.put("transition", entered ? "entered" : "updated");
        return p;
    }

    /** The payload of a {@code multihub_heal} record. */
    public static ObjectNode healPayload(NamespaceOwners owners, String ns, java.util.Collection<String> before) {
        ObjectNode p = AuditJournal.payload();
        p.put("namespace", ns);
        p.put("local_hub_id", owners.localHubId());
        p.put("owner_hub_id", owners.owner(ns));
        ArrayNode hubs = p.putArray("previous_contesting_hubs");
        before.forEach(hubs::add);
        p.put("outcome", (owners.localHubId().equals(owners.owner(ns)) ? Ownership.LOCAL : Ownership.REMOTE).wire());
        p.put("observation_refreshed", true);
        return p;
    }

    /** The partitions as last journaled. */
    public synchronized Map<String, Set<String>> current() {
        return new TreeMap<>(partitioned);
    }

    /** Compares the fold's view with the journaled state and journals each transition. */
    public synchronized void refresh(double now) {
        NamespaceOwners owners = resolver.owners();
        for (String ns : owners.owners().keySet()) {
            Set<String> contesting = resolver.contesting(ns, now);
            Set<String> before = partitioned.get(ns);
            if (!contesting.isEmpty() && !contesting.equals(before)) {
                ObjectNode p = partitionPayload(owners, ns, contesting, before == null);
                if (audit.record("multihub_partition", p).join()) {
                    partitioned.put(ns, new TreeSet<>(contesting));
                    resolver.journaledPartitions().add(ns);
                    LOG.warn("namespace '{}' {} a partition: contested by {}; every claim in it is refused",
                            ns, before == null ? "entered" : "changed", contesting);
                }
            } else if (contesting.isEmpty() && before != null) {
                ObjectNode p = healPayload(owners, ns, before);
                if (audit.record("multihub_heal", p).join()) {
                    partitioned.remove(ns);
                    resolver.journaledPartitions().remove(ns);
                    LOG.info("namespace '{}' healed: no longer contested", ns);
                }
            }
        }
    }
}
