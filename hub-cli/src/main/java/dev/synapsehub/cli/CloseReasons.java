package dev.synapsehub.cli;

import dev.synapsehub.client.HubClient.CloseStatus;

/**
 * What a hub's close of an operator command's connection means, and what to do about it
 * (docs/protocol.md, "Close codes"), with the exit code that fits: the command line's to fix
 * (2) or the hub's state (3).
 */
record CloseReasons(String explanation, int exitCode) {

    /** The explanation of {@code status} for a command connected as {@code name}. */
    static CloseReasons of(CloseStatus status, String name) {
        String reason = status.reason() == null ? "" : status.reason();
        return switch (status.code()) {
            case 4009 -> switch (reason) {
                case "name conflict" -> usage("the name " + name + " is bound to another live connection (another"
                        + " synapse-hub command, such as tail, uses the same default --name operator/cli): pass a unique --name");
                case "reserved identity" -> usage("the name " + name + " is reserved for the hub: pass another --name");
                default -> usage("the hub refused the name " + name + ": pass another --name");
            };
            case 4016 -> usage("the name " + name + " is held by an ownership lease: pass another --name");
            // the contract's classification (§3.2): 4010 with "auth" is authentication, otherwise a takeover
            case 4010 -> reason.contains("auth")
                    ? usage("auth denied: give the hub's token with --token, --token-file or SYNAPSE_TOKEN")
                    : reason.contains("registration")
                    ? usage("the first frame bound no name: pass a valid --name")
                    : unavailable("another connection took over the name " + name + " (takeover): it is in use"
                            + " elsewhere; pass another --name to run beside it");
            case 4013 -> reason.startsWith("identity")
                    ? usage("the name " + name + " is pinned to another key on this hub (identity pinning): pass another"
                            + " --name, or have the hub's operator reclaim the pin")
                    : unavailable("the hub has --max-clients connections open: close some, or raise --max-clients on the hub");
            case 4014 -> reason.contains("takeover")
                    ? unavailable("the hub refused a takeover of the name " + name + " (" + reason + "): wait, or pass"
                            + " another --name")
                    : reason.contains("failed authentication")
                    ? unavailable("this address made too many failed authentication attempts (--auth-fail-limit on the"
                            + " hub): the hub refuses it, whatever the token, until its back-off passes: retry later,"
                            + " and fix the client here with a stale token")
                    : unavailable("the hub has --max-unauth-clients connections waiting to authenticate: retry later,"
                            + " or raise --max-unauth-clients on the hub");
            case 4015 -> unavailable("the hub has --max-connections-per-host connections open from this address: close"
                    + " some, or start the hub with --max-connections-per-host 0 (no limit)");
            case -1 -> unavailable("the connection dropped without a close frame (the hub stopped, or the network failed)");
            default -> unavailable("see docs/protocol.md, \"Close codes\"");
        };
    }

    /** One line: the close code, the hub's reason, and the explanation. */
    String line(String url, CloseStatus status) {
        String code = status.code() < 0 ? "" : " (" + status.code()
                + (status.reason() == null || status.reason().isEmpty() ? "" : " " + status.reason()) + ")";
        return url + ": the hub closed the connection" + code + ": " + explanation;
    }

    private static CloseReasons usage(String text) {
        return new CloseReasons(text, ExitCodes.USAGE);
    }

    private static CloseReasons unavailable(String text) {
        return new CloseReasons(text, ExitCodes.UNAVAILABLE);
    }
}
