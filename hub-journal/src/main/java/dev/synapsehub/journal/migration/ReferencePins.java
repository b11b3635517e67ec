package dev.synapsehub.journal.migration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.core.event.IdentityPinEvent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The reference hub's identity pin file (wire contract A2.5, {@code --identity-pins FILE}):
 * {@code {"pins": {"<name>": {"key_id", "pinned_at", "public_key"}}}}, read strictly so that an
 * import carries each pin as this hub's {@code identity_pin} event or refuses the whole file.
 */
final class ReferencePins {
    /** The most pins this hub holds (as {@code IdentityPinRegistry}). */
    static final int MAX_PINS = 65_536;

    private ReferencePins() {
    }

    /**
     * The pins of {@code file} as pin events, sorted by name; each event's time is the pin's
     * {@code pinned_at}.
     *
     * @throws ImportRefusedException (source side) naming the first problem; nothing is imported
     */
    static List<IdentityPinEvent> read(Path file) throws ImportRefusedException {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw refused(file, "cannot read it as JSON: " + e.getMessage());
        }
        if (root == null || !root.isObject() || !root.path("pins").isObject()) {
            throw refused(file, "expected {\"pins\": {\"<name>\": {\"key_id\", \"pinned_at\", \"public_key\"}}}");
        }
        JsonNode pins = root.get("pins");
        if (pins.size() > MAX_PINS) {
            throw refused(file, pins.size() + " pins; this hub holds at most " + MAX_PINS);
        }
        Map<String, IdentityPinEvent> byName = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = pins.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String name = e.getKey();
            JsonNode pin = e.getValue();
            String at = "pin '" + name + "'";
            if (name.isBlank() || !name.equals(name.strip())) {
                throw refused(file, at + ": a pinned name is non-blank and has no surrounding spaces");
            }
            if (!pin.isObject()) {
                throw refused(file, at + " is not an object");
            }
            JsonNode keyId = pin.get("key_id");
            if (keyId == null || !keyId.isTextual() || keyId.textValue().isEmpty()) {
                throw refused(file, at + ": key_id must be a non-empty string");
            }
            JsonNode key = pin.get("public_key");
            if (key == null || !key.isTextual() || !isRawKey(key.textValue())) {
                throw refused(file, at + ": public_key must be the standard base64 of a raw 32-byte Ed25519 key");
            }
            JsonNode pinnedAt = pin.get("pinned_at");
            if (pinnedAt == null || !pinnedAt.isNumber() || !Double.isFinite(pinnedAt.doubleValue())
                    || pinnedAt.doubleValue() < 0) {
                throw refused(file, at + ": pinned_at must be a finite, non-negative number of Unix seconds");
            }
            byName.put(name, new IdentityPinEvent(pinnedAt.doubleValue(), IdentityPinEvent.Op.PIN, name,
                    keyId.textValue(), key.textValue()));
        }
        return new ArrayList<>(byName.values());
    }

    private static boolean isRawKey(String base64) {
        try {
            byte[] raw = Base64.getDecoder().decode(base64);
            return raw.length == 32 && Base64.getEncoder().encodeToString(raw).equals(base64);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static ImportRefusedException refused(Path file, String why) {
        return new ImportRefusedException(ImportRefusedException.Side.SOURCE, "--identity-pins " + file + ": " + why
                + ". Nothing was written.");
    }
}
