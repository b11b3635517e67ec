package dev.synapsehub.bench;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.RegistryLimits;
import dev.synapsehub.core.event.ClaimSnapshotEvent;

import java.util.List;

/** Builds registries holding many live, non-overlapping claims in one worktree. */
final class Population {
    /** The single worktree every benchmark claim lives in. */
    static final String WORKTREE = "wt-main";
    /** Registry time at which populations are built. */
    static final double T0 = 1_000_000.0;

    private Population() {
    }

    /** The path of the i-th populated claim: distinct, never an ancestor of another. */
    static String path(int i) {
        return "pkg" + (i % 100) + "/mod" + i + "/File.java";
    }

    /**
     * A registry holding {@code n} live claims, one per distinct owner and principal, each
     * applied as a claim snapshot at {@code T0} with lease expiry {@code expiresAt.apply(i)}.
     */
    static ClaimRegistry populate(int n, java.util.function.IntToDoubleFunction expiresAt) {
        ClaimRegistry registry = new ClaimRegistry(RegistryLimits.DEFAULTS);
        for (int i = 0; i < n; i++) {
            String agent = "agent-" + i;
            Claim claim = new Claim("task-" + i, agent, agent, "", T0, expiresAt.applyAsDouble(i),
                    ClaimStatus.CLAIMED, "", WORKTREE, List.of(path(i)), i + 1L, 0, "", null);
            registry.apply(new ClaimSnapshotEvent(T0, ClaimSnapshotEvent.Kind.CLAIM, claim));
        }
        if (registry.liveCount() != n) {
            throw new IllegalStateException("expected " + n + " live claims, got " + registry.liveCount());
        }
        // Settle the heap outside any measurement: the population is promoted to the old
        // generation, as a long-lived hub's would be, and the previous trial's garbage is gone.
        System.gc();
        return registry;
    }
}
