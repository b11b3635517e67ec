package dev.synapsehub.federation.follow;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A page read from the link's reused buffer: once the buffer holds the next frame, the page
 * still has every checked field and the fingerprints of its first and last event (the overlap
 * and the new cursor), the same as a page read from its own copy.
 */
class DetachedLogPageTest {
    private static final String FRAME = "{\"type\":\"multihub_log_snapshot\",\"events\":["
            + "{\"seq\":4,\"ts\":1.5,\"kind\":\"claim\",\"payload\":{\"task_id\":\"T-1\",\"owner\":\"proj/a\",\"epoch\":3,"
            + "\"lease_expires_at\":99.5,\"status\":\"claimed\",\"note\":\"é\"}},"
            + "{\"seq\":5,\"ts\":2,\"kind\":\"chat\",\"payload\":{\"text\":\"hi\"}},"
            + "{\"seq\":6,\"ts\":3.25,\"kind\":\"release\",\"payload\":{\"task_id\":\"T-1\"}}],"
            + "\"next_cursor\":6,\"log_end_seq\":9}";

    @Test
    void theFirstAndLastEventKeepTheirFingerprintsWhenTheBufferIsReused() throws Exception {
        byte[] frame = FRAME.getBytes(StandardCharsets.UTF_8);
        LogPage owned = LogPage.parse(frame);
        byte[] scratch = Arrays.copyOf(frame, frame.length + 100);
        Arrays.fill(scratch, frame.length, scratch.length, (byte) '}'); // beyond length: never read
        LogPage detached = (LogPage) LogPage.DECODER.decode(scratch, frame.length);
        Arrays.fill(scratch, (byte) 'x'); // the link copies the next frame over it

        assertThat(LogPage.DECODER.type(detached)).isEqualTo("multihub_log_snapshot");
        assertThat(detached.logEndKnown()).isTrue();
        assertThat(detached.logEnd()).isEqualTo(9);
        List<LogPage.Event> events = detached.events();
        assertThat(events).hasSize(3);
        assertThat(events.get(0).seq).isEqualTo(4);
        assertThat(events.get(0).owner).isEqualTo("proj/a");
        assertThat(events.get(2).kind).isEqualTo("release");
        assertThat(detached.fingerprint(events.get(0))).isEqualTo(owned.fingerprint(owned.events().get(0)));
        assertThat(detached.fingerprint(events.get(2))).isEqualTo(owned.fingerprint(owned.events().get(2)));
        assertThatThrownBy(() -> detached.fingerprint(events.get(1))).isInstanceOf(IllegalStateException.class);
    }
}
