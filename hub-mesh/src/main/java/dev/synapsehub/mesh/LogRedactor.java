package dev.synapsehub.mesh;

import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.command.ClaimFamilyCommand;
import dev.synapsehub.core.command.Command;
import dev.synapsehub.core.command.LedgerProgressCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.LedgerTaskUpdateCommand;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What the mesh's logs may say about requests, intents, records and failures (seed 001 §15):
 * kinds and ids (command type, agent, task, intent id, record id), never payloads (checkpoint
 * contents, chat and note bodies, task texts, tokens, signatures, the envelope's payload). Every
 * mesh log line that names a request or carries a failure goes through here.
 */
final class LogRedactor {
    /** What replaces a value that may be sensitive. */
    static final String REDACTED = "<redacted>";
    /** Longest failure text kept: a decoder's message is a diagnosis, not a data dump. */
    private static final int MAX_TEXT = 400;
    /** A double-quoted literal (JSON strings, and the values decoders quote in their messages). */
    private static final Pattern QUOTED = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"");
    private static final int MAX_CAUSES = 8;

    private LogRedactor() {
    }

    /** {@code CheckpointCommand by alice on T1}: the kind, the acting agent and the task, nothing else. */
    static String describe(Command command) {
        if (command == null) {
            return "no command";
        }
        String task = task(command);
        return command.getClass().getSimpleName() + " by " + command.agent() + (task == null ? "" : " on " + task);
    }

    /** {@link #describe(Command)}, plus whether it carries an idempotency key (never the key). */
    static String describe(Mutation mutation) {
        if (mutation == null) {
            return "no mutation";
        }
        return describe(mutation.command()) + (mutation.idempotency() == null ? "" : " (keyed)");
    }

    /** {@code intent <id> (claim T1 by alice)}. */
    static String describe(QueuedIntent intent) {
        return "intent " + intent.intentId() + " (" + intent.entityType() + " " + intent.entityId() + " by "
                + intent.agent() + ")";
    }

    /**
     * A failure's text with every double-quoted literal replaced by {@code "<redacted>"} (an
     * unterminated one cut off) and at most {@value #MAX_TEXT} characters kept: decoders quote
     * the offending input in their messages, and that input is request data.
     */
    static String scrub(String text) {
        if (text == null) {
            return null;
        }
        String s = QUOTED.matcher(text).replaceAll("\u0001");
        int open = s.indexOf('"');
        if (open >= 0) {
            s = s.substring(0, open) + "\u0001"; // an unterminated literal: the rest is its content
        }
        s = s.replace("\u0001", "\"" + REDACTED + "\"");
        return s.length() <= MAX_TEXT ? s : s.substring(0, MAX_TEXT) + "…";
    }

    /** {@code ClassName: scrubbed message}. */
    static String scrub(Throwable failure) {
        if (failure == null) {
            return "null";
        }
        String message = scrub(failure.getMessage());
        return failure.getClass().getName() + (message == null ? "" : ": " + message);
    }

    /**
     * A stand-in to hand the logger instead of {@code failure}: the same class names, stack
     * traces and cause chain, every message scrubbed, so the trace stays useful and says nothing
     * the request carried.
     */
    static Throwable safe(Throwable failure) {
        return safe(failure, new IdentityHashMap<>(), 0);
    }

    private static Throwable safe(Throwable failure, Map<Throwable, Throwable> seen, int depth) {
        if (failure == null || depth >= MAX_CAUSES) {
            return null;
        }
        Throwable known = seen.get(failure);
        if (known != null) {
            return known;
        }
        Redacted copy = new Redacted(scrub(failure));
        seen.put(failure, copy);
        copy.setStackTrace(failure.getStackTrace());
        Throwable cause = safe(failure.getCause(), seen, depth + 1);
        if (cause != null) {
            copy.initCause(cause);
        }
        return copy;
    }

    private static String task(Command command) {
        if (command instanceof ClaimFamilyCommand c) {
            return c.taskId();
        }
        if (command instanceof LedgerTaskCommand c) {
            return c.taskId();
        }
        if (command instanceof LedgerTaskUpdateCommand c) {
            return c.taskId();
        }
        if (command instanceof LedgerProgressCommand c) {
            return c.taskId();
        }
        return null;
    }

    /** A failure as logged: its message is the original class and the scrubbed message. */
    static final class Redacted extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Redacted(String message) {
            super(message);
        }

        @Override
        public String toString() {
            return getMessage(); // already "OriginalClass: message"
        }
    }
}
