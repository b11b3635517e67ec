package dev.synapsehub.federation.link;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PeerLink#lastType}, the read-through that stands in for a tree of a frame nothing
 * awaits, has the tree's outcome on every frame that starts an object: it throws exactly where
 * {@link ObjectMapper#readTree} throws, and the type it names is the one the tree reads.
 */
class PeerLinkLastTypeTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static final List<String> OBJECTS = List.of(
            "{\"type\":\"presence\"}",
            "{\"payload\":{\"type\":\"inner\"},\"type\":\"presence\"}",
            "{\"type\":\"presence\",\"type\":\"chat\"}",
            "{\"type\":\"presence\",\"type\":5}",
            "{\"type\":\"presence\",\"type\":null}",
            "{\"type\":\"presence\",\"type\":{\"a\":[1]}}",
            "{\"type\":{\"a\":[1]},\"type\":\"chat\"}",
            "{\"type\":\"\"}",
            "{\"payload\":1}",
            "{}",
            "{\"type\":\"presence\"} garbage",
            "{\"type\":\"presence\"} {}",
            "{\"type\":\"presence\"}]",
            "{\"type\":\"presence\",\"n\":1e99999,\"m\":-0.0,\"s\":\"\\ud800\"}",
            "{\"type\":\"presence\"",
            "{\"type\":\"presence\",",
            "{\"type\":\"presence\", oops}",
            "{\"type\":\"presence\",\"n\":1,}",
            "{\"type\":\"presence\",\"a\":[1,]}",
            "{\"type\":\"presence\",\"a\":01}",
            "{\"type\":\"presence\",\"a\":NaN}",
            "{\"type\":\"presence\",\"a\":tru}",
            "{\"type\":\"presence\",\"a\":.5}",
            "{\"type\":\"presence\",\"a\":\"\\q\"}",
            "{\"type\":\"presence\",\"a\":\"\u0001\"}",
            "{\"type\":\"presence\",\"a\":1 // c\n}",
            "{'type':'presence'}",
            "{type:\"presence\"}",
            "{\"type\":\"presence\",\"n\":" + "1".repeat(1000) + "}",
            "{\"type\":\"presence\",\"n\":" + "1".repeat(1001) + "}",
            "{\"type\":\"presence\",\"n\":1." + "1".repeat(1001) + "}",
            "{\"type\":\"presence\",\"n\":" + "[".repeat(999) + "]".repeat(999) + "}",
            "{\"type\":\"presence\",\"n\":" + "[".repeat(1000) + "]".repeat(1000) + "}");

    @Test
    void throwsWhereTheTreeThrowsAndNamesTheTypeTheTreeReads() {
        JsonFactory json = MAPPER.getFactory();
        for (String frame : OBJECTS) {
            byte[] bytes = frame.getBytes(StandardCharsets.UTF_8);
            JsonNode tree;
            try {
                tree = MAPPER.readTree(bytes, 0, bytes.length);
            } catch (IOException refused) {
                tree = null;
            }
            String type;
            boolean threw;
            try {
                type = PeerLink.lastType(json, bytes, bytes.length);
                threw = false;
            } catch (IOException refused) {
                type = null;
                threw = true;
            }
            String shown = frame.length() > 60 ? frame.substring(0, 60) + "..." : frame;
            assertThat(threw).as("throws like the tree: " + shown).isEqualTo(tree == null);
            if (type != null) {
                assertThat(tree.path("type").isTextual()).as(shown).isTrue();
                assertThat(type).as(shown).isEqualTo(tree.path("type").asText());
            } else if (tree != null) {
                assertThat(tree.path("type").isTextual()).as("the tree decides only what has no string type: " + shown)
                        .isFalse();
            }
        }
    }

    @Test
    void aFrameThatMayHoldAStringOverTheLimitIsLeftToTheTree() throws IOException {
        ObjectMapper strict = new ObjectMapper(JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(40).build()).build());
        byte[] longString = ("{\"type\":\"presence\",\"p\":\"" + "x".repeat(41) + "\"}").getBytes(StandardCharsets.UTF_8);
        byte[] shortFrame = "{\"type\":\"presence\",\"p\":\"xx\"}".getBytes(StandardCharsets.UTF_8);

        // read through, a string is skipped unmeasured: only the tree would refuse it
        assertThat(PeerLink.lastType(strict.getFactory(), longString, longString.length)).isNull();
        assertThat(PeerLink.lastType(strict.getFactory(), shortFrame, shortFrame.length)).isEqualTo("presence");
    }
}
