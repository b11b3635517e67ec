package dev.synapsehub.mesh;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Side-by-side forks get disjoint port slices that together cover 20000..32000. */
class LoopbackPortsTest {
    @Test
    void forksGetDisjointSlicesAndAnUnsetOrOddForkGetsTheWholeRange() {
        assertThat(LoopbackPorts.slice("1", "2")).containsExactly(20_000, 26_000);
        assertThat(LoopbackPorts.slice("2", "2")).containsExactly(26_000, 32_000);
        assertThat(LoopbackPorts.slice("1", "1")).containsExactly(20_000, 32_000);
        assertThat(LoopbackPorts.slice(null, null)).containsExactly(20_000, 32_000);
        assertThat(LoopbackPorts.slice("${surefire.forkNumber}", "2")).containsExactly(20_000, 32_000);
        assertThat(LoopbackPorts.slice("3", "2")).containsExactly(20_000, 32_000);
    }

    @Test
    void candidatesInARowAreDistinctAndInTheSlice() {
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        for (int i = 0; i < 1_000; i++) {
            int port = LoopbackPorts.candidate();
            assertThat(port).isBetween(LoopbackPorts.LOW, LoopbackPorts.HIGH - 1);
            assertThat(seen.add(port)).as("port %d handed out twice", port).isTrue();
        }
    }
}
