package dev.synapsehub.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import dev.synapsehub.federation.FederationSettings;
import dev.synapsehub.federation.follow.WatchPeer;
import dev.synapsehub.federation.follow.WatchSettings;
import dev.synapsehub.federation.route.ClaimRoute;
import dev.synapsehub.federation.route.ForwardSettings;
import dev.synapsehub.federation.route.NamespaceOwners;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.tls.TlsFiles;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The start-up warm-up: its TLS engine line comes after the hub's starting line, from its own
 * thread; a hub that uses no TLS probes no engine.
 */
class StartupWarmupTest {
    @Test
    void theTlsEngineLineWaitsForTheStartingLineAndTheThreadEnds() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        StartupWarmup warmup = StartupWarmup.begin(HubConfig.builder().build(), true, logger(lines));
        Thread thread = warmup.thread();
        assertThat(thread.isDaemon()).isTrue();
        // the engine is probed first; the thread then waits for the starting line (bounded: 60 s)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (thread.getState() != Thread.State.WAITING && thread.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(thread.getState()).isEqualTo(Thread.State.WAITING);
        assertThat(lines).isEmpty();

        warmup.startLineLogged();
        thread.join(TimeUnit.SECONDS.toMillis(60));
        assertThat(thread.isAlive()).isFalse();
        assertThat(lines).singleElement().asString().startsWith("synapse-warmup: TLS engine: ")
                .isNotEqualTo("synapse-warmup: " + StartupWarmup.NO_TLS_LINE);
    }

    @Test
    void aHubThatUsesNoTlsNamesNoEngineAndSaysWhy() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        StartupWarmup warmup = StartupWarmup.begin(HubConfig.builder().build(), false, logger(lines));
        warmup.startLineLogged();
        warmup.thread().join(TimeUnit.SECONDS.toMillis(60));
        assertThat(warmup.thread().isAlive()).isFalse();
        assertThat(lines).containsExactly("synapse-warmup: " + StartupWarmup.NO_TLS_LINE);
    }

    @Test
    void theEngineIsProbedWhenThePortAPeerLinkOrTheMeshMayUseTls() {
        HubConfig plain = HubConfig.builder().build();
        HubConfig wss = HubConfig.builder().tls(new TlsFiles(Path.of("server.pem"), Path.of("server.key"), null)).build();
        FederationSettings none = FederationSettings.none("hub-a");
        assertThat(HubDaemon.usesTls(plain, false, none)).isFalse();
        assertThat(HubDaemon.usesTls(wss, false, none)).as("its own wss:// port").isTrue();
        assertThat(HubDaemon.usesTls(plain, true, none)).as("a mesh node").isTrue();
        WatchSettings watching = new WatchSettings(List.of(new WatchPeer("hub-b", URI.create("wss://127.0.0.1:9/"),
                null)), WatchSettings.DEFAULT_INTERVAL, null, null, null, WatchSettings.none().budget(),
                Duration.ofSeconds(10));
        ForwardSettings routes = new ForwardSettings(ForwardSettings.byHub(List.of(new ClaimRoute("hub-b",
                URI.create("wss://127.0.0.1:9/"), null))), null, null, null, ForwardSettings.BOUND);
        NamespaceOwners owners = none.owners();
        assertThat(HubDaemon.usesTls(plain, false, new FederationSettings(null, watching, owners,
                ForwardSettings.none()))).as("a watched peer").isTrue();
        assertThat(HubDaemon.usesTls(plain, false, new FederationSettings(null, WatchSettings.none(), owners,
                routes))).as("a claim route").isTrue();
        assertThat(HubDaemon.usesTls(plain, false, new FederationSettings(null, WatchSettings.none(), owners,
                ForwardSettings.none(), null, FederationSettings.RelayPolicy.DEFAULT, routes)))
                .as("a relay route").isTrue();
        assertThat(HubDaemon.usesTls(plain, false, new FederationSettings(null, WatchSettings.none(), owners,
                ForwardSettings.none(), null, FederationSettings.RelayPolicy.DEFAULT, ForwardSettings.none(),
                Path.of("peers.toml")))).as("a peers file").isTrue();
    }

    /** A logger whose lines (each with the name of the thread that logged it) go to {@code lines}. */
    private static ch.qos.logback.classic.Logger logger(List<String> lines) {
        LoggerContext context = new LoggerContext();
        // the thread's name is read when the line is appended: logback reads it lazily
        AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent event) {
                lines.add(event.getThreadName() + ": " + event.getFormattedMessage());
            }
        };
        appender.setContext(context);
        appender.start();
        ch.qos.logback.classic.Logger log = context.getLogger("warmup-test");
        log.addAppender(appender);
        return log;
    }
}
