package dev.synapsehub.net.protocol;

import io.netty.buffer.ByteBufUtil;

import java.util.List;
import java.util.function.Function;

/** Which of a reply's items fit in one outgoing frame, counted in UTF-8 bytes as they go out. */
final class OneFrame {
    private OneFrame() {
    }

    /** The newest of {@code items} (the list's tail) whose frames fit in {@code budget} bytes; at least the newest one. */
    static <T> List<T> newest(List<T> items, Function<T, String> frame, long budget) {
        int from = items.size();
        while (from > 0) {
            int bytes = ByteBufUtil.utf8Bytes(frame.apply(items.get(from - 1)));
            if (from < items.size() && budget < bytes) {
                break;
            }
            budget -= bytes + 1; // and a separating comma
            from--;
        }
        return items.subList(from, items.size());
    }

    /** The oldest of {@code items} (the list's head) whose frames fit in {@code budget} bytes; at least the oldest one. */
    static <T> List<T> oldest(List<T> items, Function<T, String> frame, long budget) {
        int to = 0;
        while (to < items.size()) {
            int bytes = ByteBufUtil.utf8Bytes(frame.apply(items.get(to)));
            if (to > 0 && budget < bytes) {
                break;
            }
            budget -= bytes + 1;
            to++;
        }
        return items.subList(0, to);
    }
}
