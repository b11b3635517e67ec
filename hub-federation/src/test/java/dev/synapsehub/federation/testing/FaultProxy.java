package dev.synapsehub.federation.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP proxy between two hubs that the test can make misbehave: pass bytes through,
 * swallow them (a peer that stopped answering), or cut every connection. TLS passes through it
 * untouched (the pin is checked end to end).
 */
public final class FaultProxy implements AutoCloseable {
    /** What the proxy does with the bytes. */
    public enum Mode { PASS, SWALLOW }

    private final ServerSocket server;
    private volatile int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile Mode mode = Mode.PASS;
    private volatile boolean closed;

    /** A proxy to {@code targetPort} (0: set later with {@link #target}). */
    public FaultProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "fault-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    /** {@code wss://127.0.0.1:<proxy port>/}. */
    public URI uri() {
        return URI.create("wss://127.0.0.1:" + server.getLocalPort() + "/");
    }

    /** Where connections go from now on. */
    public void target(int port) {
        targetPort = port;
    }

    /** The proxy's own port. */
    public int port() {
        return server.getLocalPort();
    }

    public void mode(Mode m) {
        mode = m;
    }

    /** Closes every connection through the proxy (new ones are still accepted). */
    public void cut() {
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
        sockets.clear();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket in = server.accept();
                Socket out = new Socket();
                out.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 2000);
                sockets.add(in);
                sockets.add(out);
                pump(in, out);
                pump(out, in);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    if (mode == Mode.PASS) {
                        out.write(buf, 0, n);
                        out.flush();
                    }
                }
            } catch (IOException ignored) {
                // a cut or a close ends the pump
            } finally {
                try {
                    to.close();
                } catch (IOException ignored) {
                    // already closed
                }
            }
        }, "fault-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        cut();
    }
}
