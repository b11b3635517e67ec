package dev.synapsehub.mesh;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@link LoopbackProxy} per ordered pair of mesh nodes: node i reaches node j's Raft port
 * through the proxy i→j only, so cutting every link to and from a node partitions it both ways
 * while it keeps running. Each node is given its own view of the peers (its own real address,
 * the others' proxies); Ratis keeps the first address it was given per peer id, so the views
 * hold even after a leader's configuration entry names other addresses.
 */
final class RaftLinks implements AutoCloseable {
    private final Map<String, LoopbackProxy> links = new LinkedHashMap<>();

    RaftLinks(List<MeshPeer> peers) throws IOException {
        try {
            for (MeshPeer from : peers) {
                for (MeshPeer to : peers) {
                    if (!from.id().equals(to.id())) {
                        links.put(key(from.id(), to.id()), new LoopbackProxy(key(from.id(), to.id()), to.port(), TestCluster.HANDED_OUT));
                    }
                }
            }
        } catch (IOException e) {
            close();
            throw e;
        }
    }

    private static String key(String from, String to) {
        return from + ">" + to;
    }

    /** The peers as node {@code id} sees them: itself directly, every other node through its link. */
    List<MeshPeer> viewOf(String id, List<MeshPeer> peers) {
        List<MeshPeer> view = new ArrayList<>();
        for (MeshPeer p : peers) {
            view.add(p.id().equals(id) ? p : new MeshPeer(p.id(), "127.0.0.1", links.get(key(id, p.id())).port()));
        }
        return view;
    }

    /** Cuts every link to and from {@code id}. */
    void isolate(String id) {
        links.forEach((k, proxy) -> {
            if (k.startsWith(id + ">") || k.endsWith(">" + id)) {
                proxy.cut();
            }
        });
    }

    /** Heals every cut link. */
    void healAll() {
        links.values().forEach(LoopbackProxy::heal);
    }

    /** The link from {@code from} to {@code to}. */
    LoopbackProxy link(String from, String to) {
        return links.get(key(from, to));
    }

    @Override
    public void close() {
        for (LoopbackProxy p : links.values()) {
            p.close();
        }
    }
}
