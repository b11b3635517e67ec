package dev.synapsehub.federation.follow;

import dev.synapsehub.federation.link.ReplyDecoder;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A follower reads the task ids and owners its pages repeat as the same strings page after page (so
 * the fold's map finds them by identity and a kept hash), and every text it reads is exactly the
 * bytes of the page, whatever the table held in that slot (colliding hashes, a small table).
 */
class RepeatedTextsTest {

    private static byte[] page(long first, String... tasks) {
        StringBuilder s = new StringBuilder("{\"type\":\"multihub_log_snapshot\",\"events\":[");
        for (int k = 0; k < tasks.length; k++) {
            s.append(k > 0 ? "," : "").append("{\"seq\":").append(first + k).append(",\"ts\":1.5,\"kind\":\"claim\",")
                    .append("\"payload\":{\"task_id\":\"").append(tasks[k]).append("\",\"owner\":\"proj/agent-").append(k % 3)
                    .append("\",\"epoch\":").append(first + k).append(",\"lease_expires_at\":99.5,\"status\":\"claimed\"}}");
        }
        return s.append("],\"next_cursor\":").append(first + tasks.length - 1).append(",\"log_end_seq\":99}")
                .toString().getBytes(StandardCharsets.UTF_8);
    }

    private static LogPage decode(ReplyDecoder<LogPage> decoder, byte[] frame) throws Exception {
        byte[] scratch = Arrays.copyOf(frame, frame.length + 16); // the link's reused buffer
        LogPage page = decoder.decode(scratch, frame.length);
        Arrays.fill(scratch, (byte) 'x');
        return page;
    }

    @Test
    void aFollowersRepeatedTaskIdsAndOwnersAreTheSameStringsPageAfterPage() throws Exception {
        ReplyDecoder<LogPage> decoder = LogPage.decoder(RepeatedTexts.forFollower());
        LogPage one = decode(decoder, page(1, "task-1", "task-2", "t\u00e2che-3", "Aa", "BB"));
        LogPage two = decode(decoder, page(6, "task-1", "task-2", "t\u00e2che-3", "Aa", "BB"));
        for (int k = 0; k < 5; k++) {
            LogPage.Event a = one.events().get(k);
            LogPage.Event b = two.events().get(k);
            assertThat(b.taskId).isEqualTo(a.taskId);
            assertThat(b.owner).isEqualTo(a.owner).isSameAs(a.owner);
            if (k < 2) { // not "tâche-3" (non-ASCII: decoded anew, as before), nor "Aa" and "BB" (one slot)
                assertThat(b.taskId).as("task %s", a.taskId).isSameAs(a.taskId);
            }
        }
        assertThat(two.events().get(3).taskId).isEqualTo("Aa"); // "Aa" and "BB" share a hash
        assertThat(two.events().get(4).taskId).isEqualTo("BB");
        assertThat(two.events().get(2).taskId).isEqualTo("t\u00e2che-3");
    }

    @Test
    void everyTextIsTheBytesAskedForWhateverTheSlotHeld() {
        SplittableRandom r = new SplittableRandom(5L);
        List<String> pool = new ArrayList<>(List.of("", "Aa", "BB", "AaAa", "BBBB", "AaBB", "BBAa", "task-1", "task-10"));
        for (int k = 0; k < 300; k++) {
            StringBuilder s = new StringBuilder();
            for (int m = r.nextInt(20); m > 0; m--) {
                s.append((char) r.nextInt(0x80));
            }
            pool.add(s.toString());
        }
        for (int slots : new int[] {1, 2, 16, 1 << 14}) {
            RepeatedTexts texts = new RepeatedTexts(slots);
            for (int k = 0; k < 50_000; k++) {
                String want = pool.get(r.nextInt(pool.size()));
                byte[] around = ("\"x" + want + "y\"").getBytes(StandardCharsets.ISO_8859_1);
                String got = texts.ascii(around, 2, 2 + want.length());
                assertThat(got).isEqualTo(want);
            }
        }
    }

    @Test
    void aTableIsAPowerOfTwo() {
        assertThatThrownBy(() -> new RepeatedTexts(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RepeatedTexts(12)).isInstanceOf(IllegalArgumentException.class);
    }
}
