package dev.synapsehub.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import dev.synapsehub.net.HubConfig;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The start-up warm-up: its TLS engine line comes after the hub's starting line, from its own thread. */
class StartupWarmupTest {
    @Test
    void theTlsEngineLineWaitsForTheStartingLineAndTheThreadEnds() throws Exception {
        LoggerContext context = new LoggerContext();
        // each line with the name of the thread that logged it (read when it is appended: logback reads it lazily)
        List<String> lines = new CopyOnWriteArrayList<>();
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

        StartupWarmup warmup = StartupWarmup.begin(HubConfig.builder().build(), log);
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
        assertThat(lines).singleElement().asString().startsWith("synapse-warmup: TLS engine: ");
    }
}
