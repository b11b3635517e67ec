package dev.synapsehub.federation.follow;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.synapsehub.federation.link.PeerLinks;
import dev.synapsehub.federation.testing.Await;
import dev.synapsehub.federation.trust.PeerRoute;
import dev.synapsehub.federation.trust.PeerRoutes;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Starting the watch: a peer followed from the start is never announced as "added to
 * --federation-peers", however far the other followers' start has got when its first poll asks
 * the routes; a peer the routes name that was not there at start is announced once.
 */
class LogWatchStartTest {
    private static final int PEERS = 200;

    @Test
    void onlyAPeerMissingAtStartIsAnnouncedAsAddedNeverOneStillBeingStarted() throws Exception {
        Logger logger = (Logger) LoggerFactory.getLogger(LogWatch.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        URI nowhere = URI.create("ws://127.0.0.1:1/"); // refused at once: each first poll fails as a transport error
        List<WatchPeer> peers = new ArrayList<>();
        Map<String, PeerRoute> routes = new LinkedHashMap<>();
        for (int i = 0; i < PEERS; i++) {
            peers.add(new WatchPeer("hub-" + i, nowhere, null));
            routes.put("hub-" + i, new PeerRoute("hub-" + i, nowhere, null, null));
        }
        routes.put("hub-new", new PeerRoute("hub-new", nowhere, null, null));
        PeerRoutes inForce = new PeerRoutes(routes, Map.of(), Map.of());
        WatchSettings settings = new WatchSettings(peers, Duration.ofSeconds(60), null, null, null, PollBudget.DEFAULT,
                Duration.ofSeconds(2));
        AdvisoryFold fold = new AdvisoryFold();
        // many followers: the first ones poll while the later ones are still being made
        try (LogWatch watch = new LogWatch(settings, fold, Mirror.memory(), null, "hub-a", () -> 1.0);
             PeerLinks links = new PeerLinks("hub-a")) {
            watch.start(links, () -> inForce);
            Await.until("every follower's first poll", Duration.ofSeconds(30),
                    () -> fold.peers().stream().filter(v -> v.lastError() != null).count() == PEERS);
        } finally {
            logger.detachAppender(lines);
        }
        List<String> announced;
        synchronized (lines) { // the appender's lock: AppenderBase.doAppend adds to the list under it
            announced = lines.list.stream().filter(e -> e.getLevel() == Level.WARN)
                    .map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains("was added to --federation-peers"))
                    .toList();
        }
        assertThat(announced).containsExactly("multihub watch: peer 'hub-new' was added to --federation-peers; it is "
                + "followed from the next restart");
    }
}
