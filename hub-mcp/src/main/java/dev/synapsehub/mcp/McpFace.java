package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code synapse-hub mcp}: a Model Context Protocol server on stdin/stdout (the official Java
 * SDK) that is one agent on a hub. Tools are the {@link CoordinationTools}; resources
 * {@code synapse://state}, {@code synapse://who} and {@code synapse://board} are the hub's
 * snapshots, {@code synapse://link} the face's own connection status. It runs until its input
 * ends (the MCP client went away).
 */
public final class McpFace {
    private static final Logger LOG = LoggerFactory.getLogger(McpFace.class);

    /** What the MCP client tells the model about this server. */
    static String instructions(String agent) {
        return "You are agent '" + agent + "' on a synapse coordination hub shared with other agents. Before "
                + "editing files, claim the task with the paths you will touch (claim); a refusal tells you who holds "
                + "what (claim_denied with reason_code). Keep the lease alive with renew, save resume points with "
                + "checkpoint, and finish with release (add evidence: tests run, files changed) or handoff. The board "
                + "(ledger_task, ledger_task_update, ledger_progress, board) is the shared plan. Read messages with "
                + "inbox and write with send. Tool errors are the hub's typed refusals; a call that timed out can be "
                + "retried with the idem_key it returned.";
    }

    private McpFace() {
    }

    /**
     * Serves MCP on {@code in}/{@code out} as {@code settings.name()} until {@code in} ends.
     *
     * @param version reported to the MCP client as the server version
     */
    public static void run(McpSettings settings, String version, InputStream in, OutputStream out)
            throws IOException, InterruptedException {
        InFlight inFlight = new InFlight();
        ProtocolOutput protocol = new ProtocolOutput(out, inFlight);
        // closed in reverse: the link stops offering chats before the inbox lets its cursor file settle
        try (Inbox inbox = new Inbox(settings.inboxCapacity(), settings.cursorFile());
             HubLink link = new HubLink(settings, inbox)) {
            link.start();
            CoordinationTools tools = new CoordinationTools(link, inbox);
            // requests run at most about twice the request timeout (renew reads, then claims)
            long endGrace = 2 * settings.requestTimeout().toMillis() + 5_000;
            StdioGate gate = new StdioGate(in, protocol, tools.all().stream().map(CoordinationTools.Tool::name)
                    .collect(java.util.stream.Collectors.toSet()), inFlight, endGrace);
            // the gate reads the client's lines and answers malformed ones; the SDK sees only well-formed messages
            StdioServerTransportProvider transport = new StdioServerTransportProvider(McpJsonDefaults.getMapper(),
                    gate.passed(), protocol, Integer.MAX_VALUE);
            McpSyncServer server = McpServer.sync(transport)
                    .serverInfo("synapse-hub", version)
                    .instructions(instructions(settings.name()))
                    .capabilities(McpSchema.ServerCapabilities.builder().tools(false).resources(false, false).build())
                    // our own check answers with a typed invalid_arguments error naming the field
                    .validateToolInputs(false)
                    .tools(toolSpecifications(tools))
                    .resources(resourceSpecifications(tools, link))
                    .build();
            Thread reader = new Thread(gate, "mcp-stdin");
            reader.setDaemon(true);
            reader.start();
            LOG.info("MCP face of {} on {} serving {} tools on stdio", settings.name(), settings.url(),
                    tools.all().size());
            gate.ended().await();
            // the SDK has every line the gate passed and the end queued: let it read them before closing
            if (!gate.passed().awaitDrained(endGrace)) {
                LOG.warn("the MCP transport had not read its input {} ms after it ended; closing", endGrace);
            }
            LOG.info("MCP input ended; closing");
            server.closeGracefully();
        }
    }

    static List<McpServerFeatures.SyncToolSpecification> toolSpecifications(CoordinationTools tools) {
        List<McpServerFeatures.SyncToolSpecification> specs = new ArrayList<>();
        for (CoordinationTools.Tool tool : tools.all()) {
            McpSchema.Tool t = McpSchema.Tool.builder()
                    .name(tool.name())
                    .title(tool.title())
                    .description(tool.description())
                    .inputSchema(tool.input().toJsonSchema())
                    .annotations(new McpSchema.ToolAnnotations(tool.title(), tool.readOnly(), false, null, false, null))
                    .build();
            specs.add(new McpServerFeatures.SyncToolSpecification(t, (exchange, request) -> call(tool,
                    request.arguments())));
        }
        return specs;
    }

    /** One call: the result as structured content plus the same JSON as text, or a typed tool error. */
    static McpSchema.CallToolResult call(CoordinationTools.Tool tool, Map<String, Object> arguments) {
        Map<String, Object> body;
        boolean failed;
        try {
            body = CoordinationTools.run(tool, arguments);
            failed = false;
        } catch (ToolFailure f) {
            body = new LinkedHashMap<>();
            body.put("ok", false);
            body.putAll(f.retryIds());
            body.put("error", f.error());
            if (f.reply() != null) {
                body.put("reply", Frames.plain(f.reply()));
            }
            failed = true;
            LOG.debug("tool {} failed: {}", tool.name(), f.getMessage());
        } catch (RuntimeException e) {
            LOG.error("tool {} failed unexpectedly", tool.name(), e);
            body = new LinkedHashMap<>();
            body.put("ok", false);
            body.put("error", Map.of("type", "internal_error", "message", String.valueOf(e)));
            failed = true;
        }
        return McpSchema.CallToolResult.builder()
                .structuredContent(body)
                .addTextContent(Frames.json(body))
                .isError(failed)
                .build();
    }

    static List<McpServerFeatures.SyncResourceSpecification> resourceSpecifications(CoordinationTools tools,
            HubLink link) {
        List<McpServerFeatures.SyncResourceSpecification> specs = new ArrayList<>();
        specs.add(snapshotResource(tools, "state", "state_request", "state_snapshot", "snapshot",
                "Live claims, resource offers, agents last seen and dead letters."));
        specs.add(snapshotResource(tools, "who", "who_request", "who_snapshot", null,
                "Agents online, roles, liveness and mailbox backlogs."));
        specs.add(snapshotResource(tools, "board", "board_request", "board_snapshot", "board",
                "The task board: tasks, ready ids and progress notes."));
        McpSchema.Resource status = McpSchema.Resource.builder().uri("synapse://link").name("link")
                .title("MCP face connection").description("This MCP server's connection to its hub: agent name, URL, "
                        + "connected or not, reconnections, the inbox cursor, background cursor-file lowerings and acks that failed.")
                .mimeType("application/json").build();
        specs.add(new McpServerFeatures.SyncResourceSpecification(status, (exchange, request) ->
                new McpSchema.ReadResourceResult(List.of(new McpSchema.TextResourceContents(status.uri(),
                        "application/json", Frames.json(link.status()))))));
        return specs;
    }

    private static McpServerFeatures.SyncResourceSpecification snapshotResource(CoordinationTools tools, String name,
            String verb, String answer, String member, String description) {
        McpSchema.Resource r = McpSchema.Resource.builder().uri("synapse://" + name).name(name)
                .title("Hub " + name).description(description + " Read from the hub at each request.")
                .mimeType("application/json").build();
        return new McpServerFeatures.SyncResourceSpecification(r, (exchange, request) -> {
            ObjectNode reply;
            try {
                reply = tools.snapshot(verb, answer);
            } catch (ToolFailure f) {
                throw McpError.builder(McpSchema.ErrorCodes.INTERNAL_ERROR).message(f.getMessage()).data(f.error())
                        .build();
            }
            Object body = member == null ? Frames.plain(reply) : Frames.plain(reply.path(member));
            return new McpSchema.ReadResourceResult(List.of(new McpSchema.TextResourceContents(r.uri(),
                    "application/json", Frames.json(body))));
        });
    }
}
