package dev.synapsehub.cli;

import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.ClientTls;
import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The federation flags of the hub command: start-up refusals (exit 2, contract text) and a served log pull. */
class FederationCliTest {
    private final LoopbackHub hub = new LoopbackHub();

    @TempDir
    Path dir;

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    /** Server certificate, client CA, hub-a's client certificate, store and policy, all owner-only. */
    private record Setup(TestCertificates.Identity server, TestCertificates.PemPair serverFiles,
                         TestCertificates.PemPair client, Path policy) {
    }

    private Setup setup() throws Exception {
        TestCertificates.Identity server = TestCertificates.selfSigned("hub-b");
        TestCertificates.Authority ca = TestCertificates.authority("fed-client-ca");
        TestCertificates.Identity client = ca.issue("hub-a");
        ca.writeCertificate(dir, "client-ca");
        TestCertificates.writePrivate(dir.resolve("federation.json"), "{\"version\":1,\"records\":[{\"domain_id\":"
                + "\"a.example\",\"namespaces\":[\"proj\"],\"certificate_pins\":[\"" + client.pin().text() + "\"],"
                + "\"signing_key_ids\":[\"proj:hub-a:2026\"],\"scope_grants\":[],\"expires_at\":null,\"revoked\":false,"
                + "\"provenance\":{\"source\":\"t\",\"imported_at\":1.0,\"confirmed_by\":\"alice\"}}]}");
        Path policy = dir.resolve("serving-policy.json");
        TestCertificates.writePrivate(policy, "{\"version\":1,\"federation_store\":\"federation.json\","
                + "\"client_ca_file\":\"client-ca.pem\",\"grants\":[{\"sender\":\"hub-a\",\"domain_id\":\"a.example\","
                + "\"namespace\":\"proj\",\"signing_key_id\":\"proj:hub-a:2026\"}]}");
        return new Setup(server, server.write(dir, "server"), client.write(dir, "client"), policy);
    }

