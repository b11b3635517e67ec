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
}
