package dev.synapsehub.cli;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The SIGTERM/Ctrl-C stop of a hub process, registered as a JVM shutdown hook before the hub
 * starts. Registered only once the hub had started, a signal that came after the server was bound
 * (so after {@code /health} could answer) but before the registration ended the JVM without the
 * orderly close, and {@code addShutdownHook} then failed on the main thread ("Shutdown in
 * progress"). Now a signal during the start is seen: the start stops before binding the server
 * (closing what it opened), or, once bound, the hook waits for the hub and closes it.
 */
final class StopSignal {
    /** How long a signal during the start waits for the start to end before the JVM exits anyway. */
    static final Duration START_WAIT = Duration.ofSeconds(10);

    private final CompletableFuture<HubDaemon> started = new CompletableFuture<>();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final Thread hook = new Thread(this::onSignal, "synapse-shutdown");
    private volatile boolean requested;

    StopSignal() { // tests: a stop whose hook is not registered
    }

    /** Registers the hook; call it before the hub starts. */
    static StopSignal register() {
        StopSignal stop = new StopSignal();
        try {
            Runtime.getRuntime().addShutdownHook(stop.hook);
        } catch (IllegalStateException shutdownInProgress) {
            // the signal came before this: the start stops before serving, and nothing waits for a hook
            stop.requested = true;
            stop.closed.complete(null);
        }
        return stop;
    }

    /** Whether a signal (or System.exit) has begun the JVM's shutdown. */
    boolean requested() {
        return requested;
    }

    /** The hub started: a signal from now on closes it. */
    void started(HubDaemon daemon) {
        started.complete(daemon);
    }

    /** The start ended without a hub (it failed or stopped for a signal): a signal has nothing to close. */
    void noHub() {
        started.complete(null);
    }

    /** Completes once the hook has closed the hub (or found none to close). */
    CompletableFuture<Void> closed() {
        return closed;
    }

    /** Takes the hook back (the hub is closed another way); false if the JVM's shutdown has begun. */
    boolean unregister() {
        try {
            return Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException alreadyShuttingDown) {
            return false;
        }
    }

    /** The hook: the start may still be running; closes the hub once it is there. */
    void onSignal() {
        requested = true;
        try {
            HubDaemon daemon = started.get(START_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            if (daemon != null) {
                daemon.close();
            }
        } catch (TimeoutException e) {
            // still restoring: nothing is served yet, the JVM exits without waiting longer
            System.err.println("synapse-hub: stopping during the start (still restoring after " + START_WAIT + ")");
        } catch (InterruptedException | ExecutionException | RuntimeException
                 | dev.synapsehub.core.journal.JournalException e) {
            System.err.println("synapse-hub: error during shutdown: " + e);
        } finally {
            closed.complete(null);
        }
    }
}
