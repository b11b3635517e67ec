package dev.synapsehub.core.actor;

import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.journal.Journal;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;

import java.util.List;

/**
 * A journal that also records what each event batch decided (the replies), for a replicated
 * hub whose other nodes publish those decisions to their own connections. The actor appends
 * through {@link #append(List, List)} when its journal is one.
 */
public interface DecisionLog extends Journal {
    /**
     * Appends {@code batch} like {@link Journal#append(List)}; {@code decided} lists, in batch
     * order, the fresh decisions whose events make up the batch.
     */
    List<JournaledEvent> append(List<CoordinationEvent> batch, List<DecidedMutation> decided) throws JournalException;
}
