package dev.synapsehub.journal;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code SnapshotBytes.In.shared}: the same strings as {@code text}, equal short ASCII ones as one instance. */
class SharedStringsTest {

    @Test
    void sharedReadsWhatTextReadsAndRepeatsComeBackAsOneInstance() throws Exception {
        List<String> written = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            written.add("agent-" + (i % 7));         // repeated: shared
            written.add("src/module-" + i);          // distinct: slots collide and are replaced
            written.add("wt-\u00e9t\u00e9-" + (i % 3)); // not ASCII: read as text reads it
            written.add("x".repeat(65 + i % 2));     // longer than the shared limit
            written.add("");
        }
        SnapshotBytes.Out out = new SnapshotBytes.Out();
        for (String s : written) {
            out.str(s);
        }
        byte[] body = out.toByteArray();
        SnapshotBytes.In plain = new SnapshotBytes.In(body);
        SnapshotBytes.In shared = new SnapshotBytes.In(body);
        List<String> sharedRead = new ArrayList<>();
        for (String s : written) {
            assertThat(plain.text("s")).isEqualTo(s);
            String got = shared.shared("s");
            assertThat(got).isEqualTo(s);
            sharedRead.add(got);
        }
        assertThat(shared.position()).isEqualTo(plain.position()).isEqualTo(body.length);
        assertThat(sharedRead.get(0 + 5 * 7)).as("a repeat of agent-0").isSameAs(sharedRead.get(0));
        assertThat(sharedRead.get(1)).isNotSameAs(written.get(1));
    }

    @Test
    void aMissingOrOverlongStringIsRefusedAsTextRefusesIt() {
        SnapshotBytes.Out out = new SnapshotBytes.Out();
        out.str(null);
        byte[] missing = out.toByteArray();
        assertThatThrownBy(() -> new SnapshotBytes.In(missing).shared("owner"))
                .isInstanceOf(CorruptSnapshotException.class).hasMessageContaining("owner is missing");
        SnapshotBytes.Out longer = new SnapshotBytes.Out();
        longer.str("agent-1");
        byte[] cut = java.util.Arrays.copyOf(longer.toByteArray(), 4);
        assertThatThrownBy(() -> new SnapshotBytes.In(cut).shared("owner"))
                .isInstanceOf(CorruptSnapshotException.class).hasMessageContaining("exceeds the body");
    }
}
