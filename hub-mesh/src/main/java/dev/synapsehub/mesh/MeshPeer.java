package dev.synapsehub.mesh;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** One voter of the mesh: its node id and the host:port its Raft (gRPC) server listens on. */
public record MeshPeer(String id, String host, int port) {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    public MeshPeer {
        if (id == null || !ID.matcher(id).matches()) {
            throw new IllegalArgumentException("mesh node id '" + id + "' must be 1-64 of A-Z a-z 0-9 _ . -");
        }
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("mesh peer " + id + " has no host");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("mesh peer " + id + " port " + port + " is not 1-65535");
        }
    }

    /** {@code host:port}. */
    public String address() {
        return host + ":" + port;
    }

    /**
     * Parses {@code id=host:port[,id=host:port...]} (the {@code --mesh-peers} value), in order.
     *
     * @throws IllegalArgumentException naming the first malformed or duplicate entry
     */
    public static List<MeshPeer> parseList(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException("--mesh-peers is empty; expected id=host:port[,id=host:port...]");
        }
        Map<String, MeshPeer> peers = new LinkedHashMap<>();
        for (String part : spec.split(",")) {
            String item = part.strip();
            int eq = item.indexOf('=');
            int colon = item.lastIndexOf(':');
            if (eq <= 0 || colon <= eq + 1 || colon == item.length() - 1) {
                throw new IllegalArgumentException("mesh peer '" + item + "' is not id=host:port");
            }
            int port;
            try {
                port = Integer.parseInt(item.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("mesh peer '" + item + "' has a port that is not a number");
            }
            MeshPeer peer = new MeshPeer(item.substring(0, eq).strip(), item.substring(eq + 1, colon).strip(), port);
            if (peers.put(peer.id(), peer) != null) {
                throw new IllegalArgumentException("mesh peer id '" + peer.id() + "' is listed twice");
            }
        }
        return new ArrayList<>(peers.values());
    }
}
