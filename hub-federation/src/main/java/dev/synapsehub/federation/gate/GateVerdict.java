package dev.synapsehub.federation.gate;

/**
 * What the federation frame gate made of one frame: {@link #LOCAL} (not a federation frame: no
 * peering enrols its signature's key id, so the hub's own path decides), or a refusal with the
 * contract's reason (F8) and the peered domain when one was resolved.
 */
public record GateVerdict(String reason, String domain) {
    /** Not a federation frame. */
    public static final GateVerdict LOCAL = new GateVerdict(null, null);

    /** A refusal before any domain was resolved. */
    static GateVerdict refuse(String reason) {
        return new GateVerdict(reason, null);
    }

    /** A refusal for the resolved {@code domain}. */
    static GateVerdict refuse(String reason, String domain) {
        return new GateVerdict(reason, domain);
    }

    /** True for a refusal. */
    public boolean refused() {
        return reason != null;
    }
}
