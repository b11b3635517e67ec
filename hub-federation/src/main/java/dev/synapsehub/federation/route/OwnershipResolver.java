package dev.synapsehub.federation.route;

import dev.synapsehub.federation.follow.AdvisoryFold;
import dev.synapsehub.federation.follow.ObservedClaim;

import java.util.Set;
import java.util.TreeSet;

/**
 * Resolves a claimant's namespace against the ownership map and the advisory fold (contract
 * §11.2–11.3). Deny by default (INV-MH-3): with a map configured, a namespace absent from it is
 * ungoverned, and one in which a watched hub other than its owner and this hub asserts a live
 * claim is partitioned; neither grants (INV-CR-4). Without a map every claim is local, as on a
 * single hub (INV-MH-4). The fold is only ever read here to refuse, never to allow (INV-MH-2).
 */
public final class OwnershipResolver {
    private final NamespaceOwners owners;
    private final AdvisoryFold fold;
    private final Set<String> journaledPartitions = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final java.util.function.Supplier<Set<String>> recordedPartitions;

    public OwnershipResolver(NamespaceOwners owners, AdvisoryFold fold) {
        this(owners, fold, Set::of);
    }

    /**
     * A resolver that also refuses the namespaces {@code recordedPartitions} names: on a mesh
     * node, the partitions the cluster committed and this node applied (its own fold is empty:
     * only the leader watches), so a claim it would forward or serve is refused {@code partitioned}
     * at its edge, as a single hub refuses one. Read on every resolution; must be safe from any thread.
     */
    public OwnershipResolver(NamespaceOwners owners, AdvisoryFold fold,
                             java.util.function.Supplier<Set<String>> recordedPartitions) {
        this.owners = owners;
        this.fold = fold;
        this.recordedPartitions = recordedPartitions;
    }

    /**
     * The namespaces whose partition is journaled and not yet healed: they stay partitioned
     * until a refreshed observation heals them (fails closed across a restart, even without the
     * observation it was entered on). Maintained by {@link PartitionTracker}.
     */
    Set<String> journaledPartitions() {
        return journaledPartitions;
    }

    /** The outcome for a claim by {@code claimant} at {@code now}. */
    public Resolution resolve(String claimant, double now) {
        String ns = ObservedClaim.namespaceOf(claimant);
        if (!owners.configured()) {
            return new Resolution(Ownership.LOCAL, ns, owners.localHubId());
        }
        String owner = owners.owner(ns);
        if (owner == null) {
            return new Resolution(Ownership.UNGOVERNED, ns, null);
        }
        if (journaledPartitions.contains(ns) || recordedPartitions.get().contains(ns) || !contesting(ns, now).isEmpty()) {
            return new Resolution(Ownership.PARTITIONED, ns, owner);
        }
        return new Resolution(owner.equals(owners.localHubId()) ? Ownership.LOCAL : Ownership.REMOTE, ns, owner);
    }

    /** The watched hubs asserting a live claim in governed {@code namespace} that are neither its owner nor this hub. */
    public Set<String> contesting(String namespace, double now) {
        String owner = owners.owner(namespace);
        Set<String> out = new TreeSet<>();
        if (owner == null) {
            return out;
        }
        for (String hub : fold.asserting(namespace, now)) {
            if (!hub.equals(owner) && !hub.equals(owners.localHubId())) {
                out.add(hub);
            }
        }
        return out;
    }

    /** The ownership map. */
    public NamespaceOwners owners() {
        return owners;
    }
}
