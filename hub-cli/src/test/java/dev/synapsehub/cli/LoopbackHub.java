package dev.synapsehub.cli;

import picocli.CommandLine;

/** A hub started from command-line arguments on a loopback port, for tests of the commands against it. */
final class LoopbackHub implements AutoCloseable {
    private HubDaemon daemon;

    /** Starts a hub as {@code synapse-hub ARGS} would (pass {@code --port 0}). */
    HubDaemon start(String... args) throws Exception {
        return start(dev.synapsehub.journal.SnapshotReadAhead.none(), args);
    }

    /** As {@link #start(String...)}, loading the snapshot {@code readAhead} read if it is the one chosen. */
    HubDaemon start(dev.synapsehub.journal.SnapshotReadAhead readAhead, String... args) throws Exception {
        SynapseHubCommand command = new SynapseHubCommand();
        new CommandLine(command).parseArgs(args);
        daemon = HubDaemon.start(command.serve, command.federation, () -> false, readAhead);
        return daemon;
    }

    /** The running hub's WebSocket URL. */
    String url() {
        return "ws://127.0.0.1:" + daemon.port();
    }

    /** Stops the hub, if one runs. */
    @Override
    public void close() throws Exception {
        if (daemon != null) {
            daemon.close();
            daemon = null;
        }
    }
}
