package dev.synapsehub.net.wire;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;

import java.util.Collection;

/** Builds hub-originated frames with the common envelope of contract §4.2. */
public final class HubFrames {
    /** The hub's sender name on every frame it originates. */
    public static final String HUB_SENDER = "SynapseHub";

    private final WireJson json;
    private final String hubId;

    /** Frames stamped with {@code hubId}. */
    public HubFrames(WireJson json, String hubId) {
        this.json = json;
        this.hubId = hubId;
    }

    /** sender, target, type, payload, timestamp, hub_id — in the reference's order. */
    public ObjectNode envelope(String target, String type, String payload, double timestamp) {
        ObjectNode frame = json.object();
        frame.put("sender", HUB_SENDER);
        frame.put("target", target);
        frame.put("type", type);
        frame.put("payload", payload);
        putFloat(frame, "timestamp", timestamp);
        frame.put("hub_id", hubId);
        return frame;
    }

    /** A private {@code error} frame. */
    public ObjectNode error(String target, String payload, double timestamp) {
        return envelope(target, "error", payload, timestamp);
    }

    /** Writes a float member in Python {@code repr} style (never Java's {@code 1.0E9}). */
    public static void putFloat(ObjectNode frame, String name, double value) {
        frame.putRawValue(name, new RawValue(PythonFloatFormat.format(value)));
    }

    /** Adds a string array member. */
    public static ArrayNode putStrings(ObjectNode frame, String name, Collection<String> values) {
        ArrayNode array = frame.putArray(name);
        values.forEach(array::add);
        return array;
    }

    /** Serialises a frame. */
    public String write(ObjectNode frame) {
        return json.write(frame);
    }

    /** The hub id stamped on frames. */
    public String hubId() {
        return hubId;
    }
}
