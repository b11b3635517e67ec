package dev.synapsehub.net.protocol;

import dev.synapsehub.core.command.AgentActivityCommand;
import dev.synapsehub.core.messaging.AddressMatcher;

import java.util.HashSet;
import java.util.Set;

/**
 * The names that may have a dead-letter entry (§8.2), so that only their activity is sent to
 * the writer to clear it: every other frame costs a set lookup, not a mutation.
 */
final class DeadLetterHints {
    /** Hints kept at most: beyond it a dead-lettered name is cleared only by binding again. */
    private static final int MAX_HINTS = 4096;

    private final VerbSupport support;
    /** Guarded by itself. */
    private final Set<String> hints = new HashSet<>();

    DeadLetterHints(VerbSupport support) {
        this.support = support;
    }

    /** A chat to {@code target} was dead-lettered: each name it addresses may now have an entry. */
    void deadLettered(String target) {
        synchronized (hints) {
            if (hints.size() < MAX_HINTS) {
                hints.addAll(AddressMatcher.parts(target));
            }
        }
    }

    /** A socket bound {@code name}: its dead-letter entry is cleared (§8.2). */
    void onBound(String name) {
        synchronized (hints) {
            hints.remove(name);
        }
        clear(name);
    }

    /** A non-heartbeat, non-chat frame from {@code name}: clears its dead-letter entry if it may have one. */
    void onActivity(String name) {
        boolean hinted;
        synchronized (hints) {
            hinted = hints.remove(name);
        }
        if (hinted) {
            clear(name);
        }
    }

    /** Clears {@code name}'s dead-letter entry; refused (busy), the hint comes back so its next frame retries. */
    private void clear(String name) {
        support.submitUnanswered(new AgentActivityCommand(name), "clearing the dead letter of " + name, () -> {
            synchronized (hints) {
                if (hints.size() < MAX_HINTS) {
                    hints.add(name);
                }
            }
        });
    }
}
