package dev.synapsehub.mesh;

import dev.synapsehub.mesh.History.Kind;
import dev.synapsehub.mesh.History.Op;
import dev.synapsehub.mesh.History.Result;
import dev.synapsehub.mesh.History.Scope;
import dev.synapsehub.mesh.HistoryChecker.LogEvent;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The checker itself: it finds each broken rule in a fabricated history, and accepts a valid one. */
class HistoryCheckerTest {
    static final Scope A = new Scope("w", List.of("src/a"));
    static final Scope AB = new Scope("w", List.of("src/a/b"));
    static final Scope C = new Scope("w", List.of("src/c"));

    static Op claim(String client, String task, Scope scope, long inv, long ret, Result r, long epoch) {
        return new Op(client, "n1", Kind.CLAIM, task, scope, inv, null, null, inv, ret, r, epoch, client);
    }

    static Op release(String client, String task, long epoch, long inv, long ret, Result r) {
        return new Op(client, "n1", Kind.RELEASE, task, null, inv, epoch, null, inv, ret, r, 0, client);
    }

    static Op handoff(String client, String task, Scope scope, long epochArg, String to, long inv, long ret,
                      long epoch) {
        return handoff(client, task, scope, epochArg, to, inv, inv, ret, Result.GRANTED, epoch);
    }

    /** A handoff attempt: {@code requested} is the request's first send, {@code inv} this attempt's. */
    static Op handoff(String client, String task, Scope scope, long epochArg, String to, long requested, long inv,
                      long ret, Result r, long epoch) {
        return new Op(client, "n1", Kind.HANDOFF, task, scope, requested, epochArg, to, inv, ret, r, epoch,
                r == Result.GRANTED ? to : null);
    }

    @Test
    void aValidHistoryWithUnknownOutcomesPasses() {
        List<Op> ops = List.of(
                claim("ann", "T1", A, 0, 10, Result.GRANTED, 1),
                claim("bob", "T1", A, 5, 12, Result.DENIED, 0),
                claim("bob", "T2", C, 6, 14, Result.GRANTED, 2),
                release("ann", "T1", 1, 20, 30, Result.UNKNOWN),
                claim("bob", "T1", A, 25, 40, Result.GRANTED, 3), // may follow ann's unknown release
                handoff("bob", "T1", A, 3, "cat", 50, 60, 4),
                release("cat", "T1", 4, 70, 80, Result.GRANTED));
        assertThat(HistoryChecker.violations(ops)).isEmpty();
        List<LogEvent> log = List.of(new LogEvent("claim", "T1", "ann", 1), new LogEvent("claim", "T2", "bob", 2),
                new LogEvent("release", "T1", "", 0), new LogEvent("claim", "T1", "bob", 3),
                new LogEvent("handoff", "T1", "cat", 4), new LogEvent("release", "T1", "", 0));
        assertThat(HistoryChecker.lost(ops, log)).isEmpty();
    }

    /**
     * A fresh-clone CI run's false alarm, times as recorded: the giver's first handoff attempt went
     * unanswered but committed; the recipient renewed and released the task before the giver's
     * retry replayed the stored handoff reply; only then was the overlapping W handed on. Judged
     * from the retry's own send, the recipient's handoff epoch looked held while W was.
     */
    @Test
    void aRetriedHandoffCountsFromItsFirstSend() {
        Scope w = new Scope("w", List.of());
        List<Op> ops = List.of(
                handoff("agent0", "A", A, 72, "agent1", 1423, 1423, 1485, Result.UNKNOWN, 0),
                claim("agent1", "A", A, 1460, 2285, Result.GRANTED, 77), // a renewal: the handoff had committed
                handoff("agent0", "A", A, 72, "agent1", 1423, 1510, 2336, Result.GRANTED, 76),
                release("agent1", "A", 77, 2285, 2300, Result.GRANTED),
                handoff("agent4", "W", w, 78, "agent5", 2314, 2314, 2344, Result.GRANTED, 81),
                release("agent1", "A", 76, 2354, 2373, Result.DENIED),
                release("agent5", "W", 81, 2355, 2373, Result.GRANTED));
        assertThat(HistoryChecker.violations(ops)).isEmpty();

        // the same, with the retry sent after the renewal's reply: its older epoch is no step back
        List<Op> late = List.of(
                handoff("agent0", "A", A, 72, "agent1", 1423, 1423, 1485, Result.UNKNOWN, 0),
                claim("agent1", "A", A, 1460, 2285, Result.GRANTED, 77),
                handoff("agent0", "A", A, 72, "agent1", 1423, 2290, 2336, Result.GRANTED, 76),
                release("agent1", "A", 77, 2337, 2350, Result.GRANTED));
        assertThat(HistoryChecker.violations(late)).isEmpty();

        // but a recipient's window still holds when nothing of its own came between
        List<Op> held = List.of(
                handoff("agent0", "A", A, 72, "agent1", 1423, 1423, 1485, Result.UNKNOWN, 0),
                handoff("agent0", "A", A, 72, "agent1", 1423, 1510, 2336, Result.GRANTED, 76),
                handoff("agent4", "W", w, 78, "agent5", 2314, 2314, 2344, Result.GRANTED, 81),
                release("agent1", "A", 76, 2354, 2373, Result.GRANTED));
        assertThat(HistoryChecker.violations(held)).anyMatch(v -> v.startsWith("overlapping scopes"));
    }

