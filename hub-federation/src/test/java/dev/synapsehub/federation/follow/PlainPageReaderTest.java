package dev.synapsehub.federation.follow;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The follower reads the plain pages a hub writes without Jackson ({@link LogPage.PlainReader});
 * a page it reads must be one Jackson reads too, with every field the same, and it must give up
 * on every page Jackson refuses (a malformed page is still refused, by Jackson, as before).
 */
class PlainPageReaderTest {

    /** Everything the follower reads from a page, in one string. */
    private static String described(LogPage page) {
        StringBuilder s = new StringBuilder();
        s.append("type=").append(LogPage.DECODER.type(page)).append(" endKnown=").append(page.logEndKnown())
                .append(" end=").append(page.logEnd());
        if (page.events() == null) {
            return s.append(" events=null").toString();
        }
        for (LogPage.Event e : page.events()) {
            s.append("\n  [").append(e.start).append(',').append(e.end).append(") seq=").append(e.seqIntegral).append('/')
                    .append(e.seq).append(" ts=").append(e.tsNumber).append(" kind=").append(e.kind).append('/')
                    .append(e.kindClass).append(" payload=").append(e.payload).append(" task=").append(e.taskId)
                    .append(" owner=").append(e.owner).append(" lease=").append(e.lease).append('/').append(e.leaseFloat)
                    .append('/').append(e.leaseSeconds()).append(" epoch=").append(e.epoch).append(" status=")
                    .append(e.status);
        }
        return s.toString();
    }

    /** Jackson's reading, or "refused" when it throws. */
    private static String jackson(byte[] frame) {
        try {
            return described(LogPage.parseWithJackson(frame, frame.length));
        } catch (IOException e) {
            return "refused";
        }
    }

    /** The plain reader's reading, or null when it gives up. */
    private static String plain(byte[] frame) {
        LogPage page = LogPage.PlainReader.read(frame, frame.length);
        return page == null ? null : described(page);
    }

    /** A page as a hub writes it: compact, ASCII, the payload fields of a claim in their usual order. */
    private static String hubPage(Random r, long after, int count) {
        return hubPage(r, after, count, false);
    }

    /** Text with one to four-byte UTF-8 sequences, the edges of each length among them. */
    private static final String[] UNICODE = {
        "\u00e9", "caf\u00e9", "\u0080", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffef", "\ufffd", "\u4e2d\u6587",
        "\ud83d\ude00", "\ud800\udc00", "\udbff\udfff", "\u00a0", "\u2028", "\u0085", "a\u0301",
    };

    private static String unicode(Random r) {
        return UNICODE[r.nextInt(UNICODE.length)];
    }

    /**
     * A hub's page; with {@code unicode}, non-ASCII text (raw UTF-8) in kept fields (task, owner,
     * status, kind) and skipped ones (a note, a member name, nested values).
     */
    private static String hubPage(Random r, long after, int count, boolean unicode) {
        if (unicode) {
            return hubPage(r, after, count, false)
                    .replace("\"task-", "\"t\u00e2che-" + unicode(r) + "-")
                    .replace("\"owner\":\"proj/agent-", "\"owner\":\"proj/ag\u00e9nt" + unicode(r) + "-")
                    .replace("\"chat\"", "\"ch\u00e2t" + unicode(r) + "\"")
                    .replace("\"claimed\",", "\"r\u00e9clam\u00e9" + unicode(r) + "\",")
                    .replace("\"note\":\"bench", "\"n\u00f6te\":\"" + unicode(r) + "\",\"note\":\"b\u00e9nch " + unicode(r))
                    .replace("\"not/this\"", "\"" + unicode(r) + "/this\"");
        }
        StringBuilder s = new StringBuilder("{\"type\":\"multihub_log_snapshot\",\"sender\":\"hub-b\",\"target\":\"hub-a\",\"events\":[");
        for (int k = 0; k < count; k++) {
            long seq = after + 1 + k;
            int task = r.nextInt(50);
            String kind = new String[] {"claim", "claim", "release", "task_update", "chat", "checkpoint", "handoff"}[r.nextInt(7)];
            double ts = 1.796289192003E9 + r.nextInt(1_000_000) / 1000.0;
            if (k > 0) {
                s.append(',');
            }
            s.append("{\"seq\":").append(seq).append(",\"ts\":").append(ts).append(",\"kind\":\"").append(kind)
                    .append("\",\"payload\":{\"task_id\":\"task-").append(task).append("\",\"owner\":\"proj/agent-")
                    .append(task % 7).append("\",\"note\":\"bench \\\"q\\\" \\u00e9\\n\",\"claimed_at\":").append(ts)
                    .append(",\"lease_expires_at\":").append(r.nextInt(4) == 0 ? Long.toString((long) ts + 3600) : Double.toString(ts + 3600))
                    .append(",\"status\":").append(r.nextInt(9) == 0 ? "null" : "\"claimed\"").append(",\"data_ref\":\"\",\"worktree\":\"wt-")
                    .append(task).append("\",\"paths\":[\"src/module").append(task).append("\",\"docs/").append(task)
                    .append("\"],\"epoch\":").append(seq).append(",\"version\":0,\"checkpoint\":\"\",\"git\":null,")
                    .append("\"nested\":{\"owner\":\"not/this\",\"a\":[true,false,-0.5e-3,{}]},\"quota_principal\":\"proj/agent-")
                    .append(task % 7).append("\"}}");
        }
        return s.append("],\"log_end_seq\":").append(after + count + r.nextInt(3)).append('}').toString();
    }

