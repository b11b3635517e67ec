package dev.synapsehub.core.event;

import dev.synapsehub.core.command.MemoryCommand;

import java.util.Objects;

/**
 * A participant-memory record was written (wire contract A12, PM7): {@code recall} or
 * {@code finding}. Replay builds nothing from it but the finding quota's counts (PM5, PM6); the
 * payload is the stored JSON object, opaque to the core.
 *
 * @param actor the trimmed bound name the record is charged to ({@code by} of a recall,
 *        {@code provenance.actor} of a finding)
 */
public record MemoryEvent(double ts, MemoryCommand.Kind memoryKind, String actor, String payloadJson)
        implements CoordinationEvent {
    public MemoryEvent {
        Objects.requireNonNull(memoryKind, "memoryKind");
        Objects.requireNonNull(actor, "actor");
        if (payloadJson == null || !payloadJson.startsWith("{") || !payloadJson.endsWith("}")) {
            throw new IllegalArgumentException("a memory record's payload is a JSON object");
        }
    }

    @Override
    public String kind() {
        return memoryKind.eventKind();
    }

    /** Recalls at normal sync, findings at full sync (PM7). */
    @Override
    public Durability durability() {
        return memoryKind == MemoryCommand.Kind.FINDING ? Durability.FULL : Durability.NORMAL;
    }
}
