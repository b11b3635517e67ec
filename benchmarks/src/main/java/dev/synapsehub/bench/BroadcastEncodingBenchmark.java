package dev.synapsehub.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.net.protocol.ClaimFrames;
import dev.synapsehub.net.protocol.ReleaseReceipt;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.PythonFloatFormat;
import dev.synapsehub.net.wire.WireJson;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Encoding the two broadcasts of one claim cycle as the hub does (frame object, then its JSON
 * text), once per cycle whatever the audience: {@code claim_granted} and {@code release_granted}
 * with its receipt, as in {@code synapse-hub bench}; and one timestamp in Python repr.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class BroadcastEncodingBenchmark {
    private WireJson json;
    private ClaimFrames frames;
    private Claim claim;
    private ReleaseReceipt receipt;
    private double now;

    @Setup
    public void setUp() {
        json = new WireJson(64);
        frames = new ClaimFrames(new HubFrames(json, "syn-3ad5d2bd"));
        now = 1_796_004_749.443;
        claim = new Claim("a12s1-t123", "bench-abcdef/a12", "127.0.0.1", "", now, now + 3600, ClaimStatus.CLAIMED, "",
                "wt-abcdef-12", List.of("src/a12s1-t123"), 1, 0, "", null);
        ObjectNode release = json.object();
        release.put("type", "release");
        release.put("task_id", claim.taskId());
        receipt = ReleaseReceipt.from(release);
    }

    @Benchmark
    public String claimGranted() {
        return json.write(frames.claimGranted(claim, "Task 'a12s1-t123' claimed by bench-abcdef/a12.", now));
    }

    @Benchmark
    public String releaseGranted() {
        return json.write(frames.releaseGranted(claim, "Task 'a12s1-t123' released by bench-abcdef/a12.", now, receipt));
    }

    @Benchmark
    public String timestamp() {
        return PythonFloatFormat.format(now);
    }
}
