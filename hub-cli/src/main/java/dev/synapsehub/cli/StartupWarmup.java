package dev.synapsehub.cli;

import dev.synapsehub.client.tls.TlsEngine;
import dev.synapsehub.net.HubConfig;
import dev.synapsehub.net.HubServer;
import org.slf4j.Logger;

/**
 * Work a hub start needs only once it binds, done on a thread of its own while the main thread
 * opens the journal and restores the state: loading BoringSSL's native library to say which TLS
 * engine is in use (its start-up line), and the server's classes ({@link HubServer#warmUp}).
 * It reads no state and opens no socket, so nothing can be served early; the bind meets the
 * classes already initialized (or waits for the JVM to finish initializing them). A hub that
 * uses no TLS probes no engine: the probe initializes Netty's BoringSSL support, which builds a
 * JDK TLS context as well: hundreds of classes and their CPU, taken from the restore beside it.
 */
final class StartupWarmup {
    private final java.util.concurrent.CountDownLatch startLineLogged = new java.util.concurrent.CountDownLatch(1);
    private Thread thread;

    private StartupWarmup() {
    }

    /** The TLS line of a hub that uses no TLS: no engine was probed. */
    static final String NO_TLS_LINE = "TLS engine: not loaded (no TLS in use: no --tls-certfile, peer link or mesh)";

    /**
     * Starts the warm-up thread (a daemon: it never holds up an exit). Its TLS line waits for
     * {@link #startLineLogged()}, so the log reads in the same order as when the main thread wrote both.
     *
     * @param usesTls whether this hub may build a TLS context (its port, a peer link, the mesh):
     *                only then is the engine probed and named
     */
    static StartupWarmup begin(HubConfig config, boolean usesTls, Logger log) {
        StartupWarmup warmup = new StartupWarmup();
        warmup.thread = new Thread(() -> warmup.run(config, usesTls, log), "synapse-warmup");
        warmup.thread.setDaemon(true);
        warmup.thread.start();
        return warmup;
    }

    /** The warm-up thread (tests: wait for it). */
    Thread thread() {
        return thread;
    }

    /** The main thread has logged the hub's "starting:" line; the TLS engine's line may follow. */
    void startLineLogged() {
        startLineLogged.countDown();
    }

    private void run(HubConfig config, boolean usesTls, Logger log) {
        try {
            String engine = usesTls ? TlsEngine.describe() : NO_TLS_LINE;
            startLineLogged.await();
            // ServerTls keeps a port that asks for client certificates on the JDK's engine
            log.info(config.tls() != null && config.tls().clientCaFile() != null
                    ? engine + "; the hub's port asks for client certificates, so it uses the JDK's TLS"
                    : engine);
            HubServer.warmUp(config);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // nobody interrupts it; if someone does, it ends
        } catch (RuntimeException | LinkageError e) {
            // nothing depends on it: the step that needs what failed here meets the failure again and reports it
            log.warn("start-up warm-up stopped early; the start goes on without it", e);
        }
    }
}
