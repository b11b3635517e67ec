package dev.synapsehub.cli;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The real {@code synapse-hub mcp} command in a child JVM, driven over its stdin/stdout by the
 * MCP SDK's own client (stdio transport), as a coding agent would run it.
 */
final class McpAgent implements AutoCloseable {
    private final McpSyncClient client;
    private final ConcurrentLinkedQueue<String> stderr = new ConcurrentLinkedQueue<>();

    /** Starts {@code synapse-hub mcp ARGS} and completes the MCP initialisation. */
    McpAgent(String... args) {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of("-cp", classpath, "-Xmx256m", "-XX:TieredStopAtLevel=1",
                Main.class.getName(), "mcp"));
        command.addAll(Arrays.asList(args));
        ServerParameters params = ServerParameters.builder(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString()).args(command).build();
        StdioClientTransport transport = new StdioClientTransport(params, McpJsonDefaults.getMapper());
        transport.setStdErrorHandler(stderr::add);
        client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(60))
                .initializationTimeout(Duration.ofSeconds(60)).build();
        client.initialize();
    }

    /** The SDK client. */
    McpSyncClient client() {
        return client;
    }

    /** Calls a tool. */
    McpSchema.CallToolResult call(String tool, Map<String, Object> arguments) {
        return client.callTool(new McpSchema.CallToolRequest(tool, arguments));
    }

    /** Calls a tool and returns its structured content as a map. */
    @SuppressWarnings("unchecked")
    Map<String, Object> result(String tool, Map<String, Object> arguments) {
        return (Map<String, Object>) call(tool, arguments).structuredContent();
    }

    /** Reads a resource's JSON text. */
    String read(String uri) {
        McpSchema.ReadResourceResult r = client.readResource(new McpSchema.ReadResourceRequest(uri));
        return ((McpSchema.TextResourceContents) r.contents().get(0)).text();
    }

    /** What the child wrote on stderr so far (its log), for failure messages. */
    String log() {
        return String.join("\n", stderr);
    }

    @Override
    public void close() {
        client.closeGracefully();
    }
}
