package dev.synapsehub.mesh;

/**
 * The replication contract's identity (seed 001 §3): every envelope carries {@code protocol}
 * and {@code version}; minor versions are additive, a major version change is refused.
 */
public final class MeshProtocol {
    /** The contract's protocol id. */
    public static final String PROTOCOL = "fusion.shared-mesh";
    /** The version this node writes. */
    public static final String VERSION = "1.0";
    /** The major version this node reads. */
    static final int MAJOR = 1;

    private MeshProtocol() {
    }

    /**
     * Why a record with this protocol and version cannot be read, or null when it can (same
     * protocol, same major version; a newer minor only adds members, which readers ignore).
     */
    public static String incompatibility(String protocol, String version) {
        if (!PROTOCOL.equals(protocol)) {
            return "protocol '" + protocol + "' is not " + PROTOCOL;
        }
        if (version == null) {
            return "no version";
        }
        int dot = version.indexOf('.');
        String major = dot < 0 ? version : version.substring(0, dot);
        try {
            if (Integer.parseInt(major) != MAJOR) {
                return "version " + version + " has another major version than " + VERSION;
            }
        } catch (NumberFormatException e) {
            return "version '" + version + "' is not major.minor";
        }
        return null;
    }
}
