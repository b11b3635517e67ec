package dev.synapsehub.core.undo;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The state's one undo log: newest first across recorders, end-of-batch actions after the steps. */
class UndoLogTest {
    private final UndoLog undo = new UndoLog();
    private final List<String> ran = new ArrayList<>();

    @Test
    void aRollbackRunsEveryStepNewestFirstWhicheverRegistryRecordedIt() {
        undo.begin();
        undo.record(() -> ran.add("claims 1"));
        undo.record(() -> ran.add("board 1"));
        undo.record(() -> ran.add("claims 2"));
        undo.record(() -> ran.add("ledger 1"));
        undo.rollback();
        assertThat(ran).containsExactly("ledger 1", "claims 2", "board 1", "claims 1");
        assertThat(undo.isOpen()).isFalse();
    }

    @Test
    void endOfBatchActionsRunAfterTheUndoStepsOnARollbackAndOnceOnACommit() {
        undo.begin();
        undo.record(() -> ran.add("step"));
        undo.atBatchEnd(() -> ran.add("publish A"));
        undo.atBatchEnd(() -> ran.add("publish B"));
        undo.rollback();
        assertThat(ran).containsExactly("step", "publish A", "publish B");

        ran.clear();
        undo.begin();
        undo.record(() -> ran.add("step"));
        undo.atBatchEnd(() -> ran.add("publish"));
        undo.commit();
        undo.rollback(); // nothing left: the commit forgot the steps and ran the action once
        assertThat(ran).containsExactly("publish");
    }

    @Test
    void aThrowingStepOrActionDoesNotStopTheOthersAndTheFirstFailureIsRethrown() {
        undo.begin();
        undo.record(() -> ran.add("claims 1"));
        undo.record(() -> {
            throw new IllegalStateException("board undo");
        });
        undo.record(() -> ran.add("ledger 1"));
        undo.atBatchEnd(() -> {
            throw new IllegalArgumentException("publish A");
        });
        undo.atBatchEnd(() -> ran.add("publish B"));
        assertThatThrownBy(undo::rollback)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("board undo")
                .satisfies(e -> assertThat(e.getSuppressed()).singleElement()
                        .satisfies(s -> assertThat(s).hasMessage("publish A")));
        assertThat(ran).containsExactly("ledger 1", "claims 1", "publish B");
        assertThat(undo.isOpen()).isFalse();

        ran.clear();
        undo.begin();
        undo.atBatchEnd(() -> {
            throw new IllegalStateException("pins publish");
        });
        undo.atBatchEnd(() -> ran.add("ledger publish"));
        assertThatThrownBy(undo::commit).hasMessage("pins publish");
        assertThat(ran).containsExactly("ledger publish");
        assertThat(undo.isOpen()).isFalse();
    }

    @Test
    void outsideABatchStepsAreDroppedAndEndActionsRunAtOnce() {
        undo.record(() -> ran.add("dropped"));
        undo.atBatchEnd(() -> ran.add("now"));
        assertThat(ran).containsExactly("now");
        undo.begin();
        undo.rollback();
        assertThat(ran).containsExactly("now");
    }

    @Test
    void aSuspendedBatchRecordsNothingAndComesBackExactlyAsItWas() {
        undo.begin();
        undo.record(() -> ran.add("kept"));
        UndoLog.Suspended held = undo.suspend();
        assertThat(held.wasOpen()).isTrue();
        assertThat(undo.isOpen()).isFalse();
        undo.record(() -> ran.add("while suspended"));
        undo.resume(held);
        assertThat(undo.size()).isEqualTo(1);
        undo.rollback();
        assertThat(ran).containsExactly("kept");
        assertThat(undo.suspend().wasOpen()).isFalse();
    }

    @Test
    void beginningAgainEndsAnUnfinishedBatchAsACommitWould() {
        undo.begin();
        undo.record(() -> ran.add("old"));
        undo.atBatchEnd(() -> ran.add("old end"));
        undo.begin();
        assertThat(ran).containsExactly("old end");
        undo.rollback();
        assertThat(ran).as("the old batch's steps are not undone").containsExactly("old end");
    }

    @Test
    void aRemovalUndoneInPlaceRestoresTheInsertionOrderWhateverCameAfterIt() {
        java.util.LinkedHashMap<String, Integer> map = new java.util.LinkedHashMap<>();
        for (String k : List.of("a", "b", "c", "d")) {
            map.put(k, k.charAt(0) - 'a');
        }
        undo.begin();
        assertThat(undo.removeInPlace(map, "b")).isEqualTo(1);
        assertThat(undo.removeInPlace(map, "zz")).isNull();
        map.put("e", 4);
        undo.record(() -> map.remove("e"));
        assertThat(undo.removeInPlace(map, "a")).isZero();
        undo.rollback();
        assertThat(map.keySet()).containsExactly("a", "b", "c", "d");
        assertThat(map).containsEntry("b", 1);

        assertThat(undo.removeInPlace(map, "c")).as("outside a batch: removed for good").isEqualTo(2);
        assertThat(map.keySet()).containsExactly("a", "b", "d");
    }
}
