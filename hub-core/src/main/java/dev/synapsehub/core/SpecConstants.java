package dev.synapsehub.core;

/**
 * The normative constants of the coordination spec (seed 000), named as the spec names them.
 *
 * <p>docs/coordination-spec.md carries the same table; the drift guard in spec-tests fails
 * when a row there and a value here disagree.
 */
public final class SpecConstants {
    /** Lower clamp for every lease TTL, in seconds (INV-LL-3). */
    public static final double MINIMUM_TTL_SECONDS = 30.0;
    /** Upper clamp for every lease TTL: 30 days, in seconds (INV-LL-3). */
    public static final double MAXIMUM_TTL_SECONDS = 2_592_000.0;
    /** Lease TTL used when a claim asks for none, or for a non-finite one. */
    public static final double DEFAULT_LEASE_TTL_SECONDS = 3600.0;
    /** Live claims one quota principal may hold (INV-ME-5). */
    public static final int MAX_CLAIMS_PER_AGENT = 128;
    /** Distinct declared paths per claim before the claim widens to the whole worktree. */
    public static final int MAX_DECLARED_PATHS = 512;
    /** Longest declared path, in code points, before the claim widens to the whole worktree. */
    public static final int MAX_PATH_LENGTH = 4096;
    /** The worktree label of a claim that names none: the root. */
    public static final String DEFAULT_WORKTREE = "";
    /** How far in the past a signed frame's timestamp may lie (INV-CK-2). */
    public static final double DEFAULT_MESSAGE_AUTH_WINDOW_SECONDS = 10.0;
    /** How far in the future a signed frame's timestamp may lie (INV-CK-2). */
    public static final double DEFAULT_MESSAGE_AUTH_FUTURE_SKEW_SECONDS = 1.0;
    /** How long a name-ownership lease survives its holder's disconnect. */
    public static final double DEFAULT_LEASE_OFFLINE_TTL = 3600.0;
    /** How long a resource offer lives without a refresh. */
    public static final double DEFAULT_RESOURCE_TTL_SECONDS = 300.0;
    /** The wire protocol version this hub speaks. */
    public static final int WIRE_PROTOCOL_VERSION = 2;
    /** Close code for a bind refused because another holder owns the name. */
    public static final int NAME_OWNED_CLOSE_CODE = 4016;

    private SpecConstants() {
    }
}
