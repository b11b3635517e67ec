package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.mesh.MeshConfig;
import dev.synapsehub.mesh.MeshGroup;
import dev.synapsehub.mesh.MeshPeer;
import dev.synapsehub.mesh.MeshProbe;
import dev.synapsehub.mesh.MeshSettingsProbe;
import dev.synapsehub.mesh.MeshStatusReads;
import dev.synapsehub.mesh.MeshTls;
import dev.synapsehub.mesh.MeshProbe.PeerReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;

/** {@code synapse-hub mesh}: its status, leader transfer and membership changes ({@code status} is here). */
@Command(name = "mesh", description = "Look at a mesh (replicated cluster, docs/mesh.md), move its leader or change "
        + "its voters.",
        mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER, subcommands = {MeshCommand.Status.class,
        MeshTransferLeaderCommand.class, MeshMembershipCommands.AddNode.class, MeshMembershipCommands.RemoveNode.class})
public final class MeshCommand {

    /** {@code mesh status --mesh-peers ...}. */
    @Command(name = "status", mixinStandardHelpOptions = true, footer = ExitCodes.HELP_FOOTER,
            description = {"Ask every voter over Raft for its role, leader, term, commit and applied index, "
                    + "lag behind the leader's commit index and last snapshot.",
                "Exit 0 when a majority answers and agrees on a leader, 3 otherwise."})
    static final class Status implements Callable<Integer> {
        @Option(names = "--mesh-peers", required = true, paramLabel = "ID=HOST:PORT[,...]",
                description = "The mesh's voters, as given to its nodes.")
        String meshPeers;

        @Option(names = "--timeout", defaultValue = "3", paramLabel = "SECONDS",
                description = "How long to wait for each voter (default: ${DEFAULT-VALUE}).")
        double timeout;

        @Option(names = "--json", description = "Print the reports as JSON.")
        boolean json;

        @Mixin
        MeshTlsOptions meshTls = new MeshTlsOptions();

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            Duration each;
            try { // as transfer-leader and add/remove-node refuse it
                each = SecondsOption.positive("--timeout", timeout);
            } catch (IllegalArgumentException e) {
                spec.commandLine().getErr().println("synapse-hub: " + e.getMessage());
                return ExitCodes.USAGE;
            }
            List<MeshPeer> peers;
            MeshTls tls;
            try {
                peers = MeshPeer.parseList(meshPeers);
                tls = meshTls.load();
            } catch (IllegalArgumentException e) {
                spec.commandLine().getErr().println("synapse-hub: " + e.getMessage());
                return ExitCodes.USAGE;
            }
            // the group is looked up once (it is kept through membership changes, so it is asked, not derived)
            UUID group = MeshGroup.discover(peers, each, tls);
            List<PeerReport> reports = MeshProbe.probe(group, peers, each, tls);
            // the voters' own configuration, which follows add-node / remove-node, not the list given here
            List<String> voters = MeshProbe.currentVoters(reports, peers);
            int quorum = MeshConfig.quorum(voters.size());
            List<String> asked = peers.stream().map(MeshPeer::id).sorted().toList();
            if (!asked.equals(voters)) {
                spec.commandLine().getErr().printf("synapse-hub: note: the mesh's voters are %s; --mesh-peers lists %s%n",
                        String.join(",", voters), String.join(",", asked));
            }
            String leader = agreedLeader(reports, quorum);
            long leaderCommit = reports.stream().filter(r -> r.id().equals(leader)).mapToLong(PeerReport::commitIndex)
                    .findFirst().orElse(-1);
            PrintWriter out = spec.commandLine().getOut();
            MeshStatusReads.Answers answers = MeshStatusReads.ask(group, peers, each, tls);
            Map<String, Integer> queued = answers.queued();
            Map<String, MeshSettingsProbe.NodeSettings> settings = answers.settings();
            if (json) {
                ObjectNode report = json(reports, leader, quorum, leaderCommit, queued).put("group", group.toString());
                SettingsColumn.put(report, settings);
                voters.forEach(report.putArray("voters")::add);
                out.println(report);
            } else {
                out.printf("leader %s, %d voters, quorum %d, offline queue: %s, group %s%n",
                        leader == null ? "none agreed" : leader, voters.size(), quorum, QueueDepths.text(queued), group);
                for (PeerReport r : reports) {
                    if (!r.reachable()) {
                        out.printf("  %-10s %-22s unreachable: %s%n", r.id(), r.address(), r.error());
                        continue;
                    }
                    out.printf("  %-10s %-22s %-9s term %-4d commit %-7d applied %-7d lag %-6s snapshot %s  %s%s%n",
                            r.id(), r.address(), r.role(), r.term(), r.commitIndex(), r.appliedIndex(),
                            leaderCommit < 0 ? "?" : String.valueOf(Math.max(0, leaderCommit - r.appliedIndex())),
                            r.lastSnapshotIndex() < 0 ? "none" : String.valueOf(r.lastSnapshotIndex()),
                            SettingsColumn.text(settings.get(r.id())), r.storageHealthy() ? "" : "  STORAGE UNHEALTHY");
                }
            }
            if (reports.stream().noneMatch(PeerReport::reachable)) {
                meshTls.noteWhenNobodyAnswered(spec.commandLine().getErr());
            }
            return leader == null ? ExitCodes.UNAVAILABLE : ExitCodes.OK;
        }

        /** The leader a majority of voters names, or null. */
        static String agreedLeader(List<PeerReport> reports, int quorum) {
            for (PeerReport r : reports) {
                if (r.leaderId() == null) {
                    continue;
                }
                long votes = reports.stream().filter(o -> r.leaderId().equals(o.leaderId())).count();
                if (votes >= quorum) {
                    return r.leaderId();
                }
            }
            return null;
        }

        private static ObjectNode json(List<PeerReport> reports, String leader, int quorum, long leaderCommit,
                                   Map<String, Integer> queued) {
            ObjectMapper mapper = new ObjectMapper();
            ObjectNode o = mapper.createObjectNode();
            o.put("leader", leader);
            o.put("quorum", quorum);
            QueueDepths.put(o, queued);
            ArrayNode nodes = o.putArray("nodes");
            for (PeerReport r : reports) {
                ObjectNode n = nodes.addObject();
                n.put("id", r.id());
                n.put("address", r.address());
                n.put("reachable", r.reachable());
                if (!r.reachable()) {
                    n.put("error", r.error());
                    continue;
                }
                n.put("role", r.role());
                n.put("leader", r.leaderId());
                n.put("term", r.term());
                n.put("commit_index", r.commitIndex());
                n.put("applied_index", r.appliedIndex());
                n.put("last_index", r.lastIndex());
                if (leaderCommit >= 0) {
                    n.put("lag", Math.max(0, leaderCommit - r.appliedIndex()));
                }
                n.put("last_snapshot_index", r.lastSnapshotIndex());
                n.put("storage_healthy", r.storageHealthy());
            }
            return o;
        }
    }
}
