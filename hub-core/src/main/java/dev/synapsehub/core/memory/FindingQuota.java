package dev.synapsehub.core.memory;

import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.MemoryCommand;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.MemoryEvent;
import dev.synapsehub.core.reply.MemoryReply;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.undo.UndoLog;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Participant memory on the writer thread (wire contract A12): the only state it keeps is how
 * many findings each name has had admitted (PM5), rebuilt on replay by counting {@code finding}
 * events per actor, so a full name stays full across a restart. Recalls have no quota.
 */
public final class FindingQuota {
    private final Map<String, Integer> admitted = new LinkedHashMap<>();
    private final UndoLog undo;

    /** A quota recording its changes in {@code undo}. */
    public FindingQuota(UndoLog undo) {
        this.undo = undo;
    }

    /** A quota with an undo log of its own. */
    public FindingQuota() {
        this(new UndoLog());
    }

    /** Decides a memory write: a finding over its author's quota is refused, nothing else is. */
    public Decision decide(MemoryCommand c, double t, long nextSeq) {
        String actor = PythonWhitespace.strip(c.agent());
        if (c.kind() == MemoryCommand.Kind.FINDING && admitted.getOrDefault(actor, 0) >= c.findingQuota()) {
            return new Decision(new Reply.Denied("", Refusal.QUOTA_EXCEEDED,
                    "Agent '" + actor + "' has reached the " + c.findingQuota() + " durable-finding quota."), List.of());
        }
        return new Decision(new MemoryReply(c.kind(), nextSeq),
                List.of(new MemoryEvent(t, c.kind(), actor, c.payloadJson())));
    }

    /** Counts an admitted finding (live and on replay). */
    public void apply(CoordinationEvent event) {
        if (event instanceof MemoryEvent m && m.memoryKind() == MemoryCommand.Kind.FINDING) {
            String actor = m.actor();
            Integer before = admitted.get(actor);
            admitted.put(actor, before == null ? 1 : before + 1);
            undo.record(() -> {
                if (before == null) {
                    admitted.remove(actor);
                } else {
                    admitted.put(actor, before);
                }
            });
        }
    }

    /** Admitted findings of {@code actor} (trimmed). */
    public int admitted(String actor) {
        return admitted.getOrDefault(PythonWhitespace.strip(actor), 0);
    }

    /** The counts, in first-admission order. */
    public Map<String, Integer> image() {
        return java.util.Collections.unmodifiableMap(new LinkedHashMap<>(admitted));
    }

    /** Loads counts into this empty quota. */
    public void restore(Map<String, Integer> image) {
        if (!admitted.isEmpty()) {
            throw new IllegalStateException("restore needs an empty finding quota");
        }
        admitted.putAll(image);
    }
}
