package dev.synapsehub.mcp;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * How the MCP face reaches its hub and as whom, validated once.
 *
 * @param url the hub's WebSocket URL ({@code ws://host:port/})
 * @param name the agent name this face registers as ({@code NS/agent}; the namespace is optional, as on the hub)
 * @param token the connect token of a secured hub, or null
 * @param requestTimeout how long a tool call waits for the hub's answer, reconnecting included
 * @param heartbeatInterval how often the connection says it is alive
 * @param inboxCapacity received items kept until read; older ones are dropped and counted
 * @param cursorFile where the mailbox cursor survives a restart of the face, or null
 */
public record McpSettings(URI url, String name, String token, Duration requestTimeout, Duration heartbeatInterval,
        int inboxCapacity, Path cursorFile) {
    /** The reference clients' keepalive period. */
    public static final Duration DEFAULT_HEARTBEAT = Duration.ofSeconds(20);

    public McpSettings {
        if (url == null || url.getScheme() == null
                || !url.getScheme().toLowerCase(Locale.ROOT).matches("wss?") || url.getHost() == null) {
            throw new IllegalArgumentException("--url must be a ws:// URL with a host, not " + url);
        }
        if (url.getScheme().equalsIgnoreCase("wss")) {
            throw new IllegalArgumentException("--url: wss:// is not supported by the MCP face yet; use ws://");
        }
        if (name == null || name.isBlank() || !name.equals(name.strip())) {
            throw new IllegalArgumentException("--name must be a non-blank agent name without surrounding spaces");
        }
        if (requestTimeout == null || requestTimeout.toMillis() < 100) {
            throw new IllegalArgumentException("--timeout must be at least 0.1 s");
        }
        if (heartbeatInterval == null || heartbeatInterval.toMillis() < 1000) {
            throw new IllegalArgumentException("the heartbeat interval must be at least 1 s");
        }
        if (inboxCapacity < 1) {
            throw new IllegalArgumentException("the inbox capacity must be at least 1");
        }
        if (cursorFile != null) {
            checkCursorDirectory(cursorFile);
        }
        if (token != null && token.isBlank()) {
            token = null;
        }
    }

    /**
     * The cursor is saved through a sibling temporary file after each read: a directory that is
     * missing or not writable would fail only then, after the face started, so refuse at start.
     */
    private static void checkCursorDirectory(Path cursorFile) {
        Path dir = cursorFile.toAbsolutePath().getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--cursor-file: the directory " + dir + " does not exist; create it "
                    + "(mkdir -p " + dir + ") or name a file in an existing directory");
        }
        if (!Files.isWritable(dir)) {
            throw new IllegalArgumentException("--cursor-file: the directory " + dir + " is not writable; the cursor "
                    + "is saved through a temporary file beside it, so give write access or choose another directory");
        }
    }
}
