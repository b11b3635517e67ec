package dev.synapsehub.core.channel;

import java.util.ArrayDeque;
import java.util.List;
import java.util.TreeSet;

/**
 * One channel as the writer holds it: changed in place, each change recorded for undo by
 * {@link ChannelRegistry}, so an invite, a join or a chat costs O(log n) or O(1) instead of a
 * copy of the whole set or history. Other threads only ever see a {@link Channel} image of it.
 */
final class LiveChannel {
    final String id;
    final String owner;
    final String label;
    final TreeSet<String> members = new TreeSet<>();
    final TreeSet<String> invites = new TreeSet<>();
    /** Retained chat frames, oldest first. */
    final ArrayDeque<String> history = new ArrayDeque<>();
    /** Characters of {@link #history} (kept beside it: summing it on every chat would cost its size). */
    long historyChars;

    LiveChannel(String id, String owner, String label) {
        this.id = id;
        this.owner = owner;
        this.label = label;
    }

    /** Names this channel holds: members, pending invitees, and its owner even after the owner left. */
    int roster() {
        return members.size() + invites.size() + (members.contains(owner) ? 0 : 1);
    }

    /** An immutable copy, safe to hand to another thread. */
    Channel image() {
        return new Channel(id, owner, label, members, invites, List.copyOf(history));
    }
}
