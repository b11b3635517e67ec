package dev.synapsehub.mesh;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on 127.0.0.1 in front of one loopback port (a mesh node's Raft port, in this JVM or
 * another process), which a test can cut and heal. It listens on a port below the kernel's
 * ephemeral range, so none of the test's own outgoing connections can take it first. Cut, it
 * closes the connections it carries and holds new ones open without forwarding a byte (a black
 * hole, as a real partition looks to gRPC: no refusal, no answer); healed, it drops the held
 * ones so their clients reconnect through it. At most {@value #MAX_CONNECTIONS} connections,
 * two pump threads each plus one acceptor. Shared with hub-cli's process tests (test-jar).
 */
public final class LoopbackProxy implements AutoCloseable {
    public static final int MAX_CONNECTIONS = 16;
    private static final System.Logger LOG = System.getLogger(LoopbackProxy.class.getName());

    private final String name;
    private final int target;
    private final ServerSocket listener;
    private final Thread acceptor;
    private final ThreadPoolExecutor pumps = new ThreadPoolExecutor(0, 2 * MAX_CONNECTIONS, 5, TimeUnit.SECONDS,
            new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "proxy-pump");
                t.setDaemon(true);
                return t;
            });
    private final Set<Socket> carried = ConcurrentHashMap.newKeySet();
    private final Set<Socket> held = ConcurrentHashMap.newKeySet();
    private final AtomicLong refused = new AtomicLong();
    private volatile boolean cut;
    private volatile boolean closed;

    /** Listens on a free 127.0.0.1 port in 20000..32000 and forwards to 127.0.0.1:{@code target}. */
    public LoopbackProxy(String name, int target) throws IOException {
        this(name, target, ConcurrentHashMap.newKeySet());
    }

    /**
     * As above, on a port not in {@code reserved}, which it then joins: ports a test picked (and
     * released) for processes it starts later are free now, and a proxy must not take one of them.
     */
    public LoopbackProxy(String name, int target, Set<Integer> reserved) throws IOException {
        this.name = name;
        this.target = target;
        this.listener = bind(reserved);
        this.acceptor = new Thread(this::acceptLoop, "proxy-accept-" + name);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private static ServerSocket bind(Set<Integer> reserved) throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            int candidate = LoopbackPorts.candidate();
            if (reserved.contains(candidate)) {
                continue;
            }
            try {
                ServerSocket bound = new ServerSocket(candidate, 50, InetAddress.getLoopbackAddress());
                reserved.add(candidate);
                return bound;
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IOException("no free port in 20000..32000 after 200 attempts");
    }

    /** The port clients connect to. */
    public int port() {
        return listener.getLocalPort();
    }

    /** Connections refused because the proxy was full or its pumps were busy. */
    public long refused() {
        return refused.get();
    }

    /** True while cut. */
    public boolean isCut() {
        return cut;
    }

    /** Stops forwarding: the carried connections are closed, new ones are held silent. */
    public void cut() {
        cut = true;
        closeAll(carried);
    }

    /** Forwards again: the held connections are closed so their clients reconnect through the proxy. */
    public void heal() {
        cut = false;
        closeAll(held);
    }

    private void acceptLoop() {
        while (!closed) {
            Socket in;
            try {
                in = listener.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.log(System.Logger.Level.WARNING, "proxy " + name + " stops accepting: " + e);
                }
                return;
            }
            if (carried.size() + held.size() >= MAX_CONNECTIONS) {
                refused.incrementAndGet();
                quietly(in);
                continue;
            }
            if (cut) {
                held.add(in);
                if (!cut) { // healed meanwhile: do not keep it
                    held.remove(in);
                    quietly(in);
                }
                continue;
            }
            forward(in);
        }
    }

    private void forward(Socket in) {
        Socket out = new Socket();
        try {
            in.setTcpNoDelay(true);
            out.setTcpNoDelay(true);
            out.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), target), 2000);
        } catch (IOException e) {
            quietly(in);
            quietly(out);
            return; // the target is down: the client sees its connection close, as it would
        }
        carried.add(in);
        carried.add(out);
        try {
            pumps.execute(() -> pump(in, out));
            pumps.execute(() -> pump(out, in));
        } catch (RejectedExecutionException e) {
            refused.incrementAndGet();
            close(in, out);
        }
        if (cut) { // cut while connecting
            close(in, out);
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buf = new byte[16 * 1024];
        try {
            InputStream src = from.getInputStream();
            OutputStream dst = to.getOutputStream();
            for (int n; (n = src.read(buf)) >= 0; ) {
                dst.write(buf, 0, n);
            }
        } catch (IOException e) {
            // closed by cut(), close() or the other side: the pair goes down together below
        } finally {
            close(from, to);
        }
    }

    private void close(Socket a, Socket b) {
        carried.remove(a);
        carried.remove(b);
        quietly(a);
        quietly(b);
    }

    private static void closeAll(Set<Socket> sockets) {
        for (Socket s : sockets) {
            sockets.remove(s);
            quietly(s);
        }
    }

    private static void quietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing a loopback socket: nothing to recover
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "proxy " + name + ": " + e);
        }
        closeAll(carried);
        closeAll(held);
        pumps.shutdownNow();
        try {
            acceptor.join(5000);
            pumps.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closed anyway; the caller sees the flag
        }
    }
}
