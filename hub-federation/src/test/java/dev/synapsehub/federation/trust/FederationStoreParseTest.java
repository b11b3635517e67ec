package dev.synapsehub.federation.trust;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A store or bundle that is not a JSON object is refused as an operator reads it, without the parser's internals. */
class FederationStoreParseTest {
    private static final Path FILE = Path.of("/srv/fed/federation.json");

    @Test
    void aStoreThatIsNotValidJsonSaysWhereWithoutTheParsersSourceDescription() {
        assertThatThrownBy(() -> FederationStore.parse("{\"version\": 1,\n".getBytes(StandardCharsets.UTF_8), FILE,
                "federation store:"))
                .isInstanceOf(TrustFileException.class)
                .hasMessageStartingWith("federation store: " + FILE + " is not valid JSON (at line 2, column 1: ")
                .hasMessageNotContaining("Source:");
    }

    @Test
    void aBundleThatIsAnArrayIsNotAJsonObject() {
        assertThatThrownBy(() -> FederationStore.parseBundle("[1]".getBytes(StandardCharsets.UTF_8), FILE))
                .isInstanceOf(TrustFileException.class)
                .hasMessage("bundle " + FILE + " is not a JSON object");
    }
}
