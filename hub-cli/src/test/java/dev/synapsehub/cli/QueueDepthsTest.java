package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code mesh status} shows each node's offline queue depth, and "?" for a node that did not answer. */
class QueueDepthsTest {
    @Test
    void theTotalCountsTheNodesThatAnsweredAndEachNodeIsShown() {
        Map<String, Integer> depths = new LinkedHashMap<>();
        depths.put("n1", 0);
        depths.put("n2", 3);
        depths.put("n3", null);
        assertThat(QueueDepths.text(depths)).isEqualTo("3 queued (n1 0, n2 3, n3 ?)");
        ObjectNode o = new ObjectMapper().createObjectNode();
        QueueDepths.put(o, depths);
        assertThat(o.path("queue_depth").asInt()).isEqualTo(3);
        assertThat(o.path("queue_depths").path("n2").asInt()).isEqualTo(3);
        assertThat(o.path("queue_depths").get("n3").isNull()).isTrue();

        Map<String, Integer> none = new LinkedHashMap<>();
        none.put("n1", null);
        assertThat(QueueDepths.text(none)).isEqualTo("? queued (n1 ?)");
        ObjectNode unknown = new ObjectMapper().createObjectNode();
        QueueDepths.put(unknown, none);
        assertThat(unknown.get("queue_depth").isNull()).isTrue();
    }
}
