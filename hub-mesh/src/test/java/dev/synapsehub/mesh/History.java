package dev.synapsehub.mesh;

import java.util.ArrayList;
import java.util.List;

/**
 * Every claim, release and handoff invocation made by the load agents and the reply each got,
 * across all nodes, with monotonic invoke and return times (nanoTime), for {@link HistoryChecker}.
 */
final class History {
    enum Kind { CLAIM, RELEASE, HANDOFF }

    enum Result { GRANTED, DENIED, UNKNOWN }

    /** A file scope: a worktree and declared paths (none: the whole worktree). */
    record Scope(String worktree, List<String> paths) {
        Scope {
            paths = List.copyOf(paths);
        }

        boolean overlaps(Scope other) {
            if (!worktree.equals(other.worktree)) {
                return false;
            }
            if (paths.isEmpty() || other.paths.isEmpty()) {
                return true;
            }
            for (String a : paths) {
                for (String b : other.paths) {
                    if (a.equals(b) || a.startsWith(b + "/") || b.startsWith(a + "/")) {
                        return true;
                    }
                }
            }
            return false;
        }
    }

    /**
     * One operation.
     *
     * @param requested when the request was first sent: a retry under the same idem_key is the same
     *     request, so its effect may date from then (the attempt that learns it comes later)
     * @param epochArg the epoch a release or handoff named
     * @param target a handoff's recipient
     * @param invoked when this attempt was sent
     * @param epoch the epoch the reply granted (claims, handoffs)
     * @param owner the owner the reply named
     */
    record Op(String client, String node, Kind kind, String task, Scope scope, long requested, Long epochArg,
              String target, long invoked, long returned, Result result, long epoch, String owner) {
        boolean granted() {
            return result == Result.GRANTED;
        }
    }

    private final List<Op> ops = new ArrayList<>();

    synchronized void add(Op op) {
        ops.add(op);
    }

    synchronized List<Op> ops() {
        return new ArrayList<>(ops);
    }

    /** Granted operations returned after {@code since} (nanoTime). */
    synchronized long grantedAfter(long since) {
        return ops.stream().filter(o -> o.granted() && o.returned() > since).count();
    }
}
