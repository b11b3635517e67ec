package dev.synapsehub.federation.follow;

import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.TestCertificates;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.route.ForwardSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.testing.FedHub;
import dev.synapsehub.federation.testing.Federation;
import dev.synapsehub.federation.testing.Http;
import dev.synapsehub.federation.testing.Pki;
import dev.synapsehub.federation.testing.TrustFiles;
import dev.synapsehub.federation.trust.PeersFile;
import dev.synapsehub.federation.trust.ServingTrust;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A watched peer's route from the peers file: from the check that finds it invalid (its watcher
 * looks about once a second), and while the file does not validate, every poll fails
 * (transport), the cursor and the last observation are kept and nothing new is read; once it
 * validates the watch resumes from its cursor.
 */
class PeersFileWatchTest {
    static final Duration WAIT = Duration.ofSeconds(40);
    @TempDir
    Path dir;

    @Test
    void anInvalidPeersFileStopsThePollsKeepingTheCursorUntilItValidates() throws Exception {
        Pki pki = new Pki(dir);
        Pki.HubCerts a = pki.hub("hub-a");
        Path policy = TrustFiles.servingPolicy(dir.resolve("b-trust"), pki.clientCaFile(),
                List.of(TrustFiles.peering("a.example", "proj", "k", List.of(a.client().pin().text()))),
                List.of(new TrustFiles.Grant("hub-a", "a.example", "proj", "k")));
        try (FedHub b = FedHub.serving(pki.hub("hub-b"), dir.resolve("b.db"), ServingTrust.load(policy, m -> { }))) {
            HubClient agent = b.agent("proj/b1");
            FedHub.claim(agent, "proj/b1", "T-1", "src/x");
            long end = b.durable.journal().lastSeq();
            Path peers = dir.resolve("a-peers.json");
            String good = "{\"version\":1,\"watch\":[{\"peer\":\"hub-b\",\"uri\":\"" + b.uri() + "\",\"pin\":\""
                    + b.certs.server().pin().text() + "\"}]}";
            replace(peers, good);
            WatchPeer peer = Federation.peer("hub-b", b.uri(), b.certs);
            FederationSettings settings = new FederationSettings(ServingTrust.none(), Federation.watch(a, List.of(peer)),
                    new NamespaceOwners("hub-a", Map.of("proj", "hub-b")), ForwardSettings.none(), null,
                    FederationSettings.RelayPolicy.DEFAULT, ForwardSettings.none(), peers);
            try (FedHub follower = new FedHub(a, dir.resolve("a.db"), settings)) {
                Await.until("hub-a folds hub-b's log", WAIT, () -> follower.federation.fold().peer("hub-b").cursor() == end);

                replace(peers, good.replace("\"version\":1", "\"version\":\"1\""));
                // the edit is in force from the watcher's next check (about a second): polls until then
                // still use the routes of the last check, so hub-b's next claim waits for it
                Await.until("the check finds the invalid edit", WAIT,
                        () -> metrics(follower).contains("synapse_federation_peers_file_invalid_total 1"));
                PeersFile source = (PeersFile) follower.federation.routes();
                long refusedBefore = source.refusedOperations();
                FedHub.claim(agent, "proj/b1", "T-2", "src/y");
                long after = b.durable.journal().lastSeq();
                assertThat(after).isGreaterThan(end);
                Await.until("polls refused", WAIT, () -> source.refusedOperations() > refusedBefore);
                Thread.sleep(2500); // more poll intervals: none may read past the cursor while the file is invalid
                PeerView kept = follower.federation.fold().peer("hub-b");
                assertThat(kept.cursor()).as("cursor kept").isEqualTo(end);
                assertThat(kept.claims()).as("last observation kept").containsOnlyKeys("T-1");
                assertThat(Http.get(follower, "/metrics"))
                        .contains("synapse_multihub_peer_observation_errors_total{peer=\"hub-b\",kind=\"transport\"}");

                replace(peers, good);
                Await.until("the watch resumes", WAIT, () -> follower.federation.fold().peer("hub-b").cursor() == after);
                assertThat(follower.federation.fold().peer("hub-b").claims()).containsOnlyKeys("T-1", "T-2");
            }
        }
    }

    private static String metrics(FedHub hub) {
        try {
            return Http.get(hub, "/metrics");
        } catch (Exception e) {
            return "";
        }
    }

    private static void replace(Path file, String text) throws Exception {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        TestCertificates.writePrivate(tmp, text);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
