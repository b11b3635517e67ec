package dev.synapsehub.cli;

import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code synapse-hub federation offer/import/list/revoke} (contract F2.1) and the status/observed views. */
class FederationStoreCliTest {
    private final LoopbackHub hub = new LoopbackHub();

    @TempDir
    Path dir;

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    @Test
    void aBundleIsOfferedImportedListedAndRevoked() throws Exception {
        String pin = TestCertificates.authority("ca").issue("hub-a").pin().text();
        Path bundle = dir.resolve("bundle.json");
        Files.writeString(bundle, "{\"domain_id\":\"a.example\",\"namespaces\":[\"proj\"],\"certificate_pins\":[\""
                + pin + "\"],\"signing_key_ids\":[\"proj:hub-a:2026\"],\"scope_grants\":[],\"expires_at\":null}");
        CliTest.Run offer = CliTest.run("federation", "offer", bundle.toString());
        assertThat(offer.code()).as(offer.err()).isEqualTo(ExitCodes.OK);
        assertThat(offer.out()).contains("domain: a.example").contains("certificate pins: " + pin)
                .contains("scope grants: 0").contains("expires: never").containsPattern("bundle fingerprint: sha256:[0-9a-f]{64}");

        Path store = dir.resolve("store/federation.json");
        CliTest.Run imported = CliTest.run("federation", "import", bundle.toString(), "--confirmed-by", "alice",
                "--source", "ticket-42", "--store", store.toString());
        assertThat(imported.out()).contains("imported peering with domain 'a.example' (1 namespaces, 1 keys, 1 pins), "
                + "confirmed by alice");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(store))).isEqualTo("rw-------");
        assertThat(CliTest.run("federation", "import", bundle.toString(), "--confirmed-by", "bob", "--store",
                store.toString()).out()).startsWith("updated peering with domain 'a.example'");
        CliTest.Run list = CliTest.run("federation", "list", "--store", store.toString());
        assertThat(list.out()).startsWith("[active] a.example: 1 namespaces, 1 keys, 1 pins; expires never; "
                + "from bundle.json, confirmed by bob");
        assertThat(CliTest.run("federation", "list", "--store", store.toString(), "--max-age", "-1").code())
                .isEqualTo(ExitCodes.REFUSED);
        assertThat(CliTest.run("federation", "revoke", "a.example", "--store", store.toString()).out())
                .contains("revoked peering with domain 'a.example'");
        assertThat(CliTest.run("federation", "list", "--store", store.toString()).out()).startsWith("[revoked] a.example");
        assertThat(CliTest.run("federation", "revoke", "z.example", "--store", store.toString()).code())
                .isEqualTo(ExitCodes.REFUSED);
    }

    @Test
    void fetchingWithAWrongTokenSaysAuthDeniedAtOnceAsOperatorCommandsDo() throws Exception {
        Path token = dir.resolve("token.txt");
        Files.writeString(token, "the-right-token-0123456789abcdef\n");
        HubDaemon d = hub.start("--port", "0", "--token-file", token.toString());
        CliTest.Run fetch = CliTest.run("federation", "fetch", "ws://127.0.0.1:" + d.port(), "--out",
                dir.resolve("x.json").toString(), "--token", "wrong", "--timeout", "60");
        assertThat(fetch.code()).as(fetch.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(fetch.err()).contains("the hub closed the connection (4010 auth denied): auth denied");
    }

    /**
     * An open hub sends {@code welcome} at connect, before it reads the registration: a fetch
     * whose --local-id is taken is refused 4009 after that welcome, and says so at once instead
     * of waiting --timeout for an offer on a closed connection.
     */
    @Test
    void fetchingUnderANameBoundElsewhereSaysNameConflictAtOnceOnAnOpenHub() throws Exception {
        HubDaemon d = hub.start("--port", "0");
        java.time.Duration wait = java.time.Duration.ofSeconds(10);
        try (dev.synapsehub.client.HubClient holder = dev.synapsehub.client.HubClient.connect(
                java.net.URI.create(hub.url()), wait)) {
            holder.registerBound("ops/fetcher", null, null, wait);
            CliTest.Run fetch = CliTest.run("federation", "fetch", "ws://127.0.0.1:" + d.port(), "--out",
                    dir.resolve("x.json").toString(), "--local-id", "ops/fetcher", "--timeout", "5");
            assertThat(fetch.code()).as(fetch.err()).isEqualTo(ExitCodes.USAGE);
            assertThat(fetch.err()).contains("the hub closed the connection (4009 name conflict)");
            assertThat(holder.isOpen()).isTrue();
        }
    }

    @Test
    void fetchPullsTheOfferedBundleWithTheSameFingerprintAndNeverImports() throws Exception {
        String pin = TestCertificates.authority("ca").issue("hub-b").pin().text();
        Path bundle = dir.resolve("offer.json");
        Files.writeString(bundle, "{\"domain_id\":\" b.example \",\"namespaces\":[\"proj\",\"ops\"],"
                + "\"certificate_pins\":[\"" + pin + "\"],\"signing_key_ids\":[\"k2\",\"k1\"],"
                + "\"scope_grants\":[{\"verb\":\"claim\",\"namespace\":\"proj\"}],\"expires_at\":1900000000}");
        String offered = CliTest.run("federation", "offer", bundle.toString()).out();
        TestCertificates.Identity server = TestCertificates.selfSigned("hub-b");
        TestCertificates.PemPair files = server.write(dir, "server");
        HubDaemon d = hub.start("--port", "0", "--tls-certfile", files.cert().toString(), "--tls-keyfile",
                files.key().toString(), "--federation-offer", bundle.toString());
        Path out = dir.resolve("fetched.json");
        CliTest.Run fetched = CliTest.run("federation", "fetch", "wss://127.0.0.1:" + d.port(), "--out", out.toString(),
                "--pin", server.pin().text());
        assertThat(fetched.code()).as(fetched.err()).isEqualTo(ExitCodes.OK);
        assertThat(fetched.out()).isEqualTo(offered); // same fields, same fingerprint
        assertThat(CliTest.run("federation", "offer", out.toString()).out()).isEqualTo(offered);
        assertThat(dir.resolve("store")).doesNotExist();

        Files.writeString(out, "{\"mine\": true}");
        CliTest.Run again = CliTest.run("federation", "fetch", "wss://127.0.0.1:" + d.port(), "--out", out.toString(),
                "--pin", server.pin().text());
        assertThat(again.code()).as(again.out()).isEqualTo(ExitCodes.USAGE);
        assertThat(again.err()).contains("exists; pass --replace-existing");
        assertThat(Files.readString(out)).as("left as it was").isEqualTo("{\"mine\": true}");
        CliTest.Run replaced = CliTest.run("federation", "fetch", "wss://127.0.0.1:" + d.port(), "--out",
                out.toString(), "--pin", server.pin().text(), "--replace-existing");
        assertThat(replaced.code()).as(replaced.err()).isEqualTo(ExitCodes.OK);
        assertThat(CliTest.run("federation", "offer", out.toString()).out()).isEqualTo(offered);
        try (var listed = Files.list(dir)) {
            assertThat(listed.map(p -> p.getFileName().toString())).as("no temporary file left")
                    .noneMatch(n -> n.endsWith(".tmp"));
        }
        hub.close();

        HubDaemon bare = hub.start("--port", "0");
        CliTest.Run none = CliTest.run("federation", "fetch", "ws://127.0.0.1:" + bare.port(), "--out",
                dir.resolve("none.json").toString());
        assertThat(none.code()).isEqualTo(ExitCodes.REFUSED);
        assertThat(none.err()).contains("No federation offer is configured on this hub.");
        CliTest.Run broken = CliTest.run("--port", "0", "--federation-offer", dir.resolve("missing.json").toString());
        assertThat(broken.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(broken.err()).startsWith("synapse-hub: cannot serve --federation-offer:");
    }

    @Test
    void doctorChecksConfigurationCertificatesAndRoutesWithoutChangingAnything() throws Exception {
        TestCertificates.Identity server = TestCertificates.selfSigned("hub-b");
        TestCertificates.PemPair files = server.write(dir, "server");
        HubDaemon d = hub.start("--port", "0", "--tls-certfile", files.cert().toString(), "--tls-keyfile",
                files.key().toString());
        String route = "hub-b=wss://127.0.0.1:" + d.port();
        CliTest.Run ok = CliTest.run("federation", "doctor", "--hub-id", "hub-a", "--namespace-owner", "proj=hub-b",
                "--tls-certfile", files.cert().toString(), "--tls-keyfile", files.key().toString(),
                "--claim-peer", route, "--claim-peer-pin", "hub-b=" + server.pin().text());
        // hub-b has no serving policy (and no journal): its log_end_seq null may be a refusal or an owner that keeps
        // no journal, which decides forwarded claims all the same: for a claim route, reachable and a WARN
        assertThat(ok.code()).as(ok.out() + ok.err()).isEqualTo(ExitCodes.OK);
        assertThat(ok.out()).contains("ok   configuration: validates").contains("ok   server certificate")
                .contains("WARN claim route hub-b: wss://127.0.0.1:" + d.port() + " reachable")
                .contains("cannot tell a refusal from an owner that keeps no journal")
                .contains("no problems found; 1 warning(s) above");
        CliTest.Run wrongPin = CliTest.run("federation", "doctor", "--hub-id", "hub-a", "--namespace-owner",
                "proj=hub-b", "--claim-peer", route, "--claim-peer-pin",
                "hub-b=" + TestCertificates.selfSigned("x").pin().text());
        assertThat(wrongPin.code()).isEqualTo(ExitCodes.REFUSED);
        assertThat(wrongPin.out()).contains("FAIL claim route hub-b").contains("pin mismatch");
        CliTest.Run badConfig = CliTest.run("federation", "doctor", "--namespace-owner", "proj=hub-b");
        assertThat(badConfig.out()).contains("FAIL configuration: --namespace-owner requires --hub-id");
        assertThat(d.config().hubId()).isNotNull();
    }

    @Test
    void aMalformedBundleIsRefusedNamingTheField() throws Exception {
        Path bundle = dir.resolve("bad.json");
        Files.writeString(bundle, "{\"domain_id\":\"a.example\",\"certificate_pins\":[\"md5:x\"]}");
        CliTest.Run run = CliTest.run("federation", "offer", bundle.toString());
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("certificate_pins").contains("sha256:<64 hex digits>");
    }

    @Test
    void aBundleWithAnUppercasePinIsRefusedAtImportAndTheStoreIsNotWritten() throws Exception {
        String pin = TestCertificates.authority("ca").issue("hub-a").pin().text();
        String upper = "sha256:" + pin.substring("sha256:".length()).toUpperCase(java.util.Locale.ROOT);
        Path bundle = dir.resolve("upper.json");
        Files.writeString(bundle, "{\"domain_id\":\"a.example\",\"namespaces\":[\"proj\"],\"certificate_pins\":[\""
                + upper + "\"],\"signing_key_ids\":[],\"scope_grants\":[],\"expires_at\":null}");
        Path store = dir.resolve("store/upper-federation.json");
        CliTest.Run imported = CliTest.run("federation", "import", bundle.toString(), "--confirmed-by", "alice",
                "--store", store.toString());
        assertThat(imported.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(imported.err()).contains(upper).contains("write the hex in lowercase");
        assertThat(store).doesNotExist();
    }

    @Test
    void statusOfAHubWithoutWatchedPeersAndOfflineObservedWithoutAMirror() throws Exception {
        HubDaemon d = hub.start("--port", "0");
        CliTest.Run status = CliTest.run("federation", "status", "--url", "ws://127.0.0.1:" + d.port());
        assertThat(status.code()).as(status.err()).isEqualTo(ExitCodes.OK);
        assertThat(status.out()).contains("no watched peers");
        CliTest.Run offline = CliTest.run("federation", "observed", "--db", dir.resolve("none.db").toString());
        assertThat(offline.code()).isEqualTo(ExitCodes.DATA_ERROR);
        assertThat(offline.err()).contains("no federation mirror beside");
    }

    /**
     * Offline, a stopped hub's mirror gives each peer's last success and last error as persisted,
     * and what only the live link measures is "unknown offline", never "never" or "none".
     */
    @Test
    void offlineObservedShowsTheLastSuccessAndErrorTheMirrorKeptAndWhatOnlyARunningHubKnowsAsUnknownOffline()
            throws Exception {
        Path db = dir.resolve("hub.db");
        double success = 1_796_000_000.0; // 2026-11-30T00:53:20Z
        try (var mirror = dev.synapsehub.federation.follow.SqliteMirror.open(db)) {
            var ok = new dev.synapsehub.federation.follow.PeerView("hub-b", 7, 7, success, null, 0.5, null, 0,
                    java.util.Map.of());
            mirror.commit(ok, "sha256:" + "0".repeat(64), java.util.List.of(), java.util.List.of());
            var c = new dev.synapsehub.federation.follow.PeerView("hub-c", 1, 1, success, null, 0.5, null, 0,
                    java.util.Map.of());
            mirror.commit(c, "sha256:" + "1".repeat(64), java.util.List.of(), java.util.List.of());
            mirror.failed(new dev.synapsehub.federation.follow.PeerView("hub-c", 1, 1, success,
                    "the peer's log ends at seq 0, behind this hub's cursor 1", 0.5, null, 0, java.util.Map.of()));
            String why = "equivocation at seq 1: accepted sha256:aa, now sha256:bb";
            mirror.commit(new dev.synapsehub.federation.follow.PeerView("hub-q", 1, 1, success, why, 0.5, why, 0,
                    java.util.Map.of()), "sha256:aa", java.util.List.of(), java.util.List.of());
        }
        CliTest.Run offline = CliTest.run("federation", "observed", "--db", db.toString());
        assertThat(offline.code()).as(offline.err()).isEqualTo(ExitCodes.OK);
        assertThat(offline.out()).contains("hub-b: last poll ok, cursor 7, lag 0, last success 2026-11-30T00:53:20Z, "
                + "round trip unknown offline, clock skew unknown offline, certificate expires unknown offline, "
                + "last error none")
                .contains("hub-c: last poll FAILED, cursor 1, lag 0, last success 2026-11-30T00:53:20Z, round trip "
                        + "unknown offline, clock skew unknown offline, certificate expires unknown offline, last error "
                        + "the peer's log ends at seq 0, behind this hub's cursor 1")
                .contains("hub-q: last poll FAILED, cursor 1, lag 0, last success 2026-11-30T00:53:20Z")
                .contains("last error equivocation at seq 1: accepted sha256:aa, now sha256:bb; QUARANTINED: "
                        + "equivocation at seq 1")
                .doesNotContain("never");
    }

    /**
     * The offline view reads a mirror written before {@code last_error} was kept without changing it:
     * the file may be an old hub's still running after an upgrade (a write would wait on its lock and
     * fail "database is locked") or a read-only copy. Nothing is migrated, the bytes and mtime stay.
     */
    @Test
    void offlineObservedReadsAnOlderMirrorWithoutMigratingOrWritingIt() throws Exception {
        Path db = dir.resolve("old.db");
        Path file = dir.resolve("old.db.federation.db");
        try (var c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + file);
             var s = c.createStatement()) {
            s.execute("PRAGMA journal_mode=WAL");
            s.execute("CREATE TABLE peer (peer TEXT PRIMARY KEY, cursor INTEGER NOT NULL, log_end INTEGER NOT NULL, "
                    + "last_success REAL NOT NULL, quarantine TEXT, generation INTEGER NOT NULL, fingerprint TEXT)");
            s.execute("CREATE TABLE observed_claim (peer TEXT NOT NULL, task_id TEXT NOT NULL, owner TEXT NOT NULL, "
                    + "namespace TEXT NOT NULL, lease_expires_at REAL NOT NULL, epoch INTEGER NOT NULL, "
                    + "status TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, PRIMARY KEY (peer, task_id))");
            s.execute("INSERT INTO peer VALUES ('hub-b', 3, 5, 1796000000.0, NULL, 0, 'sha256:aa')");
        }
        byte[] before = Files.readAllBytes(file);
        var mtime = Files.getLastModifiedTime(file);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--------"));

        CliTest.Run offline = CliTest.run("federation", "observed", "--db", db.toString());

        assertThat(offline.code()).as(offline.err()).isEqualTo(ExitCodes.OK);
        assertThat(offline.out()).contains("hub-b: last poll ok, cursor 3, lag 2, last success 2026-11-30T00:53:20Z")
                .contains("last error none");
        assertThat(java.util.Arrays.equals(Files.readAllBytes(file), before)).as("the mirror's bytes are unchanged").isTrue();
        assertThat(Files.getLastModifiedTime(file)).isEqualTo(mtime);
        try (var c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + file);
             var rs = c.createStatement().executeQuery("PRAGMA table_info(peer)")) {
            java.util.List<String> columns = new java.util.ArrayList<>();
            while (rs.next()) {
                columns.add(rs.getString("name"));
            }
            assertThat(columns).doesNotContain("last_error");
        }
    }

    /** A hub that follows no peer keeps no federation mirror beside its journal, and the offline view says why. */
    @Test
    void aHubWithoutWatchedPeersCreatesNoFederationMirror() throws Exception {
        Path db = dir.resolve("hub.db");
        hub.start("--port", "0", "--db", db.toString());
        assertThat(db).exists();
        assertThat(dir.resolve("hub.db.federation.db")).doesNotExist();
        CliTest.Run offline = CliTest.run("federation", "observed", "--db", db.toString());
        assertThat(offline.code()).isEqualTo(ExitCodes.DATA_ERROR);
        assertThat(offline.err()).contains("no federation mirror beside").contains("the hub has followed no peer");
    }

    /** An explicitly given --store that does not exist is an error naming it: a mistyped path would list nothing and pass --max-age. */
    @Test
    void listingAStoreThatDoesNotExistIsAnErrorNamingThePath() {
        Path missing = dir.resolve("nonexist.json");
        CliTest.Run list = CliTest.run("federation", "list", "--store", missing.toString(), "--max-age", "90");
        assertThat(list.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(list.out()).isEmpty();
        assertThat(list.err()).contains("synapse-hub: --store " + missing + ": the file does not exist");
    }

    @Test
    void aBundleFileThatDoesNotExistIsSaidToNotExist() {
        CliTest.Run offer = CliTest.run("federation", "offer", dir.resolve("missing.json").toString());
        assertThat(offer.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(offer.err()).contains("cannot read bundle " + dir.resolve("missing.json") + ": the file does not exist");
        CliTest.Run imported = CliTest.run("federation", "import", dir.resolve("missing.json").toString(),
                "--confirmed-by", "bob", "--store", dir.resolve("federation.json").toString());
        assertThat(imported.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(imported.err()).contains(": the file does not exist");
    }

    @Test
    void fetchingFromATlsHubWithoutAPinSaysToPassThePin() throws Exception {
        TestCertificates.Identity server = TestCertificates.selfSigned("hub-b");
        TestCertificates.PemPair files = server.write(dir, "server");
        HubDaemon d = hub.start("--port", "0", "--tls-certfile", files.cert().toString(), "--tls-keyfile",
                files.key().toString());
        CliTest.Run fetch = CliTest.run("federation", "fetch", "wss://127.0.0.1:" + d.port(), "--out",
                dir.resolve("x.json").toString());
        assertThat(fetch.code()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(fetch.err()).contains("pass --pin sha256:<hex>, the pin of the peer's server certificate");
    }

    @Test
    void theCommandListGivesRotateAWholeSentence() {
        String list = CliTest.run("federation", "--help").out().replaceAll("\\s+", " "); // undo picocli's wrapping
        assertThat(list).contains(" rotate Rewrite your own bundle with a new expiry, adding or retiring signing key ids "
                + "and certificate pins.");
    }
}
