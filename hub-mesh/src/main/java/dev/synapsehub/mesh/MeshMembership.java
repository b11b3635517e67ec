package dev.synapsehub.mesh;

import dev.synapsehub.mesh.MeshAdmin.MeshAdminException;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * Membership changes of a running mesh over Raft's admin channel: what {@code synapse-hub mesh
 * add-node} and {@code mesh remove-node} do. Each is one Ratis configuration change made by the
 * leader (joint consensus: a commit needs a majority of the old and of the new voters while it
 * happens), so writes keep committing throughout. A new voter catches up first (by snapshot
 * install when the leader's log was compacted) and counts toward the quorum only once the new
 * configuration commits. The group id does not change ({@link MeshGroup}).
 */
public final class MeshMembership {
    private MeshMembership() {
    }

    /**
     * A committed membership change.
     *
     * @param group the mesh's Raft group (unchanged)
     * @param leader the leader that made the change
     * @param before the voters before, as given
     * @param after the voters after, as the leader's committed configuration holds them
     */
    public record Change(UUID group, String leader, List<MeshPeer> before, List<MeshPeer> after) {
    }

    /**
     * Adds {@code added} as a voter of the mesh whose voters are {@code peers}. The new node must
     * already run with the mesh's group ({@code --mesh-group}, shown by {@code mesh status}).
     *
     * @throws IllegalArgumentException when its id is already a voter or its address is another voter's
     * @throws MeshAdminException when the mesh or the new node is not ready, or the change does not commit in time
     */
    public static Change addNode(List<MeshPeer> peers, MeshPeer added, Duration timeout)
            throws MeshAdminException, InterruptedException {
        return addNode(peers, added, timeout, null);
    }

    /** As above, over mutual TLS when {@code tls} is not null. */
    public static Change addNode(List<MeshPeer> peers, MeshPeer added, Duration timeout, MeshTls tls)
            throws MeshAdminException, InterruptedException {
        for (MeshPeer p : peers) {
            if (p.id().equals(added.id())) {
                throw new IllegalArgumentException("'" + added.id() + "' is already a voter of the mesh " + ids(peers));
            }
            if (p.address().equals(added.address())) {
                throw new IllegalArgumentException(added.address() + " is the Raft address of voter " + p.id());
            }
        }
        List<MeshPeer> after = new ArrayList<>(peers);
        after.add(added);
        UUID group = MeshGroup.discover(peers, timeout, tls);
        try (RaftClient probe = MeshGroup.client(RaftGroupId.valueOf(group), after, timeout, null, tls)) {
            List<UUID> groups = MeshGroup.groupsOf(probe, added.id());
            if (groups == null) {
                throw new MeshAdminException(added.id() + " does not answer at " + added.address()
                        + "; start it first (with --mesh-group " + group + "); nothing was changed");
            }
            if (!groups.equals(List.of(group))) {
                throw new MeshAdminException(added.id() + " at " + added.address() + " runs group " + groups
                        + ", not the mesh's group " + group + ": start it with an empty --db and --mesh-group "
                        + group + "; nothing was changed");
            }
        } catch (IOException e) {
            throw new MeshAdminException("cannot close the probe client: " + e.getMessage());
        }
        return change(group, peers, after, timeout, tls);
    }

    /**
     * Removes voter {@code removed} from the mesh whose voters are {@code peers}. The removed
     * node stops taking part once the change commits; stop it afterwards. Removing the leader
     * is allowed: it steps down once the new configuration commits and the others elect one.
     *
     * @throws IllegalArgumentException when it is not a voter, or is the only one
     * @throws MeshAdminException when no leader is agreed or the change does not commit in time
     */
    public static Change removeNode(List<MeshPeer> peers, String removed, Duration timeout)
            throws MeshAdminException, InterruptedException {
        return removeNode(peers, removed, timeout, null);
    }

    /** As above, over mutual TLS when {@code tls} is not null. */
    public static Change removeNode(List<MeshPeer> peers, String removed, Duration timeout, MeshTls tls)
            throws MeshAdminException, InterruptedException {
        if (peers.stream().noneMatch(p -> p.id().equals(removed))) {
            throw new IllegalArgumentException("'" + removed + "' is not one of the mesh's voters " + ids(peers));
        }
        if (peers.size() == 1) {
            throw new IllegalArgumentException("'" + removed + "' is the mesh's only voter; it cannot be removed");
        }
        List<MeshPeer> after = peers.stream().filter(p -> !p.id().equals(removed)).toList();
        return change(MeshGroup.discover(peers, timeout, tls), peers, after, timeout, tls);
    }

    private static Change change(UUID group, List<MeshPeer> peers, List<MeshPeer> after, Duration timeout,
                                 MeshTls tls) throws MeshAdminException, InterruptedException {
        RaftGroupId groupId = RaftGroupId.valueOf(group);
        String leader = answeringLeader(peers, timeout, tls);
        List<MeshPeer> union = new ArrayList<>(peers);
        after.stream().filter(p -> !peers.contains(p)).forEach(union::add);
        try (RaftClient client = MeshGroup.client(groupId, union, timeout, leader, tls)) {
            List<MeshPeer> current = null;
            for (MeshPeer p : peers) { // the leader first: it holds the newest configuration
                if (current == null && p.id().equals(leader)) {
                    current = MeshGroup.votersAsSeenBy(client, groupId, leader);
                }
            }
            for (int i = 0; current == null && i < peers.size(); i++) {
                current = MeshGroup.votersAsSeenBy(client, groupId, peers.get(i).id());
            }
            if (current == null) {
                throw new MeshAdminException("no voter reported the mesh's configuration; nothing was changed");
            }
            if (!ids(current).equals(ids(peers))) {
                throw new IllegalArgumentException("--mesh-peers lists " + ids(peers) + " but the mesh's voters are "
                        + ids(current) + "; give the current voters");
            }
            // a voter keeps the address the mesh holds for it: --mesh-peers gives only the added node's (a typo, or
            // one operator's view through a proxy, would otherwise rewrite a voter's address for the whole mesh)
            java.util.Map<String, MeshPeer> held = new java.util.HashMap<>();
            current.forEach(p -> held.put(p.id(), p));
            List<RaftPeer> next = new ArrayList<>();
            for (MeshPeer p : after) {
                MeshPeer use = held.getOrDefault(p.id(), p);
                next.add(RaftPeer.newBuilder().setId(use.id()).setAddress(use.address()).build());
            }
            List<RaftPeer> was = new ArrayList<>();
            for (MeshPeer p : current) {
                was.add(RaftPeer.newBuilder().setId(p.id()).setAddress(p.address()).build());
            }
            RaftClientReply reply;
            try {
                // compare-and-set: two changes at once cannot both pass the check above and one drop the other's voter
                reply = client.admin().setConfiguration(org.apache.ratis.protocol.SetConfigurationRequest.Arguments
                        .newBuilder().setServersInNewConf(next).setServersInCurrentConf(was)
                        .setMode(org.apache.ratis.protocol.SetConfigurationRequest.Mode.COMPARE_AND_SET).build());
            } catch (IOException | RuntimeException e) {
                throw new MeshAdminException("leader " + leader + " did not commit the change to " + ids(after) + ": "
                        + e.getMessage() + " (it may still; check with mesh status)");
            }
            if (reply == null || !reply.isSuccess()) {
                throw new MeshAdminException("leader " + leader + " did not commit the change to " + ids(after) + ": "
                        + (reply == null ? "no reply" : reply.getException()) + " (check with mesh status)");
            }
            List<MeshPeer> confirmed = confirmed(client, groupId, after, leader);
            return new Change(group, leader, List.copyOf(peers), confirmed);
        } catch (IOException e) {
            throw new MeshAdminException("cannot close the admin client: " + e.getMessage());
        }
    }

    /** The least a round of the answering-leader wait asks with, however little of its timeout is left. */
    static final Duration SHORTEST_ROUND = Duration.ofMillis(200);

    /**
     * The leader a majority of the voters agree on, once it answers itself. A leader that has just
     * stopped (often the very node being removed or restored) is still named by the others until
     * they elect another, and a change sent to it fails: so this waits, within {@code timeout}, for
     * an agreed leader that answers (an election in between names none).
     */
    private static String answeringLeader(List<MeshPeer> peers, Duration timeout, MeshTls tls)
            throws MeshAdminException, InterruptedException {
        return answeringLeader(within -> MeshProbe.probe(peers, within, tls), MeshConfig.quorum(peers.size()), timeout,
                Duration.ofMillis(200));
    }

    /**
     * As above, asking {@code probe} for the voters' reports every {@code pause} until {@code timeout};
     * each round is given what is left of the timeout (at least {@link #SHORTEST_ROUND}), so a voter
     * that never answers cannot make the wait run past it by a whole timeout per round.
     */
    static String answeringLeader(java.util.function.Function<Duration, List<MeshProbe.PeerReport>> probe, int quorum,
                                  Duration timeout, Duration pause) throws MeshAdminException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Duration left = Duration.ofNanos(Math.max(SHORTEST_ROUND.toNanos(), deadline - System.nanoTime()));
            List<MeshProbe.PeerReport> reports = probe.apply(left);
            String named = MeshAdmin.agreedLeader(reports, quorum);
            // a leader outside the voters given is not probed here: taken as named, the configuration check
            // then refuses the out-of-date --mesh-peers
            boolean listed = reports.stream().anyMatch(r -> r.id().equals(named));
            boolean answers = !listed || reports.stream().anyMatch(r -> r.reachable() && r.id().equals(named));
            if (named != null && answers) {
                return named;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new MeshAdminException(named == null
                        ? "no leader is agreed by a majority of the voters; nothing was changed"
                        : "the voters name " + named + " as leader, but it does not answer and no other was elected"
                                + " within " + timeout.toSeconds() + " s; nothing was changed");
            }
            Thread.sleep(pause.toMillis());
        }
    }

    /** The committed configuration, as a voter of the new one reports it (the old leader may have stepped down). */
    private static List<MeshPeer> confirmed(RaftClient client, RaftGroupId group, List<MeshPeer> after, String leader)
            throws MeshAdminException {
        List<String> askable = new ArrayList<>();
        if (after.stream().anyMatch(p -> p.id().equals(leader))) {
            askable.add(leader);
        }
        after.forEach(p -> askable.add(p.id()));
        for (String id : askable) {
            List<MeshPeer> seen = MeshGroup.votersAsSeenBy(client, group, id);
            if (seen != null && ids(seen).equals(ids(after))) {
                return seen;
            }
        }
        throw new MeshAdminException("the change to " + ids(after) + " was accepted but no voter reports it yet"
                + " (check with mesh status)");
    }

    private static Set<String> ids(List<MeshPeer> peers) {
        Set<String> ids = new TreeSet<>();
        peers.forEach(p -> ids.add(p.id()));
        return ids;
    }
}
