package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.messaging.ChatStamp;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The writer's string join gives exactly the frame that stamping the JSON tree and serialising it
 * gives (the tree path is the oracle: it is how the hub rendered chats before).
 */
class ChatTemplateTest {
    private static final WireJson JSON = new WireJson(64);
    private static final String HUB_ID = "syn-0123abcd";

    /** The former rendering: copy the tree, stamp it, serialise it. */
    private static String byTree(ObjectNode base, ChatStamp stamp) {
        ObjectNode f = base.deepCopy();
        HubFrames.putFloat(f, "timestamp", stamp.hubTimestamp());
        if (stamp.clientTimestamp() != null) {
            HubFrames.putFloat(f, "client_timestamp", stamp.clientTimestamp());
        }
        f.put("hub_id", HUB_ID);
        f.put("msg_id", stamp.msgId());
        if (stamp.clientMsgId() != null) {
            f.put("client_msg_id", stamp.clientMsgId());
        }
        return JSON.write(f);
    }

    private static void assertSame(String frame, ChatStamp stamp) {
        ObjectNode base = (ObjectNode) JSON.parse(frame);
        assertThat(ChatTemplate.of(base, JSON, HUB_ID).render(stamp)).as(frame).isEqualTo(byTree(base, stamp));
    }

    @Test
    void handPickedFramesRenderByteForByteAsTheTreeDid() {
        List<String> frames = List.of(
                "{\"sender\":\"p/a\",\"type\":\"chat\",\"target\":\"all\",\"payload\":\"hi\"}",
                "{\"timestamp\":1.5,\"sender\":\"p/a\",\"type\":\"chat\"}",
                "{\"sender\":\"p/a\",\"timestamp\":\"x\",\"type\":\"chat\",\"extra\":{\"n\":[1,2.50,-3e-7,1E+300]}}",
                "{\"sender\":\"p/a\",\"type\":\"chat\",\"timestamp\":17e8}",
                "{\"sender\":\"p/\\u00e9l\\u00e8ve\",\"type\":\"chat\",\"payload\":\"\\\"q\\\" \\\\ \\n \\t \\u0001 / \\ud83d\\ude00 \\u2028\"}",
                "{\"sender\":\"p/a\",\"type\":\"chat\",\"big\":123456789012345678901234567890,\"f\":0.1,\"t\":true,\"z\":null}",
                "{\"sender\":\"p/a\",\"type\":\"chat\",\"k\\\"ey\":\"v\",\"timestamp\":0}");
        List<ChatStamp> stamps = List.of(
                new ChatStamp(1, 1796116404.535, null, null),
                new ChatStamp(42, 1e9, 1.796116404535E9, "id-1"),
                new ChatStamp(7, 0.1, 5e-324, "\"quoted\" \\ \u00e9 \ud83d\ude00"));
        for (String frame : frames) {
            for (ChatStamp stamp : stamps) {
                assertSame(frame, stamp);
            }
        }
    }

    @Test
    void randomFramesRenderByteForByteAsTheTreeDid() {
        Random r = new Random(20261201);
        String[] values = {"\"s\"", "1", "-0.0", "2.5e10", "true", "null", "[]", "{\"a\":[1,{\"b\":\"\\u00fc\"}]}",
            "\"\\u0000\\u001f\"", "123456789012345678901234567890.5"};
        for (int i = 0; i < 2_000; i++) {
            StringBuilder f = new StringBuilder("{\"sender\":\"p/r\",\"type\":\"chat\"");
            int members = r.nextInt(6);
            int timestampAt = r.nextInt(members + 2) - 1; // -1: none
            for (int m = 0; m < members; m++) {
                if (m == timestampAt) {
                    f.append(",\"timestamp\":").append(r.nextInt(100));
                }
                f.append(",\"m").append(m).append("\":").append(values[r.nextInt(values.length)]);
            }
            if (timestampAt == members) {
                f.append(",\"timestamp\":").append(r.nextDouble());
            }
            f.append('}');
            ChatStamp stamp = new ChatStamp(r.nextInt(1 << 20), 1.7e9 + r.nextDouble() * 1e8,
                    r.nextBoolean() ? null : r.nextDouble() * 1e9, r.nextBoolean() ? null : "c" + r.nextInt());
            assertSame(f.toString(), stamp);
        }
    }
}
