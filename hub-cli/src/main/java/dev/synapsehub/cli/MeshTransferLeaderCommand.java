package dev.synapsehub.cli;

import dev.synapsehub.mesh.MeshAdmin;
import dev.synapsehub.mesh.MeshPeer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code synapse-hub mesh transfer-leader --to ID}: hands a mesh's leadership to another voter. */
@Command(name = "transfer-leader", mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER,
        description = {"Make voter ID the mesh's Raft leader (the coordinator): the current leader hands over once ID "
                + "has caught up, in a new term.",
            "Exit 0 once ID reports leading, 2 for an unknown voter, 3 when no leader is agreed or the hand-over "
                    + "does not happen within --timeout."})
final class MeshTransferLeaderCommand implements Callable<Integer> {
    @Option(names = "--mesh-peers", required = true, paramLabel = "ID=HOST:PORT[,...]",
            description = "The mesh's voters, as given to its nodes.")
    String meshPeers;

    @Option(names = "--to", required = true, paramLabel = "ID", description = "The voter to lead.")
    String to;

    @Option(names = "--timeout", defaultValue = "10", paramLabel = "SECONDS",
            description = "How long the hand-over may take (default: ${DEFAULT-VALUE}).")
    double timeout;

    @Mixin
    MeshTlsOptions meshTls = new MeshTlsOptions();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws InterruptedException {
        MeshAdmin.Transfer done;
        try {
            Duration wait = SecondsOption.positive("--timeout", timeout);
            List<MeshPeer> peers = MeshPeer.parseList(meshPeers);
            done = MeshAdmin.transferLeader(peers, to, wait, meshTls.load());
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
        spec.commandLine().getOut().println(done.alreadyLeading()
                ? done.to() + " already leads (term " + done.term() + "); nothing changed"
                : "leader " + done.from() + " -> " + done.to() + " (term " + done.term() + ")");
        return ExitCodes.OK;
    }
}
