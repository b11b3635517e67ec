package dev.synapsehub.cli;

import dev.synapsehub.mesh.MeshAdmin;
import dev.synapsehub.mesh.MeshMembership;
import dev.synapsehub.mesh.MeshPeer;
import dev.synapsehub.mesh.MeshTls;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.time.Duration;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.Callable;

/** {@code synapse-hub mesh add-node} and {@code mesh remove-node}: Raft membership changes of a running mesh. */
final class MeshMembershipCommands {
    private MeshMembershipCommands() {
    }

    /** What both commands share: the current voters, the time allowed, the report. */
    abstract static class Change implements Callable<Integer> {
        @Option(names = "--mesh-peers", required = true, paramLabel = "ID=HOST:PORT[,...]",
                description = "The mesh's current voters, as given to its nodes.")
        String meshPeers;

        @Option(names = "--timeout", defaultValue = "30", paramLabel = "SECONDS",
                description = "How long the change may take, a new voter's catch-up included (default: ${DEFAULT-VALUE}).")
        double timeout;

        @Mixin
        MeshTlsOptions meshTls = new MeshTlsOptions();

        @Spec
        CommandSpec spec;

        abstract MeshMembership.Change change(List<MeshPeer> peers, Duration timeout, MeshTls tls)
                throws MeshAdmin.MeshAdminException, InterruptedException;

        @Override
        public Integer call() throws InterruptedException {
            MeshMembership.Change done;
            try {
                Duration wait = SecondsOption.positive("--timeout", timeout);
                done = change(MeshPeer.parseList(meshPeers), wait, meshTls.load());
            } catch (IllegalArgumentException e) {
                spec.commandLine().getErr().println("synapse-hub: " + e.getMessage());
                return ExitCodes.USAGE;
            } catch (MeshAdmin.MeshAdminException e) {
                spec.commandLine().getErr().println("synapse-hub: " + e.getMessage());
                if (e.getMessage().startsWith("no leader is agreed")) {
                    meshTls.noteWhenNobodyAnswered(spec.commandLine().getErr());
                }
                return ExitCodes.UNAVAILABLE;
            }
            StringJoiner voters = new StringJoiner(",");
            done.after().forEach(p -> voters.add(p.id() + "=" + p.address()));
            spec.commandLine().getOut().printf("voters %s -> %s (leader %s, group %s)%n--mesh-peers %s%n",
                    ids(done.before()), ids(done.after()), done.leader(), done.group(), voters);
            return ExitCodes.OK;
        }

        private static String ids(List<MeshPeer> peers) {
            return String.join(",", peers.stream().map(MeshPeer::id).toList());
        }
    }

    /** {@code mesh add-node --node ID=HOST:PORT}. */
    @Command(name = "add-node", mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER,
            description = {"Add a voter to the mesh: start the new node first (empty --db, --mesh-peers with itself "
                    + "added, --mesh-group as mesh status shows it), then run this; it catches up with the leader "
                    + "(by snapshot when the log was compacted) and then counts toward the quorum.",
                "Prints the new --mesh-peers for later commands and restarts. Exit 0 once the new configuration "
                        + "committed, 2 for a voter already listed, 3 when the node does not run the mesh's group, no "
                        + "leader is agreed or the change does not commit within --timeout."})
    static final class AddNode extends Change {
        @Option(names = "--node", required = true, paramLabel = "ID=HOST:PORT", description = "The new voter and its Raft address.")
        String node;

        @Override
        MeshMembership.Change change(List<MeshPeer> peers, Duration timeout, MeshTls tls)
                throws MeshAdmin.MeshAdminException, InterruptedException {
            List<MeshPeer> added = MeshPeer.parseList(node);
            if (added.size() != 1) {
                throw new IllegalArgumentException("--node takes one ID=HOST:PORT, not " + added.size());
            }
            return MeshMembership.addNode(peers, added.get(0), timeout, tls);
        }
    }

    /** {@code mesh remove-node --node ID}. */
    @Command(name = "remove-node", mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER,
            description = {"Remove a voter from the mesh; stop that node afterwards. Removing the leader is allowed: it "
                    + "steps down once the change commits.",
                "Prints the new --mesh-peers. Exit 0 once the new configuration committed, 2 for an unknown voter or "
                        + "the only one, 3 when no leader is agreed or the change does not commit within --timeout."})
    static final class RemoveNode extends Change {
        @Option(names = "--node", required = true, paramLabel = "ID", description = "The voter to remove.")
        String node;

        @Override
        MeshMembership.Change change(List<MeshPeer> peers, Duration timeout, MeshTls tls)
                throws MeshAdmin.MeshAdminException, InterruptedException {
            return MeshMembership.removeNode(peers, node, timeout, tls);
        }
    }
}
