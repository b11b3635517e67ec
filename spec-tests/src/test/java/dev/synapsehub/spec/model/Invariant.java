package dev.synapsehub.spec.model;

import dev.synapsehub.spec.runner.KeyedFailure;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The one assertion helper of the coordination model: every check names the spec invariant
 * it enforces. The drift guard parses the model's source for {@code Invariant.check("INV-..."}
 * calls, so an id in {@link CoordinationModelTest#MODEL_INVARIANTS} must really be asserted.
 */
public final class Invariant {

    private static final Set<String> EXERCISED = ConcurrentHashMap.newKeySet();

    private Invariant() {
    }

    /** Fails with a {@link Violation} naming {@code id} when {@code condition} is false. */
    public static void check(String id, boolean condition, Supplier<String> detail) {
        EXERCISED.add(id);
        if (!condition) {
            throw new Violation(id, detail.get());
        }
    }

    /** Every id checked at least once in this JVM (pass or fail). */
    public static Set<String> exercised() {
        return new TreeSet<>(EXERCISED);
    }

    /** A broken invariant; its failure key is the invariant id, so shrinking stays on it. */
    public static final class Violation extends AssertionError implements KeyedFailure {
        private final String id;

        Violation(String id, String detail) {
            super(id + " violated: " + detail);
            this.id = id;
        }

        /** The invariant id, e.g. {@code INV-ME-1}. */
        public String id() {
            return id;
        }

        @Override
        public String failureKey() {
            return id;
        }
    }
}
