package dev.synapsehub.spec.runner;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The runner finds, shrinks and reports failures of a deliberately broken toy system. */
class StatefulRunnerTest {

    /** A counter that is "broken": it must never reach 3, but nothing stops it. */
    static final class Counter {
        int value;
        final List<String> log = new ArrayList<>();
    }

    record Inc() implements Action<Counter> {
        @Override
        public void run(Counter c) {
            c.value++;
        }

        @Override
        public String toString() {
            return "inc";
        }
    }

    record Noise(int k) implements Action<Counter> {
        @Override
        public void run(Counter c) {
            c.log.add("noise " + k);
        }

        @Override
        public String toString() {
            return "noise(" + k + ")";
        }
    }

    record Reset() implements Action<Counter> {
        @Override
        public void run(Counter c) {
            c.value = 0;
        }

        @Override
        public String toString() {
            return "reset";
        }
    }

    /** Adds n; simplifies towards smaller n. */
    record Add(int n) implements Action<Counter> {
        @Override
        public void run(Counter c) {
            c.value += n;
        }

        @Override
        public List<Action<Counter>> simplifications() {
            List<Action<Counter>> out = new ArrayList<>();
            if (n > 1) {
                out.add(new Add(n / 2));
                out.add(new Add(n - 1));
            }
            return out;
        }

        @Override
        public String toString() {
            return "add(" + n + ")";
        }
    }

    static final class TooBig extends AssertionError implements KeyedFailure {
        TooBig(int v) {
            super("counter reached " + v);
        }

        @Override
        public String failureKey() {
            return "TOO-BIG";
        }
    }

    private static void neverThree(Counter c) {
        if (c.value >= 3) {
            throw new TooBig(c.value);
        }
    }

    private static StatefulRunner.Builder<Counter> toy(long baseSeed) {
        return StatefulRunner.<Counter>named("toy counter")
                .system(Counter::new)
                .action(Weighted.of(1, "inc", r -> new Inc()))
                .action(Weighted.of(6, "noise", r -> new Noise(r.nextInt(100))))
                .action(Weighted.of(1, "reset", r -> new Reset()))
                .invariants(StatefulRunnerTest::neverThree)
                .sequences(50)
                .steps(200)
                .baseSeed(baseSeed)
                .ignoringSystemProperties();
    }

    @Test
    void brokenCounterShrinksToThreeIncrements() {
        Optional<StatefulRunner.Failure<Counter>> failure = toy(42L).build().run();

        assertThat(failure).isPresent();
        StatefulRunner.Failure<Counter> f = failure.get();
        assertThat(f.originalLength()).isGreaterThan(3);
        assertThat(f.minimal()).hasSize(3);
        assertThat(f.minimal()).allMatch(a -> a instanceof Inc);
        assertThat(f.key()).isEqualTo("TOO-BIG");
        assertThat(f.report())
                .contains("seed " + f.seed())
                .contains("-Dspec.seed=" + f.seed())
                .contains("1. inc").contains("3. inc")
                .doesNotContain("noise");
    }

    @Test
    void shrinkingSimplifiesParameters() {
        Optional<StatefulRunner.Failure<Counter>> failure = StatefulRunner.<Counter>named("toy adder")
                .system(Counter::new)
                .action(Weighted.of(1, "add", r -> new Add(1 + r.nextInt(50))))
                .action(Weighted.of(5, "noise", r -> new Noise(r.nextInt(100))))
                .invariants(StatefulRunnerTest::neverThree)
                .sequences(10).steps(40).baseSeed(7L).ignoringSystemProperties()
                .build().run();

        assertThat(failure).isPresent();
        assertThat(failure.get().minimal()).hasSize(1);
        assertThat(failure.get().minimal().get(0)).isEqualTo(new Add(3));
    }

    @Test
    void replayingTheReportedSeedReproducesTheSameFailure() {
        StatefulRunner.Failure<Counter> first = toy(99L).build().run().orElseThrow();
        StatefulRunner.Failure<Counter> replay = toy(12345L).seed(first.seed()).build().run().orElseThrow();

        assertThat(replay.seed()).isEqualTo(first.seed());
        assertThat(replay.sequenceIndex()).isZero();
        assertThat(str(replay.minimal())).isEqualTo(str(first.minimal()));
    }

    @Test
    void sameSeedGeneratesTheSameSequence() {
        StatefulRunner<Counter> runner = toy(1L).build();
        assertThat(str(runner.generate(5L))).isEqualTo(str(runner.generate(5L)));
        assertThat(str(runner.generate(5L))).isNotEqualTo(str(runner.generate(6L)));
    }

    @Test
    void aHoldingPropertyPassesAndAssertHoldsThrowsTheReport() {
        StatefulRunner.<Counter>named("noise only").system(Counter::new)
                .action(Weighted.of(1, "noise", r -> new Noise(r.nextInt(3))))
                .invariants(StatefulRunnerTest::neverThree)
                .sequences(5).steps(20).ignoringSystemProperties()
                .build().assertHolds();

        assertThatThrownBy(() -> toy(3L).build().assertHolds())
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Property 'toy counter' failed [TOO-BIG]")
                .hasMessageContaining("shrunk from")
                .hasCauseInstanceOf(TooBig.class);
    }

    @Test
    void aFinalCheckFailureIsShrunkToo() {
        StatefulRunner.Failure<Counter> f = StatefulRunner.<Counter>named("final")
                .system(Counter::new)
                .action(Weighted.of(1, "inc", r -> new Inc()))
                .action(Weighted.of(3, "noise", r -> new Noise(r.nextInt(9))))
                .finalCheck(c -> {
                    if (c.value >= 2) {
                        throw new AssertionError("two at the end");
                    }
                })
                .sequences(20).steps(30).baseSeed(11L).ignoringSystemProperties()
                .build().run().orElseThrow();
        assertThat(str(f.minimal())).isEqualTo("inc,inc");
    }

    private static String str(List<? extends Action<Counter>> actions) {
        return actions.stream().map(Object::toString).collect(Collectors.joining(","));
    }
}
