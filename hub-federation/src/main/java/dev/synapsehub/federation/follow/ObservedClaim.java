package dev.synapsehub.federation.follow;

/**
 * A claim a peer's log asserts (INV-MH-2: advisory, it grants nothing here), tagged with the
 * peer it was observed on.
 *
 * @param namespace the project prefix of the owner ({@code proj} of {@code proj/a1}; empty without one)
 * @param seq the peer's journal seq of the event that last set it
 */
public record ObservedClaim(String peer, String taskId, String owner, String namespace, double leaseExpiresAt,
                            long epoch, String status, long seq, String kind) {
    /** The namespace of an agent name: its project prefix before the first '/', or empty. */
    public static String namespaceOf(String name) {
        int slash = name == null ? -1 : name.indexOf('/');
        return slash < 0 ? "" : name.substring(0, slash);
    }

    /** True while the lease the peer granted has not run out by {@code now} (this hub's clock). */
    public boolean liveAt(double now) {
        return leaseExpiresAt > now;
    }
}
