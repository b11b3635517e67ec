package dev.synapsehub.core.claim;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/** The lifecycle of a claimed task (wire contract §7.5); done and failed are terminal. */
public enum ClaimStatus {
    CLAIMED, WORKING, INPUT_REQUIRED, DONE, FAILED;

    private static final ClaimStatus[] ALL = values();

    private final String wire = name().toLowerCase(Locale.ROOT);

    /** The wire spelling, e.g. {@code input_required}. */
    public String wire() {
        return wire;
    }

    /** Parses a wire spelling exactly (no trimming, no case folding); empty when unknown. */
    public static Optional<ClaimStatus> fromWire(String value) {
        for (ClaimStatus status : ALL) {
            if (status.wire.equals(value)) {
                return Optional.of(status);
            }
        }
        return Optional.empty();
    }

    /** True when a task in this status may move to {@code target}; restating is always allowed. */
    public boolean canMoveTo(ClaimStatus target) {
        return this == target || successors().contains(target);
    }

    private Set<ClaimStatus> successors() {
        return switch (this) {
            case CLAIMED -> EnumSet.of(WORKING, DONE, FAILED);
            case WORKING -> EnumSet.of(INPUT_REQUIRED, DONE, FAILED);
            case INPUT_REQUIRED -> EnumSet.of(WORKING, DONE, FAILED);
            case DONE, FAILED -> EnumSet.noneOf(ClaimStatus.class);
        };
    }
}
