package dev.synapsehub.federation.trust;

import dev.synapsehub.client.tls.TestCertificates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;
import dev.synapsehub.federation.testing.Await;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The peers file is loaded strictly: each refusal names the file, the field and the fix. */
class PeersFileTest {
    static final long HOUR = 3_600_000;
    static final String PIN = TestCertificates.selfSigned("b").pin().text();
    @TempDir
    Path dir;

    private Path write(String text) throws Exception {
        Path f = dir.resolve("peers.json");
        TestCertificates.writePrivate(f, text);
        return f;
    }

    @Test
    void aValidFileGivesEveryKindOfRoute() throws Exception {
        PeerRoutes r = PeersFile.load(write("{\"version\":1,\"watch\":[{\"peer\":\"b\",\"uri\":\"wss://127.0.0.1:1/\","
                + "\"pin\":\"" + PIN + "\",\"token\":\"t\"}],\"claim\":[{\"hub_id\":\"hub-b\",\"uri\":\"wss://127.0.0.1:1/\","
                + "\"pin\":\"" + PIN + "\",\"token\":\"t\"}],\"relay\":[]}"), true);
        assertThat(r.watch().get("b").token()).isEqualTo("t");
        assertThat(r.claim().get("hub-b").pin().text()).isEqualTo(PIN);
        assertThat(r.relay()).isEmpty();
        assertThat(r.claim().get("hub-b").toString()).doesNotContain("\"t\"").doesNotContain("token");
    }

    @Test
    void eachMistakeIsRefusedNamingTheFileTheFieldAndTheFix() throws Exception {
        String route = "{\"hub_id\":\"hub-b\",\"uri\":\"wss://127.0.0.1:1/\",\"pin\":\"" + PIN + "\"}";
        List<String[]> cases = new ArrayList<>();
        cases.add(new String[] {"{\"claim\":[" + route + "]}", "field version is missing", "set \"version\": 1"});
        cases.add(new String[] {"{\"version\":2}", "field version is 2", "set \"version\": 1"});
        cases.add(new String[] {"{\"version\":1,\"peers\":[]}", "unknown fields: peers", "remove them"});
        cases.add(new String[] {"{\"version\":1,\"claim\":{}}", "field claim must be a list", "\"claim\": ["});
        cases.add(new String[] {"{\"version\":1,\"claim\":[{\"uri\":\"wss://h/\",\"pin\":\"" + PIN + "\"}]}",
                "claim[0].hub_id is missing", "owning hub's id"});
        cases.add(new String[] {"{\"version\":1,\"claim\":[{\"hub_id\":\"x\",\"uri\":\"http://h/\"}]}",
                "claim[0].uri is 'http://h/'", "ws:// or wss://"});
        cases.add(new String[] {"{\"version\":1,\"relay\":[{\"hub_id\":\"x\",\"uri\":\"wss://h/\",\"pin\":\"md5:1\"}]}",
                "relay[0].pin is not a certificate pin", "sha256:<64 hex digits>"});
        cases.add(new String[] {"{\"version\":1,\"watch\":[{\"peer\":\"x\",\"uri\":\"ws://h/\",\"pin\":\"" + PIN + "\"}]}",
                "watch[0].pin requires a wss:// uri", "use wss://"});
        cases.add(new String[] {"{\"version\":1,\"claim\":[{\"hub_id\":\"x\",\"uri\":\"wss://h/\"}]}",
                "claim[0].pin is missing", "add the peer's \"pin\""});
        cases.add(new String[] {"{\"version\":1,\"claim\":[" + route + "," + route + "]}",
                "claim[1] names hub_id 'hub-b' twice", "keep one route each"});
        cases.add(new String[] {"{\"version\":1,\"claim\":[" + route + "],\"relay\":[" + route.replace("}", ",\"token\":\"t\"}")
                + "]}", "both reach wss://127.0.0.1:1/ with a different pin or token", "give them the same pin and token"});
        cases.add(new String[] {"{\"version\":1,\"version\":1}", "repeats field 'version'", "keep one"});
        cases.add(new String[] {"[1]", "is not a JSON object", "write {\"version\": 1"});
        for (String[] c : cases) {
            Path f = write(c[0]);
            assertThatThrownBy(() -> PeersFile.load(f, true)).as(c[0]).isInstanceOf(TrustFileException.class)
                    .hasMessageContaining("--federation-peers:").hasMessageContaining(f.toString())
                    .hasMessageContaining(c[1]).hasMessageContaining(c[2]);
        }
    }