    @Test
    void aHubsPageIsReadWithoutJacksonAndAsJacksonReadsIt() {
        Random r = new Random(5);
        for (int i = 0; i < 300; i++) {
            byte[] frame = hubPage(r, r.nextInt(1_000_000), 1 + r.nextInt(30)).getBytes(StandardCharsets.UTF_8);
            String plain = plain(frame);
            assertThat(plain).as("a hub's page is read by the plain reader").isNotNull();
            assertThat(plain).isEqualTo(jackson(frame));
        }
    }

    /** Non-ASCII text in well-formed UTF-8 (the link has checked the frame) is read here too, as Jackson reads it. */
    @Test
    void aPageWithNonAsciiTextIsReadWithoutJacksonAndAsJacksonReadsIt() {
        Random r = new Random(6);
        for (int i = 0; i < 300; i++) {
            byte[] frame = hubPage(r, r.nextInt(1_000_000), 1 + r.nextInt(30), true).getBytes(StandardCharsets.UTF_8);
            assertThat(frame.length).isGreaterThan(new String(frame, StandardCharsets.UTF_8).length()); // non-ASCII
            String plain = plain(frame);
            assertThat(plain).as("a page with non-ASCII text is read by the plain reader: %s",
                    new String(frame, StandardCharsets.UTF_8)).isNotNull();
            assertThat(plain).isEqualTo(jackson(frame));
        }
    }

    @Test
    void variedPagesReadTheSameOrGoToJackson() {
        Random r = new Random(77);
        int readPlain = 0;
        for (int i = 0; i < 3000; i++) {
            byte[] frame = LogPageTest.page(r, r.nextInt(5) == 0 ? 0 : r.nextInt(1_000_000), r.nextInt(12))
                    .getBytes(StandardCharsets.UTF_8);
            String plain = plain(frame);
            if (plain != null) {
                readPlain++;
                assertThat(plain).as(new String(frame, StandardCharsets.UTF_8)).isEqualTo(jackson(frame));
            }
        }
        assertThat(readPlain).as("pages the plain reader took").isGreaterThan(300);
    }

    /**
     * Damaged pages: a byte dropped, doubled or replaced by one that matters to JSON or to UTF-8,
     * a cut (inside a multi-byte sequence too), a slice repeated. Whatever the plain reader reads, Jackson reads the same; every page Jackson
     * refuses, the plain reader gives up on.
     */
    @Test
    void aDamagedPageIsNeverReadDifferentlyAndEveryRefusalStays() {
        Random r = new Random(2026);
        byte[] json = "{}[]\",:\\ \t\n0123456789-+.eEnulltruefalsx/u".getBytes(StandardCharsets.US_ASCII);
        // and bytes that make UTF-8 ill-formed: stray continuations, overlong and surrogate leads, F5..FF, cut sequences
        byte[] utf8 = {(byte) 0x80, (byte) 0xbf, (byte) 0xc0, (byte) 0xc1, (byte) 0xc3, (byte) 0xe0, (byte) 0xed,
            (byte) 0xef, (byte) 0xf0, (byte) 0xf4, (byte) 0xf5, (byte) 0xff, (byte) 0xa0, (byte) 0x8f, (byte) 0x90};
        byte[] significant = java.util.Arrays.copyOf(json, json.length + utf8.length);
        System.arraycopy(utf8, 0, significant, json.length, utf8.length);
        int refused = 0;
        int readPlain = 0;
        for (int i = 0; i < 20_000; i++) {
            byte[] good = (switch (r.nextInt(3)) {
                case 0 -> hubPage(r, r.nextInt(1000), 1 + r.nextInt(3));
                case 1 -> hubPage(r, r.nextInt(1000), 1 + r.nextInt(3), true);
                default -> LogPageTest.page(r, r.nextInt(1000), 1 + r.nextInt(3));
            }).getBytes(StandardCharsets.UTF_8);
            byte[] frame = damaged(r, good, significant);
            String jackson = jackson(frame);
            String plain = plain(frame);
            if (jackson.equals("refused")) {
                refused++;
                assertThat(plain).as("refused by Jackson: %s", new String(frame, StandardCharsets.UTF_8)).isNull();
            } else if (plain != null) {
                readPlain++;
                assertThat(plain).as(new String(frame, StandardCharsets.UTF_8)).isEqualTo(jackson);
            }
        }
        assertThat(refused).isGreaterThan(5_000);
        assertThat(readPlain).isGreaterThan(2_500);
    }

    private static byte[] damaged(Random r, byte[] good, byte[] significant) {
        List<Byte> b = new ArrayList<>();
        for (byte x : good) {
            b.add(x);
        }
        int cuts = 1 + r.nextInt(2);
        for (int c = 0; c < cuts && !b.isEmpty(); c++) {
            int at = r.nextInt(b.size());
            switch (r.nextInt(5)) {
                case 0 -> b.remove(at);
                case 1 -> b.add(at, b.get(at));
                case 2 -> b.set(at, significant[r.nextInt(significant.length)]);
                case 3 -> b.add(at, significant[r.nextInt(significant.length)]);
                default -> {
                    if (r.nextBoolean()) {
                        b.subList(at, b.size()).clear();
                    } else {
                        int len = Math.min(b.size() - at, 1 + r.nextInt(12));
                        b.addAll(at, new ArrayList<>(b.subList(at, at + len)));
                    }
                }
            }
        }
        byte[] out = new byte[b.size()];
        for (int k = 0; k < out.length; k++) {
            out[k] = b.get(k);
        }
        return out;
    }
}
