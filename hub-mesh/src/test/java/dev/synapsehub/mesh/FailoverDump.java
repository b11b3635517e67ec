package dev.synapsehub.mesh;

import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.journal.JournaledEvent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a failover test that found a broken rule leaves to diagnose it: the whole history and the
 * committed claim log in a file under {@code target/}, and the lines about the tasks named in
 * the violations for the assertion message (a CI run keeps only its console).
 */
final class FailoverDump {
    private static final int EXCERPT_LINES = 80;
    private static final Pattern TASKS = Pattern.compile(
            "(?:two owners of |epoch went back on |held at once: )(\\S+)|and (\\S+) Scope\\[");
    private static final Pattern OWNERS = Pattern.compile("by (\\w+)|(\\w+)@\\d+");

    private FailoverDump() {
    }

    /** Writes the dump and returns the message: where it is, and the lines about the named tasks. */
    static String write(List<History.Op> ops, MeshNode reference, List<String> violations) throws Exception {
        long t0 = ops.stream().mapToLong(History.Op::requested).min().orElse(0);
        long wall0 = System.currentTimeMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        List<String> history = new ArrayList<>();
        ops.stream().sorted(Comparator.comparingLong(History.Op::invoked)).forEach(o -> history.add(String.format(
                "%9.3f %9.3f %9.3f %-7s %-8s %-3s on %s epochArg=%s to=%s -> %s epoch=%d owner=%s",
                (o.requested() - t0) / 1e6, (o.invoked() - t0) / 1e6, (o.returned() - t0) / 1e6, o.client(),
                o.kind(), o.task(), o.node(), o.epochArg(), o.target(), o.result(), o.epoch(), o.owner())));
        List<String> log = new ArrayList<>();
        for (JournaledEvent je : claimEvents(reference)) {
            double at = je.event().ts() * 1000 - wall0;
            if (je.event() instanceof ClaimSnapshotEvent s) {
                log.add(String.format("seq %d %9.3f %s %s owner=%s epoch=%d", je.seq(), at, s.kind(),
                        s.claim().taskId(), s.claim().owner(), s.claim().epoch()));
            } else if (je.event() instanceof ClaimReleasedEvent r) {
                log.add(String.format("seq %d %9.3f release %s", je.seq(), at, r.taskId()));
            }
        }
        List<String> lines = new ArrayList<>(violations);
        lines.add("# history: requested, sent, returned (ms from the first request), client, kind, task, node, ...");
        lines.addAll(history);
        lines.add("# the committed claim log of " + reference.nodeId() + " (seq, hub time in the same ms)");
        lines.addAll(log);
        Path out = Path.of("target", "failover-" + System.currentTimeMillis() + ".txt").toAbsolutePath();
        Files.createDirectories(out.getParent());
        Files.write(out, lines);

        Set<String> tasks = new TreeSet<>();
        Set<String> owners = new TreeSet<>();
        for (String v : violations) {
            for (Matcher m = TASKS.matcher(v); m.find(); ) {
                tasks.add(m.group(1) != null ? m.group(1).replaceAll(":$", "") : m.group(2));
            }
            for (Matcher m = OWNERS.matcher(v); m.find(); ) {
                owners.add(m.group(1) != null ? m.group(1) : m.group(2));
            }
        }
        StringBuilder message = new StringBuilder("the history and committed log are in " + out + "; the lines"
                + " about " + tasks + " and " + owners + ":");
        List<String> about = new ArrayList<>();
        // history: client is word 3, task word 5; log: task word 4
        history.stream().filter(l -> word(l, 5, tasks) && (word(l, 3, owners) || owners.stream()
                .anyMatch(o -> l.contains(" to=" + o + " ") || l.endsWith("owner=" + o)))).forEach(about::add);
        log.stream().filter(l -> word(l, 4, tasks)).forEach(about::add);
        about.stream().limit(EXCERPT_LINES).forEach(l -> message.append('\n').append(l));
        return message.toString();
    }

    private static boolean word(String line, int index, Set<String> values) {
        String[] words = line.trim().split("\\s+");
        return words.length > index && values.contains(words[index]);
    }

    private static List<JournaledEvent> claimEvents(MeshNode n) throws Exception {
        return n.actor().read(s -> {
            try {
                return n.journal().readAfter(0, Integer.MAX_VALUE, Set.of("claim", "handoff", "release"));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get(30, TimeUnit.SECONDS);
    }
}
