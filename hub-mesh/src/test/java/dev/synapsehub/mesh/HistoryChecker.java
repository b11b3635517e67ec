package dev.synapsehub.mesh;

import dev.synapsehub.mesh.History.Kind;
import dev.synapsehub.mesh.History.Op;
import dev.synapsehub.mesh.History.Result;
import dev.synapsehub.mesh.History.Scope;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks a recorded history against the single-hub rules, soundly: only what the replies prove
 * is used, so an unknown outcome can never cause a false alarm.
 *
 * <ul>
 *   <li><b>No two owners.</b> An owner surely holds a task from the reply that granted it (a claim,
 *       or a handoff to it) until it invokes the release, handoff or renewal that ends that
 *       epoch. Times count from a request's first send (a retry under the same idem_key is the
 *       same request), and any ending request of the owner that may take effect after the grant
 *       (answered after the grant's first send, or never answered) ends it from its own first
 *       send: a handoff's recipient can renew before a retry tells the giver, and a claim sent
 *       before a handoff can renew after it. Windows of the same task held by different owners
 *       must not overlap.</li>
 *   <li><b>Epochs only grow.</b> A grant requested after another grant's reply on the
 *       same task carries an epoch at least as high, strictly higher for another owner.</li>
 *   <li><b>Scopes never overlap.</b> Windows of different owners that overlap in time hold scopes
 *       that do not overlap.</li>
 *   <li><b>Nothing acknowledged is lost</b> ({@link #lost}): every granted claim and handoff is in
 *       the committed log with its owner and epoch, and every granted release follows it.</li>
 * </ul>
 */
final class HistoryChecker {
    /** A surely-held ownership. */
    record Window(String task, String owner, long epoch, Scope scope, long start, long end) {
        boolean overlaps(Window o) {
            return start < o.end && o.start < end;
        }
    }

    /** A claim-family event of the committed log: kind claim, handoff or release. */
    record LogEvent(String kind, String task, String owner, long epoch) {
    }

    private HistoryChecker() {
    }

    static List<Window> windows(List<Op> ops) {
        // when each request (client, first send) can have taken effect last: its grant's reply (a
        // keyed request applies once), else never known when an attempt went unanswered (a queued
        // intent may still commit it), else its last reply
        Map<String, Long> lastEffect = new LinkedHashMap<>();
        Map<String, Long> grantedAt = new LinkedHashMap<>();
        for (Op op : ops) {
            lastEffect.merge(request(op), op.result() == Result.UNKNOWN ? Long.MAX_VALUE : op.returned(), Math::max);
            if (op.granted()) {
                grantedAt.put(request(op), op.returned());
            }
        }
        lastEffect.putAll(grantedAt);
        Map<String, Window> byKey = new LinkedHashMap<>();
        for (Op op : ops) {
            if (!op.granted() || op.kind() == Kind.RELEASE) {
                continue;
            }
            String owner = op.owner();
            long end = Long.MAX_VALUE;
            for (Op other : ops) {
                boolean ends = other.kind() == Kind.CLAIM // a renewal re-grants under a new epoch
                        || (other.epochArg() != null && other.epochArg() == op.epoch());
                // any request of the owner that may take effect after this grant's first send ends
                // it, from its own first send on: a retry learns an effect that may be older, and a
                // recipient may act on a handoff (renew, release) before its giver hears of it
                if (ends && other.client().equals(owner) && other.task().equals(op.task())
                        && !request(other).equals(request(op)) && lastEffect.get(request(other)) > op.requested()) {
                    end = Math.min(end, Math.max(other.requested(), op.requested()));
                }
            }
            if (end <= op.returned()) {
                continue; // ended before it was acknowledged: never surely held
            }
            String key = op.task() + "\0" + owner + "\0" + op.epoch();
            Window w = new Window(op.task(), owner, op.epoch(), op.scope(), op.returned(), end);
            byKey.merge(key, w, (a, b) -> new Window(a.task(), a.owner(), a.epoch(), a.scope(),
                    Math.min(a.start(), b.start()), Math.min(a.end(), b.end())));
        }
        return new ArrayList<>(byKey.values());
    }

    /** Every rule broken by the history, described; empty when it is consistent with one hub. */
    static List<String> violations(List<Op> ops) {
        List<String> out = new ArrayList<>();
        List<Window> windows = windows(ops);
        for (int i = 0; i < windows.size(); i++) {
            for (int j = i + 1; j < windows.size(); j++) {
                Window a = windows.get(i);
                Window b = windows.get(j);
                if (!a.overlaps(b)) {
                    continue;
                }
                if (a.task().equals(b.task()) && !a.owner().equals(b.owner())) {
                    out.add("two owners of " + a.task() + ": " + a.owner() + "@" + a.epoch() + " and " + b.owner()
                            + "@" + b.epoch() + " both surely held it at once");
                } else if (!a.owner().equals(b.owner()) && a.scope().overlaps(b.scope())) {
                    out.add("overlapping scopes held at once: " + a.task() + " " + a.scope() + " by " + a.owner()
                            + " and " + b.task() + " " + b.scope() + " by " + b.owner());
                }
            }
        }
        List<Op> grants = ops.stream().filter(o -> o.granted() && o.kind() != Kind.RELEASE)
                .sorted(Comparator.comparingLong(Op::returned)).toList();
        for (Op first : grants) {
            for (Op second : grants) {
                if (!first.task().equals(second.task()) || first.returned() >= second.requested()) {
                    continue;
                }
                boolean sameOwner = first.owner().equals(second.owner());
                if (second.epoch() < first.epoch() || (!sameOwner && second.epoch() == first.epoch())) {
                    out.add("epoch went back on " + first.task() + ": " + first.owner() + "@" + first.epoch()
                            + " was granted before " + second.owner() + "@" + second.epoch() + " was asked for");
                }
            }
        }
        return out;
    }

    /** Acknowledged grants and releases missing from the committed log, described. */
    static List<String> lost(List<Op> ops, List<LogEvent> log) {
        List<String> out = new ArrayList<>();
        for (Op op : ops) {
            if (!op.granted()) {
                continue;
            }
            if (op.kind() == Kind.RELEASE) {
                int claimed = indexOf(log, op.task(), op.client(), op.epochArg() == null ? -1 : op.epochArg());
                boolean released = false;
                for (int i = Math.max(claimed, 0); claimed >= 0 && i < log.size(); i++) {
                    LogEvent e = log.get(i);
                    released |= e.kind().equals("release") && e.task().equals(op.task());
                }
                if (!released) {
                    out.add("acknowledged release of " + op.task() + "@" + op.epochArg() + " by " + op.client()
                            + " is not in the log");
                }
            } else if (indexOf(log, op.task(), op.owner(), op.epoch()) < 0) {
                out.add("acknowledged " + op.kind() + " of " + op.task() + " to " + op.owner() + "@" + op.epoch()
                        + " is not in the log");
            }
        }
        return out;
    }

    private static String request(Op op) {
        return op.client() + "\0" + op.requested();
    }

    private static int indexOf(List<LogEvent> log, String task, String owner, long epoch) {
        for (int i = 0; i < log.size(); i++) {
            LogEvent e = log.get(i);
            if (!e.kind().equals("release") && e.task().equals(task) && e.owner().equals(owner) && e.epoch() == epoch) {
                return i;
            }
        }
        return -1;
    }
}
