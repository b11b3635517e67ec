package dev.synapsehub.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.MessageAuthKey;
import dev.synapsehub.net.auth.MessageAuthenticator;
import dev.synapsehub.net.auth.SigningTime;
import dev.synapsehub.net.auth.ReplayCache;
import dev.synapsehub.net.wire.WireJson;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Verifying signed claim frames (contract §9) as the hub does, at a steady 10,000 frames per
 * simulated second: each frame is canonicalised, its HMAC checked, its nonce admitted to a
 * replay cache that holds the window's ~100,000 live nonces. {@code verify} is the whole check
 * (and signs the frame first, as a client would, so its score counts two HMACs);
 * {@code admitOnly} isolates the replay cache. Both must answer {@code ok} every time
 * (a false {@code replayed} would throw), so the scores are throughput without refusals.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class SignedFrameBenchmark {
    private static final String SECRET = "bench-secret";
    private static final double RATE = 10_000.0;

    private MessageAuthenticator authenticator;
    private ReplayCache cache;
    private ObjectNode template;
    private long frames;

    @Setup(Level.Iteration)
    public void setUp() {
        authenticator = new MessageAuthenticator(List.of(new MessageAuthKey("k1", SECRET, Set.of("bench/agent"))),
                true, 10.0, 1.0, ReplayCache.DEFAULT_CAPACITY);
        cache = new ReplayCache(ReplayCache.DEFAULT_CAPACITY, 10.0);
        WireJson json = new WireJson(64);
        template = json.object();
        template.put("sender", "bench/agent").put("type", "claim").put("task_id", "T-1").put("worktree", "wt");
        template.putArray("paths").add("src/a");
        frames = 0;
    }

    private double now() {
        return 1_796_000_000.0 + frames / RATE;
    }

    @Benchmark
    public String verify() {
        double now = now();
        ObjectNode frame = template.deepCopy();
        ObjectNode auth = frame.putObject("auth");
        auth.put("alg", "hmac-sha256").put("kid", "k1").put("nonce", "n-" + frames).put("sequence", frames + 1)
                .put("timestamp", now);
        auth.put("value", MessageAuthenticator.mac(SECRET, MessageAuthenticator.canonicalBytes(frame)));
        frames++;
        String result = authenticator.verify(frame, "bench/agent", SigningTime.at(now));
        if (!"ok".equals(result)) {
            throw new IllegalStateException("refused: " + result + " at frame " + frames);
        }
        return result;
    }

    @Benchmark
    public boolean admitOnly() {
        double now = now();
        boolean admitted = cache.admit("k1", "bench/agent", "n-" + frames, now, SigningTime.at(now));
        frames++;
        if (!admitted) {
            throw new IllegalStateException("refused as replayed at frame " + frames);
        }
        return admitted;
    }
}