    @Test
    void aServingPolicyNeedsNativeTls() throws Exception {
        Setup s = setup();
        CliTest.Run run = CliTest.run("--port", "0", "--multihub-serving-policy", s.policy().toString());
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).startsWith("synapse-hub: native WSS requires both --tls-certfile and --tls-keyfile");
    }

    @Test
    void aPolicyReadableByOthersIsRefusedAtStartWithTheContractText() throws Exception {
        Setup s = setup();
        Files.setPosixFilePermissions(s.policy(), PosixFilePermissions.fromString("rw-r--r--"));
        CliTest.Run run = CliTest.run("--port", "0", "--tls-certfile", s.serverFiles().cert().toString(),
                "--tls-keyfile", s.serverFiles().key().toString(), "--multihub-serving-policy", s.policy().toString());
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).startsWith("synapse-hub: --multihub-serving-policy: " + s.policy().toAbsolutePath()
                + " is accessible by other users (mode 644); a secret file must be owner-only — run: chmod 600");
    }

    @Test
    void aHubStartedWithAPolicyServesItsLogToTheGrantedPeer() throws Exception {
        Setup s = setup();
        HubDaemon d = hub.start("--port", "0", "--db", dir.resolve("hub.db").toString(), "--hub-id", "hub-b",
                "--tls-certfile", s.serverFiles().cert().toString(), "--tls-keyfile", s.serverFiles().key().toString(),
                "--multihub-serving-policy", s.policy().toString());
        assertThat(CliTest.run("claim", "T1", "--url", "wss://127.0.0.1:" + d.port(), "--pin", s.server().pin().text(),
                "--name", "proj/b1").code()).isEqualTo(ExitCodes.OK);
        try (HubClient peer = HubClient.connect(URI.create("wss://127.0.0.1:" + d.port()), Duration.ofSeconds(5),
                ClientTls.pinned(s.server().pin()).withClientCertificate(s.client().cert(), s.client().key()))) {
            peer.awaitType("welcome", Duration.ofSeconds(5));
            peer.send(peer.frame("hub-a", "heartbeat"));
            var request = peer.frame("hub-a", "multihub_log_request");
            request.put("after_seq", 0);
            peer.send(request);
            var snapshot = peer.awaitType("multihub_log_snapshot", Duration.ofSeconds(5));
            assertThat(snapshot.path("events").findValuesAsText("kind")).contains("claim");
            assertThat(snapshot.path("log_end_seq").asLong()).isPositive();
        }
    }

    /**
     * The doctor pulls the log once as this hub's follower would: a peer that accepts the TLS
     * handshake but refuses this hub (its peering revoked) fails the route, where a handshake alone
     * passed it; a claim route to the same URI gets a line of its own, by its own rules; with the hub's name already
     * online on the peer (the hub running) the pull is not checked and says so.
     */
    @Test
    void theDoctorFailsARouteWhosePeerRefusesThisHubsLogPulls() throws Exception {
        Setup s = setup();
        HubDaemon d = hub.start("--port", "0", "--db", dir.resolve("hub.db").toString(), "--hub-id", "hub-b",
                "--tls-certfile", s.serverFiles().cert().toString(), "--tls-keyfile", s.serverFiles().key().toString(),
                "--multihub-serving-policy", s.policy().toString());
        String uri = "wss://127.0.0.1:" + d.port();
        String pin = s.server().pin().text();
        String[] doctor = {"federation", "doctor", "--hub-id", "hub-a", "--namespace-owner", "proj=hub-b",
            "--multihub-watch", "hub-b=" + uri, "--multihub-watch-pin", "hub-b=" + pin,
            "--claim-peer", "hub-b=" + uri, "--claim-peer-pin", "hub-b=" + pin,
            "--multihub-client-certfile", s.client().cert().toString(),
            "--multihub-client-keyfile", s.client().key().toString()};

        CliTest.Run granted = CliTest.run(doctor);
        assertThat(granted.code()).as(granted.out()).isEqualTo(ExitCodes.OK);
        assertThat(granted.out()).contains("ok   watch hub-b: " + uri + " reachable in").contains("(TLS and pin ok)")
                .contains("a log pull as 'hub-a' is served (log end")
                .contains("ok   claim route hub-b: same endpoint as watch hub-b: ok")
                .contains("no problems found");

        try (HubClient running = HubClient.connect(URI.create(uri), Duration.ofSeconds(5),
                ClientTls.pinned(s.server().pin()).withClientCertificate(s.client().cert(), s.client().key()))) {
            running.register("hub-a", null, Duration.ofSeconds(5));
            // an open hub sends its welcome at connect, before it binds the name: a reply to a later
            // request on this connection shows the name bound before the doctor tries it
            running.send(running.frame("who_request"));
            running.awaitType("who_snapshot", Duration.ofSeconds(5));
            CliTest.Run taken = CliTest.run(doctor);
            assertThat(taken.code()).as(taken.out()).isEqualTo(ExitCodes.OK);
            assertThat(taken.out()).contains("WARN watch hub-b: " + uri)
                    .contains("'hub-a' is already online there (this hub running?), so whether it may pull the log "
                            + "is not checked")
                    .contains("WARN claim route hub-b: same endpoint as watch hub-b: not checked, see above")
                    .contains("no problems found; 2 warning(s) above");
            assertThat(CliTest.run("who", "--url", uri, "--pin", pin).out()).as("who lists it while bound")
                    .containsPattern(HUB_A_ONLINE.pattern());
        }
        // the peer unbinds 'hub-a' a moment after the close: a doctor run before that is refused name_conflict (WARN)
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        CliTest.Run who;
        do {
            who = CliTest.run("who", "--url", uri, "--pin", pin);
            if (who.code() == ExitCodes.OK && !HUB_A_ONLINE.matcher(who.out()).find()) {
                break;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        assertThat(who.code()).as(who.err()).isEqualTo(ExitCodes.OK); // else the check below would pass on nothing
        assertThat(who.out()).as("'hub-a' offline on the peer within 10 s").doesNotContainPattern("(?m)^  hub-a\\b");

        assertThat(CliTest.run("federation", "revoke", "a.example", "--store", dir.resolve("federation.json").toString())
                .code()).isEqualTo(ExitCodes.OK);
        CliTest.Run refused = CliTest.run(doctor);
        assertThat(refused.code()).as(refused.out()).isEqualTo(ExitCodes.REFUSED);
        assertThat(refused.out()).contains("FAIL watch hub-b: " + uri + " reachable in")
                .contains("but the peer refuses this hub's log pulls (log_end_seq null for 'hub-a'): check that its "
                        + "serving policy grants this hub and that this hub's client certificate is signed by its "
                        + "client CA")
                // one probe, judged by each route's rules: a null log end FAILs a watch route, WARNs a claim route
                .contains("WARN claim route hub-b: same endpoint as watch hub-b: " + uri + " reachable in")
                .contains("but a log pull as 'hub-a' answers log_end_seq null: cannot tell a refusal from an owner "
                        + "that keeps no journal")
                .doesNotContain("FAIL claim route")
                .contains("1 problem(s) found")
                .doesNotContain("no problems found");
    }

    /**
     * An owner hub without --db keeps no journal: it answers a log pull with log_end_seq null, as a
     * refusal does, yet decides forwarded claims. The doctor cannot tell the two apart, so a claim
     * route there is a WARN saying so, not a FAIL.
     */
    @Test
    void theDoctorWarnsOnAClaimRouteToAnOwnerWithoutAJournal() throws Exception {
        Setup s = setup();
        HubDaemon d = hub.start("--port", "0", "--hub-id", "hub-b",
                "--tls-certfile", s.serverFiles().cert().toString(), "--tls-keyfile", s.serverFiles().key().toString(),
                "--multihub-serving-policy", s.policy().toString());
        String uri = "wss://127.0.0.1:" + d.port();
        CliTest.Run run = CliTest.run("federation", "doctor", "--hub-id", "hub-a", "--namespace-owner", "proj=hub-b",
                "--claim-peer", "hub-b=" + uri, "--claim-peer-pin", "hub-b=" + s.server().pin().text(),
                "--multihub-client-certfile", s.client().cert().toString(),
                "--multihub-client-keyfile", s.client().key().toString());
        assertThat(run.code()).as(run.out()).isEqualTo(ExitCodes.OK);
        assertThat(run.out()).contains("WARN claim route hub-b: " + uri + " reachable in")
                .contains("answers log_end_seq null: cannot tell a refusal from an owner that keeps no journal: ")
                .contains("no problems found; 1 warning(s) above")
                .doesNotContain("FAIL");
    }

    /**
     * A peer that refuses the registration itself (identity binding: an error frame, then close
     * 4013) is reported with its error and close reason, not as "no answer to a log pull".
     */
    @Test
    void theDoctorReportsARegistrationRefusedWithAnErrorAndItsCloseReason() throws Exception {
        Path trust = dir.resolve("trust.json");
        Files.writeString(trust, "{\"identities\": {\"p/ann\": {\"key_id\": \"k-ann\", \"public_key\": \""
                + java.util.Base64.getEncoder().encodeToString(new byte[32]) + "\"}}}");
        HubDaemon d = hub.start("--port", "0", "--hub-id", "hub-b", "--require-identity-binding",
                "--identity-trust", trust.toString());
        String uri = "ws://127.0.0.1:" + d.port();
        CliTest.Run run = CliTest.run("federation", "doctor", "--hub-id", "hub-a", "--namespace-owner", "proj=hub-b",
                "--multihub-watch", "hub-b=" + uri);
        assertThat(run.code()).as(run.out()).isEqualTo(ExitCodes.REFUSED);
        assertThat(run.out()).contains("FAIL watch hub-b: " + uri + " reachable in")
                .contains("(plain ws, no TLS)").doesNotContain("TLS and pin ok")
                .contains("but the peer refused registering 'hub-a': ")
                .contains("closed 4013 identity binding failed")
                .doesNotContain("no answer to a log pull");
    }

    /** A {@code who} line of the name 'hub-a'. */
    private static final java.util.regex.Pattern HUB_A_ONLINE = java.util.regex.Pattern.compile("(?m)^  hub-a\\b");

    private static void refusedAtStart(String contractText, String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "--port";
        all[1] = "0";
        System.arraycopy(args, 0, all, 2, args.length);
        CliTest.Run run = CliTest.run(all);
        assertThat(run.code()).as(run.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("synapse-hub: " + contractText);
    }

    @Test
    void theWatchAndOwnershipFlagsRefuseWhatContractF6Refuses() throws Exception {
        refusedAtStart("--namespace-owner requires --hub-id; the ownership map compares each namespace's owner "
                + "against this hub's own stable id.", "--namespace-owner", "proj=hub-b");
        refusedAtStart("--namespace-owner names namespace 'proj' twice", "--hub-id", "hub-a",
                "--namespace-owner", "proj=hub-b", "--namespace-owner", "proj=hub-c");
        refusedAtStart("--namespace-owner must use NS=HUB_ID, got 'proj'", "--hub-id", "hub-a", "--namespace-owner", "proj");
        refusedAtStart("--multihub-watch requires --namespace-owner; the watch feeds partition detection, and without "
                + "an ownership map there is nothing to detect against.", "--multihub-watch", "b=wss://127.0.0.1:1");
        refusedAtStart("--multihub-watch names peer 'b' twice", "--hub-id", "a", "--namespace-owner", "proj=b",
                "--multihub-watch", "b=wss://127.0.0.1:1", "--multihub-watch", "b=wss://127.0.0.1:2");
        refusedAtStart("--multihub-watch-pin names 'c', which --multihub-watch does not watch", "--hub-id", "a",
                "--namespace-owner", "proj=b", "--multihub-watch", "b=wss://127.0.0.1:1",
                "--multihub-watch-pin", "c=sha256:" + "0".repeat(64));
        refusedAtStart("--multihub-watch-pin pin must be sha256:<hex>, got 'md5:abc'", "--hub-id", "a",
                "--namespace-owner", "proj=b", "--multihub-watch", "b=wss://127.0.0.1:1", "--multihub-watch-pin", "b=md5:abc");
        Setup s = setup();
        refusedAtStart("--multihub-client-certfile and --multihub-client-keyfile must be configured together.",
                "--multihub-client-certfile", s.client().cert().toString());
        refusedAtStart("multi-hub client identity requires a certificate pin for every watched peer; missing: b",
                "--hub-id", "a", "--namespace-owner", "proj=b", "--multihub-watch", "b=wss://127.0.0.1:1",
                "--multihub-client-certfile", s.client().cert().toString(),
                "--multihub-client-keyfile", s.client().key().toString());
    }

    @Test
    void theClaimRouteFlagsRefuseWhatContractF6Refuses() throws Exception {
        refusedAtStart("--claim-peer requires --namespace-owner; a forwarding route is keyed by the owning hub id, and "
                + "without an ownership map no claim is remote-owned to forward.", "--claim-peer", "b=wss://127.0.0.1:1");
        refusedAtStart("--claim-peer-pin requires --claim-peer; a pin without a route cannot secure any owner "
                + "connection.", "--claim-peer-pin", "b=sha256:" + "0".repeat(64));
        refusedAtStart("--claim-peer-pin names hubs not configured by --claim-peer: c", "--hub-id", "a",
                "--namespace-owner", "proj=b", "--claim-peer", "b=wss://127.0.0.1:1",
                "--claim-peer-pin", "c=sha256:" + "0".repeat(64));
        refusedAtStart("--claim-peer-pin pin must be sha256:<hex>, got 'abc'", "--hub-id", "a", "--namespace-owner",
                "proj=b", "--claim-peer", "b=wss://127.0.0.1:1", "--claim-peer-pin", "b=abc");
        refusedAtStart("--claim-peer names hub 'b' twice", "--hub-id", "a", "--namespace-owner", "proj=b",
                "--claim-peer", "b=wss://127.0.0.1:1", "--claim-peer", "b=wss://127.0.0.1:2");
        refusedAtStart("--claim-peer must use HUB_ID=URI, got 'wss://x:1'", "--hub-id", "a", "--namespace-owner",
                "proj=b", "--claim-peer", "wss://x:1");
        Setup s = setup();
        refusedAtStart("multi-hub client identity requires --claim-peer-pin for hub 'b'", "--hub-id", "a",
                "--namespace-owner", "proj=b", "--claim-peer", "b=wss://127.0.0.1:1",
                "--multihub-client-certfile", s.client().cert().toString(),
                "--multihub-client-keyfile", s.client().key().toString());
    }

    @Test
    void theRelayRouteFlagsRefuseWhatContractF6Refuses() throws Exception {
        refusedAtStart("--relay-peer requires --namespace-owner; relay routes are keyed by the authoritative owning hub "
                + "id.", "--relay-peer", "b=wss://127.0.0.1:1");
        refusedAtStart("--relay-peer-pin requires --relay-peer; a pin without a route cannot secure any owner "
                + "connection.", "--relay-peer-pin", "b=sha256:" + "0".repeat(64));
        refusedAtStart("--relay-peer-pin names hubs not configured by --relay-peer: c", "--hub-id", "a",
                "--namespace-owner", "proj=b", "--relay-peer", "b=wss://127.0.0.1:1",
                "--relay-peer-pin", "c=sha256:" + "0".repeat(64));
        refusedAtStart("--relay-peer-pin pin must be sha256:<hex>, got 'abc'", "--hub-id", "a", "--namespace-owner",
                "proj=b", "--relay-peer", "b=wss://127.0.0.1:1", "--relay-peer-pin", "b=abc");
        refusedAtStart("--relay-peer names hub 'b' twice", "--hub-id", "a", "--namespace-owner", "proj=b",
                "--relay-peer", "b=wss://127.0.0.1:1", "--relay-peer", "b=wss://127.0.0.1:2");
        Setup s = setup();
        refusedAtStart("multi-hub client identity requires --relay-peer-pin for hub 'b'", "--hub-id", "a",
                "--namespace-owner", "proj=b", "--relay-peer", "b=wss://127.0.0.1:1",
                "--multihub-client-certfile", s.client().cert().toString(),
                "--multihub-client-keyfile", s.client().key().toString());
    }

    @Test
    void thePeersFileRefusesRouteFlagsBesideItAndAnInvalidFileAtStart() throws Exception {
        Path peers = dir.resolve("peers.json");
        TestCertificates.writePrivate(peers, "{\"version\":1,\"claim\":[{\"hub_id\":\"b\",\"uri\":\"ws://127.0.0.1:1/\"}]}");
        refusedAtStart("--federation-peers cannot be combined with --claim-peer, --relay-peer-token: give every route, "
                + "pin and token in the peers file, or none there", "--hub-id", "a", "--namespace-owner", "proj=b",
                "--federation-peers", peers.toString(), "--claim-peer", "b=ws://127.0.0.1:1", "--relay-peer-token", "t");
        refusedAtStart("--federation-peers requires --namespace-owner", "--federation-peers", peers.toString());
        TestCertificates.writePrivate(peers, "{\"version\":1,\"claim\":[{\"hub_id\":\"b\",\"uri\":\"http://x/\"}]}");
        refusedAtStart("--federation-peers: " + peers.toAbsolutePath() + " claim[0].uri is 'http://x/'", "--hub-id", "a",
                "--namespace-owner", "proj=b", "--federation-peers", peers.toString());
        Setup s = setup();
        TestCertificates.writePrivate(peers, "{\"version\":1,\"claim\":[{\"hub_id\":\"b\",\"uri\":\"wss://127.0.0.1:1/\"}]}");
        refusedAtStart("--federation-peers: " + peers.toAbsolutePath() + " claim[0].pin is missing", "--hub-id", "a", "--namespace-owner", "proj=b",
                "--federation-peers", peers.toString(), "--multihub-client-certfile", s.client().cert().toString(),
                "--multihub-client-keyfile", s.client().key().toString());
        TestCertificates.writePrivate(peers, "{\"version\":1,\"claim\":[{\"hub_id\":\"b\",\"uri\":\"ws://127.0.0.1:1/\"}]}");
        HubDaemon d = hub.start("--port", "0", "--hub-id", "a", "--namespace-owner", "proj=b",
                "--federation-peers", peers.toString());
        assertThat(d.port()).as("a valid peers file starts the hub").isPositive();
    }

    /**
     * A route's token_file is checked at start as the peers file is: a token file readable by
     * others, a symbolic link or a missing one refuses the start (exit 2) naming the peers file,
     * the route's field and the fix; {@code federation doctor} shows each token file, or the same
     * refusal.
     */
    @Test
    void aTokenFileIsCheckedAtStartAndByTheDoctorNamingTheField() throws Exception {
        Path token = dir.resolve("b.token");
        TestCertificates.writePrivate(token, "s3cret\n");
        Path peers = dir.resolve("peers.json");
        TestCertificates.writePrivate(peers, "{\"version\":1,\"claim\":[{\"hub_id\":\"b\",\"uri\":\"ws://127.0.0.1:1/\","
                + "\"token_file\":\"b.token\"}]}");
        String[] flags = {"--hub-id", "a", "--namespace-owner", "proj=b", "--federation-peers", peers.toString()};

        java.nio.file.Files.setPosixFilePermissions(token, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        refusedAtStart("--federation-peers: " + peers.toAbsolutePath() + " claim[0].token_file: " + token.toAbsolutePath()
                + " is accessible by other users (mode 644); a secret file must be owner-only — run: chmod 600 "
                + token.toAbsolutePath(), flags);
        CliTest.Run doctorBad = CliTest.run(concat(new String[] {"federation", "doctor"}, flags));
        assertThat(doctorBad.code()).isEqualTo(ExitCodes.REFUSED);
        assertThat(doctorBad.out()).contains("FAIL configuration: --federation-peers: " + peers.toAbsolutePath()
                + " claim[0].token_file:").contains("chmod 600");

        java.nio.file.Files.setPosixFilePermissions(token, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        java.nio.file.Files.move(token, dir.resolve("real.token"));
        java.nio.file.Files.createSymbolicLink(token, dir.resolve("real.token"));
        refusedAtStart("--federation-peers: " + peers.toAbsolutePath() + " claim[0].token_file: cannot securely open "
                + token.toAbsolutePath() + ": Too many levels of symbolic links", flags);
        java.nio.file.Files.delete(token);
        refusedAtStart("--federation-peers: " + peers.toAbsolutePath() + " claim[0].token_file: cannot securely open "
                + token.toAbsolutePath() + ": No such file or directory — write the token to that file alone", flags);

        java.nio.file.Files.move(dir.resolve("real.token"), token);
        CliTest.Run doctor = CliTest.run(concat(new String[] {"federation", "doctor"}, flags));
        assertThat(doctor.out()).contains("ok   configuration: validates")
                .contains("ok   token file claim[0].token_file: " + token.toAbsolutePath() + ": owner-only, one line");
        HubDaemon d = hub.start(concat(new String[] {"--port", "0"}, flags));
        assertThat(d.port()).as("a valid token file starts the hub").isPositive();
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void helpExplainsTheServingPolicy() {
        assertThat(CliTest.run("--help").out()).contains("--multihub-serving-policy").contains("owner-only")
                .contains("--multihub-watch=PEER=URI").contains("--namespace-owner").contains("--multihub-watch-pin");
    }
}
