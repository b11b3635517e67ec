package dev.synapsehub.mesh;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The durable offline queue of one mesh node (seed 001 §9), a file beside the node's journal
 * ({@code <db>.intents}). Each save writes the whole queue to a temporary file, fsyncs it, moves
 * it over the old one atomically and fsyncs the directory, so a crash leaves either the old or
 * the new queue. The first line carries a SHA-256 of the body: a damaged file is refused at
 * start with a clear error instead of silently dropping queued writes.
 */
final class IntentStore {
    private static final String MAGIC = "synapse-intents v1 sha256=";

    /** What a load found: the entries and the next origin sequence to hand out. */
    record Contents(List<QueuedIntent> intents, long lastOriginSeq) {
        Contents {
            intents = List.copyOf(intents);
        }
    }

    private final Path file;
    private final String nodeId;

    IntentStore(Path file, String nodeId) {
        this.file = file;
        this.nodeId = nodeId;
    }

    /** {@code <db>.intents} for a node whose Raft storage is {@code <db>.raft}. */
    static Path beside(Path raftStorage) {
        String name = raftStorage.getFileName().toString();
        String base = name.endsWith(".raft") ? name.substring(0, name.length() - ".raft".length()) : name;
        return raftStorage.resolveSibling(base + ".intents");
    }

    Path file() {
        return file;
    }

    /**
     * Reads the queue; an absent file is an empty queue.
     *
     * @throws IOException when the file cannot be read, its checksum does not match, or it
     *     belongs to another node
     */
    Contents load() throws IOException {
        if (!Files.exists(file)) {
            return new Contents(List.of(), 0);
        }
        byte[] all = Files.readAllBytes(file);
        int newline = indexOf(all, (byte) '\n');
        String header = newline < 0 ? "" : new String(all, 0, newline, StandardCharsets.US_ASCII);
        if (!header.startsWith(MAGIC)) {
            throw new IOException("the intent queue " + file + " is not a synapse intent file (bad header)");
        }
        byte[] body = java.util.Arrays.copyOfRange(all, newline + 1, all.length);
        String expected = header.substring(MAGIC.length());
        if (!expected.equals(sha256(body))) {
            throw new IOException("the intent queue " + file + " is damaged (checksum mismatch); it is kept as it is"
                    + " for inspection: restore it or move it aside to start with an empty queue");
        }
        JsonNode root;
        try {
            root = MeshJson.tree(body);
        } catch (IllegalArgumentException e) {
            throw new IOException("the intent queue " + file + " is unreadable: " + e.getMessage(), e);
        }
        String owner = root.path("node").asText();
        if (!nodeId.equals(owner)) {
            throw new IOException("the intent queue " + file + " belongs to node '" + owner + "', not '" + nodeId + "'");
        }
        List<QueuedIntent> intents = new ArrayList<>();
        for (JsonNode j : root.path("intents")) {
            try {
                intents.add(QueuedIntent.fromJson(j));
            } catch (IllegalArgumentException e) {
                throw new IOException("the intent queue " + file + " holds a bad entry: " + e.getMessage(), e);
            }
        }
        return new Contents(intents, root.path("lastOriginSeq").asLong());
    }

    /** Replaces the queue on disk with {@code intents}, durably and atomically. */
    void save(List<QueuedIntent> intents, long lastOriginSeq) throws IOException {
        ObjectNode root = MeshJson.MAPPER.createObjectNode();
        root.put("protocol", MeshProtocol.PROTOCOL);
        root.put("version", MeshProtocol.VERSION);
        root.put("node", nodeId);
        root.put("lastOriginSeq", lastOriginSeq);
        ArrayNode list = root.putArray("intents");
        for (QueuedIntent i : intents) {
            list.add(i.toJson());
        }
        byte[] body = MeshJson.bytes(root);
        byte[] header = (MAGIC + sha256(body) + "\n").getBytes(StandardCharsets.US_ASCII);
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = dir.resolve(file.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.allocate(header.length + body.length).put(header).put(body).flip();
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("cannot replace " + file + " atomically: " + e.getMessage(), e);
        }
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true); // the rename itself is durable
        }
    }

    private static int indexOf(byte[] bytes, byte b) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }
}
