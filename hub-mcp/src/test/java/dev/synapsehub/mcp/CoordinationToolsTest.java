package dev.synapsehub.mcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** Tool arguments refused before anything is sent (the link is never started: a call that got through would fail otherwise). */
class CoordinationToolsTest {
    private final HubLink link;
    private final CoordinationTools tools;

    CoordinationToolsTest() throws Exception {
        McpSettings settings = new McpSettings(URI.create("ws://127.0.0.1:1/"), "proj/me", null,
                Duration.ofMillis(200), McpSettings.DEFAULT_HEARTBEAT, 10, null);
        Inbox inbox = new Inbox(10, null);
        link = new HubLink(settings, inbox);
        tools = new CoordinationTools(link, inbox);
    }

    @AfterEach
    void close() {
        link.close();
    }

    private CoordinationTools.Tool tool(String name) {
        return tools.all().stream().filter(t -> t.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void sendToNobodyIsRefusedRatherThanBroadcast() {
        for (String to : new String[] {"", "  "}) {
            ToolFailure f = catchThrowableOfType(() -> CoordinationTools.run(tool("send"),
                    Map.of("to", to, "text", "hi")), ToolFailure.class);
            assertThat(f).as("to '%s'", to).isNotNull();
            assertThat(f.type()).isEqualTo("invalid_arguments");
            assertThat(f.error()).containsEntry("field", "to");
        }
    }
}
