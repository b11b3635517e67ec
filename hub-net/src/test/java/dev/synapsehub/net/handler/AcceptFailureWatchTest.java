package dev.synapsehub.net.handler;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A failed accept on the listening socket is counted, goes no further down the pipeline (where
 * Netty logged each one again), and pauses accepting for a second; accepted connections pass.
 */
class AcceptFailureWatchTest {
    @Test
    void eachFailedAcceptIsCountedAndPausesAcceptingForASecond() {
        AtomicLong failures = new AtomicLong();
        EmbeddedChannel listening = new EmbeddedChannel(new AcceptFailureWatch(failures));
        listening.freezeTime();

        listening.pipeline().fireExceptionCaught(new IOException("Too many open files"));
        assertThat(failures.get()).isEqualTo(1);
        assertThat(listening.config().isAutoRead()).isFalse();
        listening.checkException(); // nothing reached the end of the pipeline

        listening.pipeline().fireExceptionCaught(new IOException("Too many open files"));
        assertThat(failures.get()).isEqualTo(2);
        listening.checkException();

        listening.advanceTimeBy(AcceptFailureWatch.PAUSE_MILLIS - 1, TimeUnit.MILLISECONDS);
        listening.runScheduledPendingTasks();
        assertThat(listening.config().isAutoRead()).isFalse();
        listening.advanceTimeBy(1, TimeUnit.MILLISECONDS);
        listening.runScheduledPendingTasks();
        assertThat(listening.config().isAutoRead()).isTrue();

        // an accepted connection goes on to the acceptor
        Object accepted = new Object();
        listening.writeInbound(accepted);
        assertThat((Object) listening.readInbound()).isSameAs(accepted);
        listening.finishAndReleaseAll();
    }

    @Test
    void aFailureThatIsNotAnIoErrorIsCountedWithoutAPause() {
        AtomicLong failures = new AtomicLong();
        EmbeddedChannel listening = new EmbeddedChannel(new AcceptFailureWatch(failures));
        listening.pipeline().fireExceptionCaught(new IllegalStateException("no more"));
        assertThat(failures.get()).isEqualTo(1);
        assertThat(listening.config().isAutoRead()).isTrue(); // Netty closes the listener itself: nothing to resume
        listening.checkException();
        listening.finishAndReleaseAll();
    }
}
