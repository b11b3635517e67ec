package dev.synapsehub.spec.runner;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A small stateful property runner for JUnit 5 (no PBT library).
 *
 * <p>For each of {@code sequences} sequences it derives a seed, generates {@code steps}
 * actions from the weighted generators with {@code new Random(seed)}, runs them one by one
 * against a fresh system, runs the invariant check after every step and the final check
 * after the last. On the first failure it shrinks the failing sequence (drop halves, then
 * ever smaller chunks, down to single actions; then replace actions by their
 * {@linkplain Action#simplifications() simplifications}), re-running every candidate from a
 * fresh system, until nothing smaller still fails with the same {@linkplain KeyedFailure key}.
 *
 * <p>System properties: {@code spec.sequences}, {@code spec.steps} override the counts;
 * {@code spec.seed} replays exactly one sequence (the seed printed by a failure);
 * {@code spec.baseSeed} fixes the seed from which the per-sequence seeds are derived
 * (default: random, printed in the failure); {@code spec.maxShrinkRuns} bounds shrinking.
 *
 * @param <S> the system under test (typically a harness of real system + model)
 */
public final class StatefulRunner<S> {

    /** Property names, shared with the docs and the nightly profile. */
    public static final String SEQUENCES = "spec.sequences";
    public static final String STEPS = "spec.steps";
    public static final String SEED = "spec.seed";
    public static final String BASE_SEED = "spec.baseSeed";
    public static final String MAX_SHRINK_RUNS = "spec.maxShrinkRuns";

    private final String name;
    private final Supplier<S> factory;
    private final List<Weighted<S>> generators;
    private final Consumer<S> invariants;
    private final Consumer<S> finalCheck;
    private final int sequences;
    private final int steps;
    private final Long replaySeed;
    private final long baseSeed;
    private final int maxShrinkRuns;

    private StatefulRunner(Builder<S> b) {
        this.name = b.name;
        this.factory = Objects.requireNonNull(b.factory, "system factory");
        this.generators = List.copyOf(b.generators);
        if (generators.isEmpty()) {
            throw new IllegalArgumentException("at least one action generator is required");
        }
        this.invariants = b.invariants;
        this.finalCheck = b.finalCheck;
        boolean props = b.readSystemProperties;
        this.sequences = props ? Integer.getInteger(SEQUENCES, b.sequences) : b.sequences;
        this.steps = props ? Integer.getInteger(STEPS, b.steps) : b.steps;
        String seed = props ? System.getProperty(SEED) : null;
        this.replaySeed = seed == null || seed.isBlank() ? b.replaySeed : Long.valueOf(seed.strip());
        String base = props ? System.getProperty(BASE_SEED) : null;
        this.baseSeed = base == null || base.isBlank()
                ? (b.baseSeed != null ? b.baseSeed : new SplittableRandom().nextLong())
                : Long.parseLong(base.strip());
        this.maxShrinkRuns = props ? Integer.getInteger(MAX_SHRINK_RUNS, b.maxShrinkRuns) : b.maxShrinkRuns;
    }

    /** Starts a runner description. */
    public static <S> Builder<S> named(String name) {
        return new Builder<>(name);
    }

    /** Sequences this run will try (1 when replaying a seed). */
    public int sequences() {
        return replaySeed != null ? 1 : sequences;
    }

    /** Steps per sequence. */
    public int steps() {
        return steps;
    }

    /** Runs every sequence; throws an {@link AssertionError} describing the shrunk failure. */
    public void assertHolds() {
        Optional<Failure<S>> failure = run();
        if (failure.isPresent()) {
            throw new AssertionError(failure.get().report(), failure.get().cause());
        }
    }

    /** Runs every sequence and returns the first failure, shrunk; empty when all hold. */
    public Optional<Failure<S>> run() {
        SplittableRandom seeds = new SplittableRandom(baseSeed);
        int count = sequences();
        for (int i = 0; i < count; i++) {
            long seed = replaySeed != null ? replaySeed : seeds.nextLong();
            List<Action<S>> actions = generate(seed);
            Outcome outcome = execute(actions);
            if (outcome.failed()) {
                return Optional.of(shrink(i, seed, actions, outcome));
            }
        }
        return Optional.empty();
    }

    /** The actions a seed generates (deterministic for a given generator list and step count). */
    public List<Action<S>> generate(long seed) {
        Random random = new Random(seed);
        int total = 0;
        for (Weighted<S> w : generators) {
            total += w.weight();
        }
        List<Action<S>> actions = new ArrayList<>(steps);
        for (int i = 0; i < steps; i++) {
            int pick = random.nextInt(total);
            for (Weighted<S> w : generators) {
                pick -= w.weight();
                if (pick < 0) {
                    actions.add(w.generator().apply(random));
                    break;
                }
            }
        }
        return actions;
    }

    /** Result of running one sequence. {@code failedAt} is the failing step, or size for the final check. */
    private record Outcome(int failedAt, Throwable cause) {
        boolean failed() {
            return cause != null;
        }
    }

    private Outcome execute(List<Action<S>> actions) {
        S system = factory.get();
        for (int i = 0; i < actions.size(); i++) {
            try {
                actions.get(i).run(system);
                if (invariants != null) {
                    invariants.accept(system);
                }
            } catch (Throwable t) {
                rethrowIfFatal(t);
                return new Outcome(i, t);
            }
        }
        try {
            if (finalCheck != null) {
                finalCheck.accept(system);
            }
        } catch (Throwable t) {
            rethrowIfFatal(t);
            return new Outcome(actions.size(), t);
        }
        return new Outcome(-1, null);
    }

    private static void rethrowIfFatal(Throwable t) {
        if (t instanceof VirtualMachineError e) {
            throw e;
        }
    }

    static String keyOf(Throwable t) {
        if (t instanceof KeyedFailure k) {
            return k.failureKey();
        }
        return t.getClass().getName();
    }

    private Failure<S> shrink(int sequenceIndex, long seed, List<Action<S>> original, Outcome first) {
        String key = keyOf(first.cause());
        List<Action<S>> current = truncate(original, first);
        Throwable cause = first.cause();
        int runs = 0;
        boolean changed = true;
        while (changed && runs < maxShrinkRuns) {
            changed = false;
            // 1. Drop chunks: halves first, then ever smaller, down to single actions.
            for (int size = Math.max(1, current.size() / 2); size >= 1 && runs < maxShrinkRuns; size /= 2) {
                int start = 0;
                while (start + size <= current.size() && runs < maxShrinkRuns) {
                    List<Action<S>> candidate = new ArrayList<>(current.subList(0, start));
                    candidate.addAll(current.subList(start + size, current.size()));
                    Outcome o = execute(candidate);
                    runs++;
                    if (o.failed() && keyOf(o.cause()).equals(key)) {
                        current = truncate(candidate, o);
                        cause = o.cause();
                        changed = true;
                    } else {
                        start += size;
                    }
                }
                if (size == 1) {
                    break;
                }
            }
            // 2. Simplify single actions in place.
            for (int i = 0; i < current.size() && runs < maxShrinkRuns; i++) {
                for (Action<S> simpler : current.get(i).simplifications()) {
                    List<Action<S>> candidate = new ArrayList<>(current);
                    candidate.set(i, simpler);
                    Outcome o = execute(candidate);
                    runs++;
                    if (o.failed() && keyOf(o.cause()).equals(key)) {
                        current = truncate(candidate, o);
                        cause = o.cause();
                        changed = true;
                        break;
                    }
                    if (runs >= maxShrinkRuns) {
                        break;
                    }
                }
            }
        }
        return new Failure<>(name, sequenceIndex, seed, baseSeed, steps, original.size(),
                List.copyOf(current), cause, key, runs);
    }

    private static <A> List<A> truncate(List<A> actions, Outcome outcome) {
        int end = Math.min(actions.size(), outcome.failedAt() + 1);
        return new ArrayList<>(actions.subList(0, end));
    }

    /**
     * A shrunk counterexample.
     *
     * @param sequenceIndex which sequence of the run failed
     * @param seed the sequence's seed: {@code -Dspec.seed=<seed>} replays it
     * @param minimal the shrunk failing sequence
     * @param key the failure key both the original and the shrunk sequence failed with
     */
    public record Failure<S>(String property, int sequenceIndex, long seed, long baseSeed, int steps,
                             int originalLength, List<Action<S>> minimal, Throwable cause, String key,
                             int shrinkRuns) {

        /** The multi-line failure report: seed, replay command and the minimal sequence. */
        public String report() {
            StringBuilder sb = new StringBuilder();
            sb.append("Property '").append(property).append("' failed [").append(key).append("]\n")
                    .append("  sequence #").append(sequenceIndex).append(", seed ").append(seed)
                    .append(" (base seed ").append(baseSeed).append(")\n")
                    .append("  replay: ./mvnw -B -pl spec-tests -am verify -Dspec.seed=").append(seed)
                    .append(" -Dspec.steps=").append(steps).append('\n')
                    .append("  shrunk from ").append(originalLength).append(" to ").append(minimal.size())
                    .append(" steps in ").append(shrinkRuns).append(" runs:\n");
            for (int i = 0; i < minimal.size(); i++) {
                sb.append(String.format("  %3d. %s%n", i + 1, minimal.get(i)));
            }
            sb.append("  cause: ").append(cause);
            return sb.toString();
        }
    }

    /** Fluent description of a property. */
    public static final class Builder<S> {
        private final String name;
        private Supplier<S> factory;
        private final List<Weighted<S>> generators = new ArrayList<>();
        private Consumer<S> invariants;
        private Consumer<S> finalCheck;
        private int sequences = 200;
        private int steps = 50;
        private Long replaySeed;
        private Long baseSeed;
        private int maxShrinkRuns = 5000;
        private boolean readSystemProperties = true;

        private Builder(String name) {
            this.name = name;
        }

        /** A fresh system for every run, including every shrink attempt. */
        public Builder<S> system(Supplier<S> factory) {
            this.factory = factory;
            return this;
        }

        /** Adds a weighted action generator. */
        public Builder<S> action(Weighted<S> generator) {
            generators.add(generator);
            return this;
        }

        /** Checked after every step. */
        public Builder<S> invariants(Consumer<S> check) {
            this.invariants = check;
            return this;
        }

        /** Checked once after the last step of each sequence. */
        public Builder<S> finalCheck(Consumer<S> check) {
            this.finalCheck = check;
            return this;
        }

        /** Default sequence count (overridden by {@code -Dspec.sequences}). */
        public Builder<S> sequences(int n) {
            this.sequences = n;
            return this;
        }

        /** Default steps per sequence (overridden by {@code -Dspec.steps}). */
        public Builder<S> steps(int n) {
            this.steps = n;
            return this;
        }

        /** Replays one sequence seed (overridden by {@code -Dspec.seed}). */
        public Builder<S> seed(long seed) {
            this.replaySeed = seed;
            return this;
        }

        /** Fixes the base seed (overridden by {@code -Dspec.baseSeed}). */
        public Builder<S> baseSeed(long seed) {
            this.baseSeed = seed;
            return this;
        }

        /** Upper bound on shrink re-runs (overridden by {@code -Dspec.maxShrinkRuns}). */
        public Builder<S> maxShrinkRuns(int n) {
            this.maxShrinkRuns = n;
            return this;
        }

        /** Ignores the {@code spec.*} system properties (for the runner's own self-tests). */
        public Builder<S> ignoringSystemProperties() {
            this.readSystemProperties = false;
            return this;
        }

        public StatefulRunner<S> build() {
            return new StatefulRunner<>(this);
        }
    }
}
