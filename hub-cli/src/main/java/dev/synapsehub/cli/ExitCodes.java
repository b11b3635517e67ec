package dev.synapsehub.cli;

/** Exit codes scripts can rely on; also listed in every command's help. */
public final class ExitCodes {
    /** Success. */
    public static final int OK = 0;
    /** The hub refused the request (denied claim, release, handoff…). */
    public static final int REFUSED = 1;
    /** Bad command line or configuration. */
    public static final int USAGE = 2;
    /** The hub could not be reached, or did not answer in time. */
    public static final int UNAVAILABLE = 3;
    /** A journal file is foreign, corrupt or fails verification. */
    public static final int DATA_ERROR = 4;
    /** An unexpected internal error. */
    public static final int SOFTWARE = 70;

    /** The footer printed under every command's help. */
    public static final String HELP_FOOTER = "%nExit codes: 0 ok, 1 refused by the hub, 2 usage or configuration error (also a connection the hub "
            + "refused for its token or name), 3 hub unreachable, timed out or at a limit, 4 journal invalid, "
            + "70 internal error.";

    private ExitCodes() {
    }
}
