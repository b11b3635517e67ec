package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** The cockpit's HTTP API on loopback, as a page uses it: bearer header, JSON, an event stream. */
final class CockpitHttp implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final int port;
    private final String token;
    private Thread reader;
    private InputStream stream;

    CockpitHttp(int port, String token) {
        this.port = port;
        this.token = token;
    }

    HttpResponse<String> get(String pathAndQuery) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
                .timeout(Duration.ofSeconds(10)).GET();
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The JSON body of a view that must answer 200. */
    JsonNode view(String pathAndQuery) throws Exception {
        HttpResponse<String> r = get(pathAndQuery);
        if (r.statusCode() != 200) {
            throw new AssertionError(pathAndQuery + " answered " + r.statusCode() + ": " + r.body());
        }
        return JSON.readTree(r.body());
    }

    /** Opens {@code /ui/api/events}; its events ("event" name + data) arrive on the returned queue. */
    BlockingQueue<JsonNode> events(String query) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/ui/api/events" + query))
                .GET();
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        HttpResponse<InputStream> r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        if (r.statusCode() != 200) {
            throw new AssertionError("event stream answered " + r.statusCode());
        }
        if (!r.headers().firstValue("content-type").orElse("").startsWith("text/event-stream")) {
            throw new AssertionError("not an event stream: " + r.headers().map());
        }
        stream = r.body();
        BlockingQueue<JsonNode> out = new LinkedBlockingQueue<>();
        reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                String event = "message";
                for (String line; (line = in.readLine()) != null; ) {
                    if (line.startsWith("event: ")) {
                        event = line.substring(7);
                    } else if (line.startsWith("data: ")) {
                        com.fasterxml.jackson.databind.node.ObjectNode o = JSON.createObjectNode();
                        o.put("event", event);
                        o.set("data", JSON.readTree(line.substring(6)));
                        out.add(o);
                    } else if (line.isEmpty()) {
                        event = "message";
                    }
                }
            } catch (Exception e) {
                // the stream closed: the test is over or the hub stopped
            }
        }, "cockpit-events-reader");
        reader.setDaemon(true);
        reader.start();
        return out;
    }

    /** The next event matching {@code test}, skipping others; fails after {@code wait}. */
    static JsonNode next(BlockingQueue<JsonNode> events, java.util.function.Predicate<JsonNode> test, Duration wait)
            throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        for (int i = 0; i < 100_000; i++) {
            long left = deadline - System.nanoTime();
            JsonNode e = left <= 0 ? null : events.poll(left, TimeUnit.NANOSECONDS);
            if (e == null) {
                throw new AssertionError("no matching cockpit event within " + wait);
            }
            if (test.test(e)) {
                return e;
            }
        }
        throw new AssertionError("no matching cockpit event among 100000");
    }

    @Override
    public void close() throws Exception {
        if (stream != null) {
            stream.close();
        }
    }
}
