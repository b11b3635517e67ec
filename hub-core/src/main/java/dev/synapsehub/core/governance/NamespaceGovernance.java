package dev.synapsehub.core.governance;

import dev.synapsehub.core.event.AuditRecordEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The unresolved namespace partitions and the quarantined peers, applied from the federation
 * audit records ({@code multihub_partition}, {@code multihub_heal}, {@code multihub_equivocation},
 * {@code multihub_equivocation_recovery}) on the one apply path, so every replica that applied
 * the same log holds the same set, and a snapshot image carries it (a mesh node that installed
 * a snapshot skips the covered rows, so it cannot read them back from its journal copy).
 *
 * <p>The records stay audit-only for leases (INV-RR-3: applying one creates or alters none);
 * what this adds is the refusal: with claims governed ({@link #govern}), a claim in a governed
 * namespace left partitioned is refused where it is decided (INV-CR-4), on a mesh the leader's
 * actor, whichever node the claim arrived at. A payload this reader cannot read changes nothing
 * (the records are written by the hub's own federation code).
 */
public final class NamespaceGovernance {
    private final Map<String, Partition> partitions = new TreeMap<>();
    private final Map<String, String> quarantines = new TreeMap<>();
    private final UndoLog undo;
    private Map<String, String> governed = Map.of();
    /** The partitioned namespaces as of the last ended batch: the edge's view (a rolled-back record never shows). */
    private volatile java.util.Set<String> committedPartitions = java.util.Set.of();
    /** The quarantined peers as of the last ended batch (a mesh node's /health reads them). */
    private volatile java.util.Set<String> committedQuarantines = java.util.Set.of();
    private boolean publishPending;

    /** Governance recording its changes in {@code undo}. */
    public NamespaceGovernance(UndoLog undo) {
        this.undo = undo;
    }

    /**
     * The namespaces whose claims this state refuses while partitioned (namespace to owner hub);
     * empty (the default, and a single hub's): records are applied but nothing is refused here.
     */
    public void govern(Map<String, String> owners) {
        governed = Map.copyOf(owners);
    }

    /** The governed namespaces (namespace to owner hub). */
    public Map<String, String> governed() {
        return governed;
    }

    /** The refusal of a claim by {@code agent} for {@code taskId}, or null when governance does not refuse it. */
    public Reply.Denied refusal(String agent, String taskId) {
        String ns = namespaceOf(agent);
        Partition p = partitions.get(ns);
        if (p == null || !governed.containsKey(ns)) {
            return null;
        }
        // holder carries the owner hub: the edge renders the ownership refusal of contract §11.3
        return new Reply.Denied(taskId == null ? "" : taskId, Refusal.PARTITIONED, "claim refused: namespace '" + ns
                + "' is partitioned (contested by " + String.join(", ", p.contestingHubs()) + ")",
                governed.get(ns), null);
    }

    /** The namespace of an agent name: its project prefix before the first '/', or empty. */
    public static String namespaceOf(String name) {
        int slash = name == null ? -1 : name.indexOf('/');
        return slash < 0 ? "" : name.substring(0, slash);
    }

    /** Applies a federation audit record (live and on replay); other events change nothing. */
    public void apply(CoordinationEvent event) {
        if (!(event instanceof AuditRecordEvent a) || !a.kind().startsWith("multihub_")) {
            return;
        }
        AuditPayload p;
        try {
            p = AuditPayload.read(a.payloadJson());
        } catch (IllegalArgumentException | IndexOutOfBoundsException unreadable) {
            return; // not written by this hub's federation code; nothing to govern by
        }
        switch (a.kind()) {
            case "multihub_partition" -> {
                String ns = p.text("namespace");
                if (ns != null) {
                    set(partitions, ns, new Partition(ns, p.text("owner_hub_id"), p.texts("contesting_hubs")));
                }
            }
            case "multihub_heal" -> {
                String ns = p.text("namespace");
                if (ns != null) {
                    set(partitions, ns, null);
                }
            }
            case "multihub_equivocation" -> {
                String peer = p.text("peer_id");
                if (peer != null) {
                    set(quarantines, peer, "equivocation: accepted " + p.text("accepted_fingerprint") + ", now "
                            + p.text("conflicting_fingerprint"));
                }
            }
            case "multihub_equivocation_recovery" -> {
                String peer = p.text("peer_id");
                if (peer != null) {
                    set(quarantines, peer, null);
                }
            }
            default -> {
            }
        }
    }

    private <V> void set(Map<String, V> map, String key, V value) {
        V before = value == null ? map.remove(key) : map.put(key, value);
        undo.record(() -> {
            if (before == null) {
                map.remove(key);
            } else {
                map.put(key, before);
            }
        });
        if (!publishPending) {
            publishPending = true;
            undo.atBatchEnd(this::publish); // at once outside a batch; after the undo steps on a rollback
        }
    }

    private void publish() {
        publishPending = false;
        committedPartitions = java.util.Set.copyOf(partitions.keySet());
        committedQuarantines = java.util.Set.copyOf(quarantines.keySet());
    }

    /**
     * The namespaces partitioned as of the last ended batch, whatever the claims governed here;
     * safe from any thread. A mesh node's edge refuses a claim it would forward by it (a forwarded
     * claim never reaches the leader's {@link #refusal}).
     */
    public java.util.Set<String> committedPartitions() {
        return committedPartitions;
    }

    /** The peers quarantined (for equivocation) as of the last ended batch; safe from any thread. */
    public java.util.Set<String> committedQuarantines() {
        return committedQuarantines;
    }

    /** The unresolved partitions, by namespace. */
    public Map<String, Partition> partitions() {
        return Collections.unmodifiableMap(new TreeMap<>(partitions));
    }

    /** The quarantined peers and why, by peer label. */
    public Map<String, String> quarantines() {
        return Collections.unmodifiableMap(new TreeMap<>(quarantines));
    }

    /** Everything held, as data (a snapshot image). */
    public Image image() {
        return new Image(new ArrayList<>(partitions.values()), quarantines);
    }

    /** Loads an image into this empty governance. */
    public void restore(Image image) {
        if (!partitions.isEmpty() || !quarantines.isEmpty()) {
            throw new IllegalStateException("restore needs an empty governance");
        }
        for (Partition p : image.partitions()) {
            partitions.put(p.namespace(), p);
        }
        quarantines.putAll(image.quarantines());
        committedPartitions = java.util.Set.copyOf(partitions.keySet());
        committedQuarantines = java.util.Set.copyOf(quarantines.keySet());
    }

    /**
     * The governance part of a state image.
     *
     * @param partitions by namespace, ascending
     * @param quarantines peer label to reason, ascending by label
     */
    public record Image(List<Partition> partitions, Map<String, String> quarantines) {
        /** Nothing partitioned, nobody quarantined (images of snapshots that did not carry governance). */
        public static final Image EMPTY = new Image(List.of(), Map.of());

        public Image {
            partitions = partitions == null ? List.of() : List.copyOf(partitions);
            quarantines = quarantines == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(quarantines));
        }
    }
}