    /**
     * A request sent before a grant can take effect after it: the recipient's own claim, first sent
     * before the handoff and retried after it, renewed the task, so the handed epoch ended there
     * (the release names the renewal's epoch, and C's later claim is no second owner).
     */
    @Test
    void aRequestSentBeforeAGrantCanEndItWhenItTakesEffectAfter() {
        List<Op> ops = List.of(
                claim("bob", "T", A, 1, 2, Result.GRANTED, 5),
                new Op("ann", "n1", Kind.CLAIM, "T", A, 10, null, null, 10, 100, Result.UNKNOWN, 0, null),
                handoff("bob", "T", A, 5, "ann", 50, 50, 60, Result.GRANTED, 6),
                new Op("ann", "n2", Kind.CLAIM, "T", A, 10, null, null, 110, 120, Result.GRANTED, 7, "ann"),
                release("ann", "T", 7, 130, 140, Result.GRANTED),
                claim("cat", "T", A, 150, 160, Result.GRANTED, 8),
                release("cat", "T", 8, 170, 180, Result.GRANTED));
        assertThat(HistoryChecker.violations(ops)).isEmpty();

        // had ann's claim been decided (denied) before the handoff, the handed epoch would still be held
        List<Op> denied = List.of(
                claim("bob", "T", A, 1, 2, Result.GRANTED, 5),
                claim("ann", "T", A, 10, 20, Result.DENIED, 0),
                handoff("bob", "T", A, 5, "ann", 50, 50, 60, Result.GRANTED, 6),
                claim("cat", "T", A, 150, 160, Result.GRANTED, 8));
        assertThat(HistoryChecker.violations(denied)).anyMatch(v -> v.startsWith("two owners of T"));
    }

    @Test
    void twoOwnersAtOnceAreFound() {
        List<Op> ops = List.of(claim("ann", "T1", A, 0, 10, Result.GRANTED, 1),
                claim("bob", "T1", A, 11, 15, Result.GRANTED, 2));
        assertThat(HistoryChecker.violations(ops)).anyMatch(v -> v.startsWith("two owners of T1"));
    }

    @Test
    void anEpochThatGoesBackIsFound() {
        List<Op> ops = List.of(claim("ann", "T1", A, 0, 10, Result.GRANTED, 5),
                release("ann", "T1", 5, 11, 12, Result.GRANTED),
                claim("bob", "T1", A, 20, 25, Result.GRANTED, 4));
        assertThat(HistoryChecker.violations(ops)).anyMatch(v -> v.startsWith("epoch went back on T1"));
    }

    @Test
    void overlappingScopesHeldAtOnceAreFound() {
        List<Op> ops = List.of(claim("ann", "T1", A, 0, 10, Result.GRANTED, 1),
                claim("bob", "T2", AB, 11, 15, Result.GRANTED, 2));
        assertThat(HistoryChecker.violations(ops)).anyMatch(v -> v.startsWith("overlapping scopes"));
        List<Op> disjoint = List.of(claim("ann", "T1", A, 0, 10, Result.GRANTED, 1),
                claim("bob", "T2", C, 11, 15, Result.GRANTED, 2));
        assertThat(HistoryChecker.violations(disjoint)).isEmpty();
    }

    @Test
    void anAcknowledgedGrantOrReleaseMissingFromTheLogIsFound() {
        List<Op> ops = List.of(claim("ann", "T1", A, 0, 10, Result.GRANTED, 1),
                release("ann", "T1", 1, 11, 12, Result.GRANTED));
        assertThat(HistoryChecker.lost(ops, List.of())).hasSize(2);
        assertThat(HistoryChecker.lost(ops, List.of(new LogEvent("claim", "T1", "ann", 1))))
                .containsExactly("acknowledged release of T1@1 by ann is not in the log");
    }
}
