package dev.synapsehub.net.protocol;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The ingress limit on guard-denial evidence (wire contract A3): per quota principal, at most
 * {@value #MAX_EVENTS} requests and {@value #MAX_BYTES} bytes within any {@value #WINDOW_SECONDS}
 * seconds of hub time. A refused request uses none of the allowance, so a client that backs off
 * is admitted again once the window has moved on. Thread-safe. On a token hub every socket has
 * the token's principal, so this holds one window; other windows are swept when more than
 * {@value #SWEEP_ABOVE} are held.
 */
final class GuardEvidenceIngress {
    static final int MAX_EVENTS = 100;
    static final long MAX_BYTES = 256L * 1024;
    static final double WINDOW_SECONDS = 60.0;
    static final int SWEEP_ABOVE = 64;

    /** One admitted request: when, and how many bytes. */
    private record Entry(double at, int bytes) {
    }

    /** The admitted requests inside the window, oldest first, with their byte total. */
    private static final class Window {
        final ArrayDeque<Entry> entries = new ArrayDeque<>();
        long bytes;
    }

    private final Map<String, Window> windows = new HashMap<>();

    /**
     * Admits a request of {@code bytes} from {@code principal} at hub time {@code now}.
     *
     * @return null when admitted (and counted), else the limit it would exceed: {@code events} or {@code bytes}
     */
    synchronized String admit(String principal, int bytes, double now) {
        String key = principal == null ? "" : principal;
        if (windows.size() > SWEEP_ABOVE) {
            windows.values().forEach(other -> expire(other, now));
            windows.values().removeIf(other -> other.entries.isEmpty());
        }
        Window w = windows.get(key);
        if (w != null) {
            expire(w, now);
        } else {
            w = new Window();
        }
        String refused = w.entries.size() >= MAX_EVENTS ? "events" : w.bytes + bytes > MAX_BYTES ? "bytes" : null;
        if (refused == null) {
            w.entries.addLast(new Entry(now, bytes));
            w.bytes += bytes;
        }
        if (w.entries.isEmpty()) {
            windows.remove(key);
        } else {
            windows.put(key, w);
        }
        return refused;
    }

    private static void expire(Window w, double now) {
        while (!w.entries.isEmpty() && w.entries.peekFirst().at() <= now - WINDOW_SECONDS) {
            w.bytes -= w.entries.pollFirst().bytes();
        }
    }
}
