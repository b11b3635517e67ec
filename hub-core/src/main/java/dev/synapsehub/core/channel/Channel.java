package dev.synapsehub.core.channel;

import java.util.List;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.Collections;

/**
 * One private channel as data, immutable: the image a snapshot writes and a read hands to
 * another thread (the writer changes its own {@link LiveChannel} in place).
 *
 * @param id the trimmed id
 * @param owner the creator; ownership never moves (contract A1.1)
 * @param label the creator's label, never shown on the wire; null when none
 * @param members current members, sorted
 * @param invites one-shot invitations not yet consumed, sorted
 * @param history retained channel chat frames as fanned out, oldest first
 */
public record Channel(String id, String owner, String label, SortedSet<String> members, SortedSet<String> invites,
        List<String> history) {
    public Channel {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(owner, "owner");
        members = Collections.unmodifiableSortedSet(new TreeSet<>(members));
        invites = Collections.unmodifiableSortedSet(new TreeSet<>(invites));
        history = List.copyOf(history);
    }
}
