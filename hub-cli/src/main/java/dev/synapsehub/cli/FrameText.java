package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.synapsehub.net.wire.CanonicalJson;

/** A frame printed for {@code --json} as the hub writes it: members in order, floats in Python's {@code repr}. */
final class FrameText {
    private FrameText() {
    }

    /**
     * {@code frame} as compact JSON. Jackson's own rendering prints a double as Java does
     * ({@code 1.7964500961302543E9}), which is still JSON but not the text the hub sent.
     */
    static String of(JsonNode frame) {
        return CanonicalJson.writeInOrder(frame, false);
    }
}
