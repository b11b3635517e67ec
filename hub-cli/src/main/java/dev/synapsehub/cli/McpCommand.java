package dev.synapsehub.cli;

import dev.synapsehub.mcp.McpFace;
import dev.synapsehub.mcp.McpSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;

/** {@code synapse-hub mcp}: the MCP face, a stdio Model Context Protocol server acting as one agent. */
@Command(name = "mcp", mixinStandardHelpOptions = true, sortOptions = false, footer = ExitCodes.HELP_FOOTER,
        description = {
            "Serve MCP (Model Context Protocol) on stdio as one agent of a hub, for coding agents.",
            "",
            "Claude Code: claude mcp add synapse -- synapse-hub mcp --name proj/me. Tools: claim, renew, release, "
                    + "handoff, checkpoint, task_update, ledger_task, ledger_task_update, ledger_progress, send, inbox, "
                    + "state, who, board; resources synapse://state, synapse://who, synapse://board, synapse://link. "
                    + "The connection is kept alive and re-established when the hub restarts; state-changing calls "
                    + "carry an idem_key, so a retry is applied once. Logs go to stderr. See docs/mcp.md."})
public final class McpCommand implements Callable<Integer> {
    @Option(names = "--name", required = true, paramLabel = "[NS/]AGENT",
            description = "Agent name to register as; claims made through the tools are owned by it. The namespace "
                    + "(project) before '/' is optional, as on the hub: it is what a project address reaches.")
    String name;

    @Option(names = "--url", paramLabel = "URI", defaultValue = "${env:SYNAPSE_URI:-ws://127.0.0.1:8876}",
            description = "Hub to connect to (default: $SYNAPSE_URI or ws://127.0.0.1:8876).")
    URI url;

    @Option(names = "--token", description = "Connect token, for a secured hub (prefer --token-file or SYNAPSE_TOKEN).")
    String token;

    @Option(names = "--token-file", paramLabel = "FILE", description = "Read the connect token from this file.")
    Path tokenFile;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "15",
            description = "How long a tool call waits for the hub, reconnecting included (default: ${DEFAULT-VALUE}).")
    double timeoutSeconds;

    @Option(names = "--cursor-file", paramLabel = "FILE",
            description = "Keep the inbox cursor (the last message seq read) in this file, so a new session does not "
                    + "replay messages already read (default: none; the hub's mailbox replays from the start).")
    Path cursorFile;

    @Option(names = "--inbox-size", paramLabel = "N", defaultValue = "1000",
            description = "Items kept until read; beyond it the oldest are dropped and counted (default: ${DEFAULT-VALUE}).")
    int inboxSize;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        McpSettings settings;
        try {
            settings = new McpSettings(url, name, ClientOptions.readToken(token, tokenFile),
                    Duration.ofMillis((long) (timeoutSeconds * 1000)), McpSettings.DEFAULT_HEARTBEAT, inboxSize,
                    cursorFile);
        } catch (IllegalArgumentException | IOException e) {
            spec.commandLine().getErr().println("synapse-hub mcp: " + e.getMessage());
            return ExitCodes.USAGE;
        }
        // stdout carries the protocol only: anything else that prints goes to stderr
        PrintStream protocol = System.out;
        System.setOut(System.err);
        try {
            McpFace.run(settings, VersionProvider.version(), System.in, protocol);
        } catch (IOException e) {
            spec.commandLine().getErr().println("synapse-hub mcp: " + e.getMessage());
            return ExitCodes.USAGE;
        } finally {
            System.setOut(protocol);
        }
        return ExitCodes.OK;
    }
}
