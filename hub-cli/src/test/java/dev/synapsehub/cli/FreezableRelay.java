package dev.synapsehub.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A TCP relay on loopback in front of a hub that can hold what clients send without closing
 * anything, as if the hub process were stopped (SIGSTOP): requests reach the hub only when
 * the relay thaws.
 */
final class FreezableRelay implements AutoCloseable {
    private final ServerSocket server;
    private volatile int hubPort;
    private final List<Socket> sockets = new ArrayList<>();
    private final Object gate = new Object();
    private boolean frozen;

    /** Binds the relay; {@link #to} names the hub before the first client connects. */
    FreezableRelay() throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "relay-accept");
        accept.setDaemon(true);
        accept.start();
    }

    /** Relays to the hub on {@code port}. */
    void to(int port) {
        this.hubPort = port;
    }

    /** The Host authority clients send through the relay (the hub must admit it: --advertised-host). */
    String authority() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    /** The relay's WebSocket URL. */
    String url() {
        return "ws://127.0.0.1:" + server.getLocalPort();
    }

    /** From now on, bytes clients send are held. */
    void freeze() {
        synchronized (gate) {
            frozen = true;
        }
    }

    /** Held bytes go on to the hub, and later ones pass again. */
    void thaw() {
        synchronized (gate) {
            frozen = false;
            gate.notifyAll();
        }
    }

    private void accept() {
        try {
            while (true) {
                Socket client = server.accept();
                Socket hub = new Socket(InetAddress.getLoopbackAddress(), hubPort);
                synchronized (sockets) {
                    sockets.add(client);
                    sockets.add(hub);
                }
                pump(client.getInputStream(), hub.getOutputStream(), true);
                pump(hub.getInputStream(), client.getOutputStream(), false);
            }
        } catch (IOException closed) {
            // the relay was closed
        }
    }

    private void pump(InputStream in, OutputStream out, boolean toHub) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            ByteArrayOutputStream held = new ByteArrayOutputStream();
            try {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    held.write(buf, 0, n);
                    if (toHub) {
                        synchronized (gate) {
                            while (frozen) {
                                gate.wait();
                            }
                        }
                    }
                    held.writeTo(out);
                    out.flush();
                    held.reset();
                }
            } catch (IOException | InterruptedException e) {
                // a side closed
            } finally {
                try {
                    out.close();
                } catch (IOException ignored) {
                    // already closed
                }
            }
        }, "relay-pump");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        thaw();
        server.close();
        synchronized (sockets) {
            for (Socket s : sockets) {
                s.close();
            }
        }
    }
}
