package dev.synapsehub.federation.follow;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hub restarted on a mirror that kept a peer's last error: the live fold starts without it (it
 * is the previous run's; kept, status showed the peer FAILING and the cockpit unreachable until the
 * first poll), while the offline view still shows it.
 */
class LogWatchRestartTest {
    @TempDir
    Path dir;

    @Test
    void aPersistedLastErrorIsNotTheLiveFoldsBeforeTheFirstPollButTheOfflineViewKeepsIt() throws Exception {
        Path db = dir.resolve("hub.db");
        String error = "connect refused";
        try (SqliteMirror mirror = SqliteMirror.open(db)) {
            mirror.commit(new PeerView("hub-b", 4, 4, 10.0, null, Double.NaN, null, 0, Map.of()), "sha256:aa",
                    List.of(), List.of());
            mirror.failed(new PeerView("hub-b", 4, 4, 10.0, error, Double.NaN, null, 0, Map.of()));
        }
        WatchSettings settings = new WatchSettings(
                List.of(new WatchPeer("hub-b", URI.create("ws://127.0.0.1:1/"), null)), Duration.ofSeconds(60), null,
                null, null, PollBudget.DEFAULT, Duration.ofSeconds(2));
        AdvisoryFold fold = new AdvisoryFold();
        try (SqliteMirror mirror = SqliteMirror.open(db);
             LogWatch watch = new LogWatch(settings, fold, mirror, null, "hub-a", () -> 20.0)) {
            PeerView live = fold.peer("hub-b");
            assertThat(live.lastError()).isNull();
            assertThat(live.cursor()).isEqualTo(4);
            assertThat(live.lastSuccess()).isEqualTo(10.0);
        }
        assertThat(SqliteMirror.readOnly(db)).singleElement().extracting(PeerView::lastError).isEqualTo(error);
    }
}
