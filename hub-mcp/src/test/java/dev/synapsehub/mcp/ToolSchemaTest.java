package dev.synapsehub.mcp;

import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ToolSchemaTest {
    private final ToolSchema schema = new ToolSchema()
            .string("task_id", true, "id")
            .strings("paths", false, "paths")
            .integer("epoch", false, 0L, null, "epoch")
            .number("ttl_seconds", false, 30.0, 60.0, "ttl")
            .oneOf("kind", false, List.of("note", "blocked"), "kind")
            .bool("receipt", false, "receipt");

    @Test
    void theJsonSchemaDescribesEveryFieldWithItsType() {
        Map<String, Object> json = schema.toJsonSchema();
        assertThat(json).containsEntry("type", "object").containsEntry("required", List.of("task_id"))
                .containsEntry("additionalProperties", false);
        @SuppressWarnings("unchecked")
        Map<String, Map<String, Object>> props = (Map<String, Map<String, Object>>) json.get("properties");
        assertThat(props.get("paths")).containsEntry("type", "array").containsEntry("items", Map.of("type", "string"));
        assertThat(props.get("epoch")).containsEntry("type", "integer").containsEntry("minimum", 0L);
        assertThat(props.get("ttl_seconds")).containsEntry("minimum", 30.0).containsEntry("maximum", 60.0);
        assertThat(props.get("kind")).containsEntry("enum", List.of("note", "blocked"));
        assertThat(props.values()).allSatisfy(p -> assertThat(p).containsKey("description"));
    }

    @Test
    void argumentsComeBackTyped() throws ToolFailure {
        Map<String, Object> out = schema.check(Map.of("task_id", "t", "paths", List.of("a"), "epoch", 3,
                "ttl_seconds", 45, "kind", "note", "receipt", true));
        assertThat(out).containsEntry("epoch", 3L).containsEntry("ttl_seconds", 45.0).containsEntry("paths", List.of("a"))
                .containsEntry("receipt", true);
        assertThat(schema.check(Map.of("task_id", "t", "epoch", 4.0))).containsEntry("epoch", 4L);
        assertThat(schema.check(Map.of("task_id", "t", "epoch", BigInteger.TEN))).containsEntry("epoch", 10L);
        assertThat(schema.check(Map.of("task_id", "t"))).containsOnlyKeys("task_id");
    }

    @Test
    void eachMismatchIsATypedErrorNamingTheField() {
        expectInvalid(Map.of(), "task_id");
        expectInvalid(Map.of("task_id", 5), "task_id");
        expectInvalid(Map.of("task_id", "t", "paths", "a"), "paths");
        expectInvalid(Map.of("task_id", "t", "paths", List.of("a", 1)), "paths");
        expectInvalid(Map.of("task_id", "t", "epoch", 1.5), "epoch");
        expectInvalid(Map.of("task_id", "t", "epoch", -1), "epoch");
        expectInvalid(Map.of("task_id", "t", "ttl_seconds", 61), "ttl_seconds");
        expectInvalid(Map.of("task_id", "t", "ttl_seconds", Double.NaN), "ttl_seconds");
        expectInvalid(Map.of("task_id", "t", "kind", "gossip"), "kind");
        expectInvalid(Map.of("task_id", "t", "receipt", "yes"), "receipt");
        expectInvalid(Map.of("task_id", "t", "taskid", "x"), "taskid");
    }

    private void expectInvalid(Map<String, Object> args, String field) {
        assertThatThrownBy(() -> schema.check(args)).isInstanceOfSatisfying(ToolFailure.class, f -> {
            assertThat(f.type()).isEqualTo("invalid_arguments");
            assertThat(f.error()).containsEntry("field", field);
        });
    }
}
