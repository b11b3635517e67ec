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
}
