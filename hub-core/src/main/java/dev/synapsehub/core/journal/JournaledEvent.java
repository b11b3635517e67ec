package dev.synapsehub.core.journal;

import dev.synapsehub.core.event.CoordinationEvent;

/** An event together with the journal sequence number it was committed under. */
public record JournaledEvent(long seq, CoordinationEvent event) {
}
