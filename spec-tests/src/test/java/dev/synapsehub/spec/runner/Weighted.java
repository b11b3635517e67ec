package dev.synapsehub.spec.runner;

import java.util.Random;
import java.util.function.Function;

/**
 * An action generator with a relative weight.
 *
 * @param weight relative frequency, at least 1
 * @param name label used in statistics
 * @param generator builds one action from the sequence's random source
 */
public record Weighted<S>(int weight, String name, Function<Random, Action<S>> generator) {
    public Weighted {
        if (weight < 1) {
            throw new IllegalArgumentException("weight must be at least 1: " + weight);
        }
    }

    /** Shorthand constructor. */
    public static <S> Weighted<S> of(int weight, String name, Function<Random, Action<S>> generator) {
        return new Weighted<>(weight, name, generator);
    }
}
