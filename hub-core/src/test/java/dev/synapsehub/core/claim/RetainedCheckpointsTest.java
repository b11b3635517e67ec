package dev.synapsehub.core.claim;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Retained checkpoints are bounded by count and by their characters together, the oldest dropped first. */
class RetainedCheckpointsTest {
    private static List<String> tasks(RetainedCheckpoints store) {
        List<String> out = new ArrayList<>();
        store.forEach((task, checkpoint) -> out.add(task));
        return out;
    }

    @Test
    void theOldestGoWhenTheCharactersTogetherPassTheBound() {
        RetainedCheckpoints store = new RetainedCheckpoints(100, 10);
        store.retain("a", "aaaa");
        store.retain("b", "bbbb");
        assertThat(store.chars()).isEqualTo(8);
        store.retain("c", "cccc");
        assertThat(tasks(store)).containsExactly("b", "c");
        assertThat(store.get("a")).isNull();
        assertThat(store.chars()).isEqualTo(8);

        store.retain("d", "dddddddddd"); // ten characters: everything older makes room
        assertThat(tasks(store)).containsExactly("d");
        assertThat(store.chars()).isEqualTo(10);
        store.retain("e", "eleven char"); // larger than the bound alone: kept by nothing
        assertThat(tasks(store)).isEmpty();
        assertThat(store.chars()).isZero();
    }

    @Test
    void dropAndReinstateKeepTheCountOfCharactersExact() {
        RetainedCheckpoints store = new RetainedCheckpoints(100, 10);
        store.retain("a", "aaa");
        store.retain("b", "bbb");
        RetainedCheckpoints.Slot b = store.drop("b");
        assertThat(store.chars()).isEqualTo(3);
        store.retain("c", "cccc");
        store.reinstate("b", b); // back in its place: a, b, c hold 10
        assertThat(tasks(store)).containsExactly("a", "b", "c");
        assertThat(store.chars()).isEqualTo(10);
        store.retain("a", "aaaaa"); // new text for a task present: its place, its new length
        assertThat(tasks(store)).containsExactly("b", "c");
        assertThat(store.chars()).isEqualTo(7);
    }

    @Test
    void theCountBoundStillHolds() {
        RetainedCheckpoints store = new RetainedCheckpoints(2);
        store.retain("a", "x");
        store.retain("b", "y");
        store.retain("c", "z");
        assertThat(tasks(store)).containsExactly("b", "c");
        assertThat(RetainedCheckpoints.MAX_CHARS).isEqualTo(64L * 1024 * 1024);
    }
}
