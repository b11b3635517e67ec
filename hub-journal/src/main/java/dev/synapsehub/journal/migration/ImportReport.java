package dev.synapsehub.journal.migration;

import dev.synapsehub.core.state.CoordinationState;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What an import read, carried, skipped (and why), reconstructed and left behind, and the
 * state the written journal replays to. Filled by {@link ReferenceImport}; printed by the CLI.
 */
public final class ImportReport {
    private final Path source;
    private final Path target;
    private final boolean dryRun;
    private final Map<String, Long> carried = new TreeMap<>();
    private final Map<String, Long> skipped = new TreeMap<>();
    private final Map<String, String> skipReasons = new TreeMap<>();
    private final List<String> reconstructed = new ArrayList<>();
    private final List<String> notCarried = new ArrayList<>();
    private final Map<String, Object> after = new LinkedHashMap<>();
    private String sourceSummary = "";
    private String targetSummary = "";
    private long appendedIdempotency;
    private long appendedPins;

    ImportReport(Path source, Path target, boolean dryRun) {
        this.source = source;
        this.target = target;
        this.dryRun = dryRun;
    }

    void describeSource(String text) {
        sourceSummary = text;
    }

    void describeTarget(String text) {
        targetSummary = text;
    }

    void carried(String kind) {
        carried.merge(kind, 1L, Long::sum);
    }

    void countAppendedIdempotency() {
        appendedIdempotency++;
    }

    void countAppendedPin() {
        appendedPins++;
    }

    void skipped(String kind, String reason) {
        skipped.merge(kind, 1L, Long::sum);
        skipReasons.putIfAbsent(kind, reason);
    }

    void reconstructed(String line) {
        reconstructed.add(line);
    }

    void notCarried(String line) {
        notCarried.add(line);
    }

    /** Records what the written (or, in a dry run, planned) journal replays to at {@code now}. */
    void after(CoordinationState state, double now) {
        after.put("live claims", state.claims().liveCount());
        after.put("epoch counter", state.claims().epochCounter());
        after.put("board tasks", state.board().taskCount());
        after.put("progress notes", state.board().notes().size());
        after.put("resource offers", state.resources().snapshot(now).size());
        after.put("chat history", state.messaging().historySize());
        after.put("msg_id counter", state.messaging().msgCounter());
        after.put("mailbox watermarks", state.messaging().watermarks().size());
        after.put("mailbox backlogs", state.messaging().mailboxPending().values().stream().filter(n -> n > 0).count());
        after.put("pending receipts", state.messaging().pendingReceipts().size());
        after.put("dead-letter targets", state.messaging().deadLetters(now).size());
        after.put("idempotency keys", state.idempotency().size());
        after.put("identity pins", state.pins().size());
    }

    /** Events carried, by kind. */
    public Map<String, Long> carried() {
        return Map.copyOf(carried);
    }

    /** Events skipped, by kind. */
    public Map<String, Long> skipped() {
        return Map.copyOf(skipped);
    }

    /** Idempotency records added from the {@code operations} table. */
    public long appendedIdempotency() {
        return appendedIdempotency;
    }

    /** The replayed state's counts, by name. */
    public Map<String, Object> after() {
        return Map.copyOf(after);
    }

    /** True when nothing was written. */
    public boolean dryRun() {
        return dryRun;
    }

    /** The report as lines for a terminal. */
    public List<String> lines() {
        List<String> out = new ArrayList<>();
        out.add((dryRun ? "dry run: nothing written. " : "") + "import " + source + " -> " + target);
        out.add("source   " + sourceSummary);
        out.add("target   " + targetSummary);
        long total = carried.values().stream().mapToLong(Long::longValue).sum();
        out.add(String.format(Locale.ROOT, "%s %,d events with their seq numbers", dryRun ? "would carry" : "carried ",
                total));
        carried.forEach((kind, n) -> out.add(String.format(Locale.ROOT, "  %-28s %,9d", kind, n)));
        if (appendedIdempotency > 0) {
            out.add(String.format(Locale.ROOT, "  %-28s %,9d  (from the operations table, after the last seq)",
                    "idempotency", appendedIdempotency));
        }
        if (appendedPins > 0) {
            out.add(String.format(Locale.ROOT, "  %-28s %,9d  (from the --identity-pins file, after the last seq)",
                    "identity_pin", appendedPins));
        }
        long dropped = skipped.values().stream().mapToLong(Long::longValue).sum();
        out.add(String.format(Locale.ROOT, "skipped  %,d events", dropped));
        skipped.forEach((kind, n) -> out.add(String.format(Locale.ROOT, "  %-28s %,9d  %s", kind, n,
                skipReasons.get(kind))));
        if (!reconstructed.isEmpty()) {
            out.add("reconstructed");
            reconstructed.forEach(line -> out.add("  " + line));
        }
        if (!notCarried.isEmpty()) {
            out.add("not carried");
            notCarried.forEach(line -> out.add("  " + line));
        }
        StringBuilder state = new StringBuilder(dryRun ? "would replay to " : "replays to ");
        after.forEach((name, value) -> state.append(name).append(' ').append(value).append(", "));
        if (!after.isEmpty()) {
            state.setLength(state.length() - 2);
        }
        out.add(state.toString());
        return out;
    }
}