    @Test
    void theSecretFileRulesApply() throws Exception {
        Path f = write("{\"version\":1}");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> PeersFile.load(f, false)).hasMessageContaining("--federation-peers:")
                .hasMessageContaining("chmod 600");
        Path link = dir.resolve("link.json");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        Files.createSymbolicLink(link, f);
        assertThatThrownBy(() -> PeersFile.load(link, false)).hasMessageContaining("symbolic link");
    }

    @Test
    void aChmodIsNoticedAndRefusesUntilFixedLoggingOncePerChange() throws Exception {
        Path f = write("{\"version\":1,\"claim\":[{\"hub_id\":\"hub-b\",\"uri\":\"ws://127.0.0.1:1/\"}]}");
        List<String> log = new CopyOnWriteArrayList<>();
        try (PeersFile peers = PeersFile.watching(f, false, log::add, HOUR)) {
            assertThat(peers.current().claim()).containsKey("hub-b");
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--")); // mode only: same size, mtime
            peers.checkNow();
            assertThatThrownBy(peers::current).hasMessageContaining("accessible by other users");
            peers.checkNow(); // no change since: not logged or counted again
            assertThatThrownBy(peers::current).hasMessageContaining("does not validate");
            assertThat(log).hasSize(1);
            assertThat(peers.refusedOperations()).isEqualTo(2);
            assertThat(peers.invalidEdits()).isEqualTo(1);
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
            peers.checkNow();
            assertThat(peers.current().claim()).containsKey("hub-b");
            assertThat(log).hasSize(2).last().asString().contains("validates again");
        }
    }

    /**
     * Peer operations run on event loops, which must never block on a disk: {@code current()}
     * answers what the last check found and never reads the file itself; the check does.
     */
    @Test
    void currentAnswersTheLastCheckWithoutReadingTheFile() throws Exception {
        Path f = write("{\"version\":1,\"claim\":[{\"hub_id\":\"hub-b\",\"uri\":\"ws://127.0.0.1:1/\"}]}");
        try (PeersFile peers = PeersFile.watching(f, false, m -> { }, HOUR)) {
            TestCertificates.writePrivate(f, "{\"version\":2}");
            assertThat(peers.current().claim()).as("not checked yet: the routes the last check found")
                    .containsKey("hub-b");
            assertThat(peers.invalidEdits()).isZero();
            peers.checkNow();
            assertThatThrownBy(peers::current).as("checked: refused, never the old routes")
                    .hasMessageContaining("field version is 2");
            assertThatThrownBy(peers::current).hasMessageContaining("does not validate");
        }
    }

    @Test
    void theWatcherThreadChecksTheFileOnItsOwnAndStopsWhenClosed() throws Exception {
        Path f = write("{\"version\":1,\"claim\":[{\"hub_id\":\"hub-b\",\"uri\":\"ws://127.0.0.1:1/\"}]}");
        List<String> log = new CopyOnWriteArrayList<>();
        PeersFile peers = PeersFile.watching(f, false, log::add);
        try {
            assertThat(peers.watching()).isTrue();
            TestCertificates.writePrivate(f, "{\"version\":1,\"colour\":\"red\"}");
            Await.until("the watcher notices the invalid edit", Duration.ofSeconds(20), () -> peers.invalidEdits() == 1);
            assertThatThrownBy(peers::current).hasMessageContaining("unknown fields: colour");
            TestCertificates.writePrivate(f, "{\"version\":1,\"relay\":[{\"hub_id\":\"hub-c\",\"uri\":\"ws://127.0.0.1:2/\"}]}");
            Await.until("the watcher loads the fixed file", Duration.ofSeconds(20), () -> peers.loadedEdits() == 1);
            assertThat(peers.current().relay()).containsOnlyKeys("hub-c");
            assertThat(peers.current().claim()).isEmpty();
            assertThat(log).hasSize(2);
        } finally {
            peers.close();
        }
        assertThat(peers.watching()).isFalse();
        Await.until("no watcher thread left", Duration.ofSeconds(20), () -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().equals("synapse-federation-peers-watch")));
    }

    /** A route whose token is in a file of its own, named relative to the peers file's directory. */
    private Path tokenFile(String relative, String token) throws Exception {
        Path t = dir.resolve(relative);
        Files.createDirectories(t.getParent());
        TestCertificates.writePrivate(t, token);
        return t;
    }

    private static String tokenFileRoute(String hubId, String tokenFile) {
        return "{\"hub_id\":\"" + hubId + "\",\"uri\":\"ws://127.0.0.1:1/\",\"token_file\":\"" + tokenFile + "\"}";
    }

    @Test
    void aTokenFileGivesTheRouteItsTokenReadRelativeToThePeersFile() throws Exception {
        tokenFile("secrets/b.token", "s3cret\n");
        Path f = write("{\"version\":1,\"claim\":[" + tokenFileRoute("hub-b", "secrets/b.token") + "],\"relay\":["
                + tokenFileRoute("hub-b", "./secrets/../secrets/b.token") + "],\"watch\":[{\"peer\":\"b\","
                + "\"uri\":\"ws://127.0.0.1:1/\",\"token_file\":\"" + dir.resolve("secrets/b.token") + "\"}]}");
        PeerRoutes r = PeersFile.load(f, false);
        assertThat(r.claim().get("hub-b").token()).as("the line, its newline stripped").isEqualTo("s3cret");
        assertThat(r.relay().get("hub-b").token()).isEqualTo("s3cret");
        assertThat(r.watch().get("b").token()).as("an absolute path too").isEqualTo("s3cret");
        assertThat(PeersFile.tokenFiles(f, false)).as("one file, named by three routes")
                .containsExactly(java.util.Map.entry(dir.resolve("secrets/b.token"), "watch[0].token_file")); // watch is read first
    }

    @Test
    void aTokenFileThatBreaksTheSecretFileRulesIsRefusedNamingTheFieldAndTheFix() throws Exception {
        Path token = tokenFile("b.token", "s3cret");
        Path f = write("{\"version\":1,\"claim\":[" + tokenFileRoute("hub-b", "b.token") + "]}");
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> PeersFile.load(f, false)).as("readable by others")
                .hasMessageContaining("--federation-peers: " + f + " claim[0].token_file:")
                .hasMessageContaining("accessible by other users").hasMessageContaining("chmod 600 " + token);
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        assertThat(PeersFile.load(f, false).claim().get("hub-b").token()).isEqualTo("s3cret");

        Path real = tokenFile("real.token", "s3cret");
        Files.createSymbolicLink(dir.resolve("link.token"), real);
        Path viaLink = write("{\"version\":1,\"claim\":[" + tokenFileRoute("hub-b", "link.token") + "]}");
        assertThatThrownBy(() -> PeersFile.load(viaLink, false)).as("a symbolic link")
                .hasMessageContaining("--federation-peers: " + viaLink + " claim[0].token_file:")
                .hasMessageContaining("symbolic link").hasMessageContaining("name the real path");

        Path missing = write("{\"version\":1,\"relay\":[" + tokenFileRoute("hub-c", "nowhere.token") + "]}");
        assertThatThrownBy(() -> PeersFile.load(missing, false)).as("missing")
                .hasMessageContaining("--federation-peers: " + missing + " relay[0].token_file:")
                .hasMessageContaining("No such file").hasMessageContaining("— write the token to that file alone");

        List<String[]> cases = new ArrayList<>();
        cases.add(new String[] {"{\"hub_id\":\"b\",\"uri\":\"ws://h/\",\"token\":\"t\",\"token_file\":\"b.token\"}",
                "claim[0] gives both token and token_file", "keep one of them"});
        cases.add(new String[] {"{\"hub_id\":\"b\",\"uri\":\"ws://h/\",\"token_file\":\"\"}",
                "claim[0].token_file must be a non-empty string", "name the file holding the token"});
        tokenFile("empty.token", "\n");
        cases.add(new String[] {tokenFileRoute("b", "empty.token"), "claim[0].token_file " + dir.resolve("empty.token")
                + " is empty", "write the token alone on one line"});
        tokenFile("two.token", "one\ntwo\n");
        cases.add(new String[] {tokenFileRoute("b", "two.token"), "claim[0].token_file " + dir.resolve("two.token")
                + " holds a control character or more than one line", "write the token alone on one line"});
        for (String[] c : cases) {
            Path p = write("{\"version\":1,\"claim\":[" + c[0] + "]}");
            assertThatThrownBy(() -> PeersFile.load(p, false)).as(c[0]).isInstanceOf(TrustFileException.class)
                    .hasMessageContaining("--federation-peers: " + p).hasMessageContaining(c[1])
                    .hasMessageContaining(c[2]);
        }
    }

    /**
     * The watcher's check compares the token files' stamps too: a token file replaced under a
     * running hub is used from the check that finds it; one made invalid refuses every operation
     * (never the token it held before), logged once and counted, until a check finds it fixed.
     */
    @Test
    void aTokenFileEditIsLoadedByTheCheckAndAnInvalidOneRefusesUntilFixed() throws Exception {
        Path token = tokenFile("b.token", "first");
        Path f = write("{\"version\":1,\"claim\":[" + tokenFileRoute("hub-b", "b.token") + "]}");
        List<String> log = new CopyOnWriteArrayList<>();
        try (PeersFile peers = PeersFile.watching(f, false, log::add, HOUR)) {
            assertThat(peers.current().claim().get("hub-b").token()).isEqualTo("first");
            Path next = tokenFile("b.token.tmp", "second");
            Files.move(next, token, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            assertThat(peers.current().claim().get("hub-b").token()).as("not checked yet").isEqualTo("first");
            peers.checkNow();
            assertThat(peers.current().claim().get("hub-b").token()).as("the peers file itself did not change")
                    .isEqualTo("second");
            assertThat(peers.loadedEdits()).isEqualTo(1);

            Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-r--r--"));
            peers.checkNow();
            assertThatThrownBy(peers::current).hasMessageContaining("does not validate")
                    .hasMessageContaining("claim[0].token_file:").hasMessageContaining("accessible by other users");
            peers.checkNow(); // nothing changed since: neither logged nor counted again
            assertThatThrownBy(peers::current).hasMessageContaining("does not validate");
            assertThat(peers.invalidEdits()).isEqualTo(1);
            assertThat(peers.refusedOperations()).isEqualTo(2);
            assertThat(log).hasSize(2).last().asString().contains("no longer validates");

            Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
            peers.checkNow();
            assertThat(peers.current().claim().get("hub-b").token()).isEqualTo("second");
            assertThat(log).hasSize(3).last().asString().contains("validates again");

            Files.delete(token);
            peers.checkNow();
            assertThatThrownBy(peers::current).as("removed: refused, not the cached token")
                    .hasMessageContaining("No such file");
            TestCertificates.writePrivate(token, "third");
            peers.checkNow();
            assertThat(peers.current().claim().get("hub-b").token()).as("created again").isEqualTo("third");
        }
    }
}
