package dev.synapsehub.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.messaging.ChatStamp;
import dev.synapsehub.net.protocol.ChatTemplate;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * What the writer spends stamping one chat frame (issue 11): before, it copied the frame's JSON
 * tree and serialised it; now it joins the strings {@link ChatTemplate} rendered on the event
 * loop. Only the writer's part is measured.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class ChatRenderBenchmark {
    private static final String HUB_ID = "syn-0123abcd";

    @Param({"100", "65536"})
    int payloadChars;

    private final WireJson json = new WireJson(64);
    private ObjectNode base;
    private ChatTemplate template;
    private ChatStamp stamp;

    @Setup
    public void setUp() {
        base = (ObjectNode) json.parse("{\"sender\":\"p/alpha\",\"type\":\"chat\",\"target\":\"p/beta\",\"payload\":\""
                + "x".repeat(payloadChars) + "\",\"receipt_requested\":true,\"timestamp\":1796116404.5}");
        template = ChatTemplate.of(base, json, HUB_ID);
        stamp = new ChatStamp(4242, 1796116404.535, 1796116404.5, "client-1");
    }

    /** The former writer's work: copy the tree, stamp it, serialise it. */
    @Benchmark
    public String tree() {
        ObjectNode f = base.deepCopy();
        HubFrames.putFloat(f, "timestamp", stamp.hubTimestamp());
        HubFrames.putFloat(f, "client_timestamp", stamp.clientTimestamp());
        f.put("hub_id", HUB_ID);
        f.put("msg_id", stamp.msgId());
        f.put("client_msg_id", stamp.clientMsgId());
        return json.write(f);
    }

    /** The writer's work now. */
    @Benchmark
    public String template() {
        return template.render(stamp);
    }
}
