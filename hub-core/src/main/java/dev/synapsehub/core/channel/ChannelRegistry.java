package dev.synapsehub.core.channel;

import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ChannelCommand;
import dev.synapsehub.core.event.ChannelEvent;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.ChannelReply;
import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Private channels (wire contract A1): named, invite-only recipient sets with their own chat
 * history. Decided and applied on the writer thread; every change is a journaled
 * {@link ChannelEvent}, and channel chats are {@link ChatEvent}s carrying the channel id.
 */
public final class ChannelRegistry {
    /** At most this many channels exist at once (A1.1). */
    public static final int MAX_CHANNELS = 4096;
    /** A channel id is 1–200 characters (code points, as Python counts) after trimming (A1.1). */
    public static final int MAX_ID_LENGTH = 200;
    /**
     * Names one channel holds at most: members, pending invitees and its owner together. Ours
     * (the contract has no bound): without it one owner's invites grew without end on the writer.
     */
    public static final int MAX_ROSTER = 1024;
    /**
     * Channels one agent owns at most at once. Ours: without it one agent could take all
     * {@link #MAX_CHANNELS} places and leave every other agent {@code channel registry is full}.
     */
    public static final int MAX_OWNED_PER_AGENT = 256;
    /** An invitee is at most this many code points, as an agent name (a longer one could never join). */
    public static final int MAX_INVITEE_CODE_POINTS = 256;

    /**
     * Characters of chat frames all channels' histories keep at most together (about 64 MiB of
     * Latin-1 text, as the public history): the count bound alone let one agent's 4,096 channels
     * of 10,000 chats of up to a megabyte each hold far more than any heap. Deterministic, so a
     * replay keeps the same chats.
     */
    public static final long MAX_HISTORY_CHARS = 64L * 1024 * 1024;

    private final int maxHistory;
    private final long maxHistoryChars;
    private final LinkedHashMap<String, LiveChannel> channels = new LinkedHashMap<>(); // creation order
    private final UndoLog undo;
    /** Channels each owner owns now (absent: none); kept beside the map so a create need not count. */
    private final java.util.HashMap<String, Integer> owned = new java.util.HashMap<>();
    /** Characters of every channel's history together. */
    private long historyChars;

    /** A registry keeping the {@code maxHistory} most recent chats per channel, recording into {@code undo}. */
    public ChannelRegistry(int maxHistory, UndoLog undo) {
        this(maxHistory, MAX_HISTORY_CHARS, undo);
    }

    /** As above, the histories together holding at most {@code maxHistoryChars} characters (tests lower it). */
    ChannelRegistry(int maxHistory, long maxHistoryChars, UndoLog undo) {
        this.maxHistory = Math.max(1, maxHistory);
        this.maxHistoryChars = maxHistoryChars;
        this.undo = undo;
    }

    /** A registry keeping the {@code maxHistory} most recent chats per channel, with an undo log of its own. */
    public ChannelRegistry(int maxHistory) {
        this(maxHistory, new UndoLog());
    }

    /** The retained chats per channel ({@code --max-history}). */
    public int maxHistory() {
        return maxHistory;
    }

    /** Decides a channel verb, in the contract's check order; refusals change nothing. */
    public Decision decide(ChannelCommand c, double t) {
        String id = c.channel();
        String agent = c.agent();
        LiveChannel ch = channels.get(id);
        switch (c.op()) {
            case CREATE:
                if (id.isEmpty() || id.codePointCount(0, id.length()) > MAX_ID_LENGTH) { // Python len: code points
                    return refused(id, "invalid channel id");
                }
                if (ch != null) {
                    return refused(id, "channel '" + id + "' already exists");
                }
                if (channels.size() >= MAX_CHANNELS) {
                    return refused(id, "channel registry is full");
                }
                if (owned.getOrDefault(agent, 0) >= MAX_OWNED_PER_AGENT) {
                    return refused(id, "cannot create '" + id + "': you already own " + MAX_OWNED_PER_AGENT
                            + " channels");
                }
                return done(id, "created channel '" + id + "'", List.of(agent),
                        new ChannelEvent(t, c.op(), id, agent, null, c.label()));
            case INVITE: {
                if (ch == null || !ch.owner.equals(agent)) {
                    return refused(id, "cannot invite to '" + id + "': no such channel or you are not its owner");
                }
                String invitee = c.invitee();
                if (invitee == null || invitee.isEmpty()
                        || invitee.codePointCount(0, invitee.length()) > MAX_INVITEE_CODE_POINTS) {
                    return refused(id, "invalid invitee");
                }
                if (ch.members.contains(invitee)) {
                    return refused(id, "'" + invitee + "' is already a member of '" + id + "'");
                }
                if (ch.invites.contains(invitee)) {
                    return refused(id, "'" + invitee + "' is already invited to '" + id + "'");
                }
                if (ch.roster() >= MAX_ROSTER) {
                    return refused(id, "cannot invite to '" + id + "': it already holds " + MAX_ROSTER
                            + " members and invitees");
                }
                return done(id, "invited '" + invitee + "' to '" + id + "'",
                        ch.members.contains(agent) ? ch.members : List.of(),
                        new ChannelEvent(t, c.op(), id, agent, invitee, null));
            }
            case JOIN: {
                if (ch != null && ch.members.contains(agent)) {
                    return refused(id, "already a member of '" + id + "'");
                }
                if (ch == null || !(ch.owner.equals(agent) || ch.invites.contains(agent))) {
                    return refused(id, "cannot join '" + id + "': no such channel or you were not invited");
                }
                TreeSet<String> after = new TreeSet<>(ch.members);
                after.add(agent);
                return done(id, "joined '" + id + "'", after, new ChannelEvent(t, c.op(), id, agent, null, null));
            }
            case LEAVE:
                if (ch == null) {
                    return refused(id, "channel '" + id + "' does not exist");
                }
                if (!ch.members.contains(agent)) {
                    return refused(id, "not a member of '" + id + "'");
                }
                return done(id, "left '" + id + "'", List.of(), new ChannelEvent(t, c.op(), id, agent, null, null));
            default:
                throw new IllegalArgumentException("unknown channel op " + c.op());
        }
    }

    private static Decision refused(String id, String message) {
        return new Decision(new ChannelReply(id, false, message, List.of()), List.of());
    }

    private static Decision done(String id, String message, java.util.Collection<String> members,
            ChannelEvent event) {
        return new Decision(new ChannelReply(id, true, message, new ArrayList<>(new TreeSet<>(members))),
                List.of(event));
    }

    /** The one path by which channels change, live and on replay; each change is recorded for undo. */
    public void apply(CoordinationEvent event) {
        if (event instanceof ChannelEvent e) {
            applyChannel(e);
        } else if (event instanceof ChatEvent chat && chat.channel() != null) {
            String id = PythonWhitespace.strip(chat.channel());
            LiveChannel ch = channels.get(id);
            if (ch != null) {
                append(ch, chat.frameJson());
                // the count bound, then the character bound (the written channel's oldest first, its newest stays)
                while (ch.history.size() > maxHistory || (historyChars > maxHistoryChars && ch.history.size() > 1)) {
                    dropOldest(ch);
                }
                keepWithinChars(id);
            }
        }
    }

    private void applyChannel(ChannelEvent e) {
        LiveChannel ch = channels.get(e.channel());
        switch (e.op()) {
            case CREATE:
                if (ch == null) {
                    LiveChannel created = new LiveChannel(e.channel(), e.agent(), e.label());
                    created.members.add(e.agent());
                    channels.put(e.channel(), created);
                    undo.record(() -> channels.remove(e.channel()));
                    countOwned(e.agent(), 1);
                }
                break;
            case INVITE:
                if (ch != null && e.invitee() != null) {
                    add(ch.invites, e.invitee());
                }
                break;
            case JOIN:
                if (ch != null) {
                    remove(ch.invites, e.agent()); // an invite is one-shot
                    add(ch.members, e.agent());
                }
                break;
            case LEAVE:
                if (ch != null) {
                    remove(ch.members, e.agent());
                    if (ch.members.isEmpty()) {
                        delete(ch); // the last member out deletes the channel, and its id is free again (A1.1)
                    }
                }
                break;
            default:
                throw new IllegalArgumentException("unknown channel op " + e.op());
        }
    }

    private void add(java.util.Set<String> set, String name) {
        if (set.add(name)) {
            undo.record(() -> set.remove(name));
        }
    }

    private void remove(java.util.Set<String> set, String name) {
        if (set.remove(name)) {
            undo.record(() -> set.add(name));
        }
    }

    /** Removes the channel; the undo puts it back in its creation-order place, history and all. */
    private void delete(LiveChannel ch) {
        undo.removeInPlace(channels, ch.id);
        countOwned(ch.owner, -1);
        long chars = ch.historyChars;
        historyChars -= chars;
        undo.record(() -> historyChars += chars);
    }

    private void countOwned(String owner, int delta) {
        owned.merge(owner, delta, (a, b) -> a + b == 0 ? null : a + b);
        undo.record(() -> owned.merge(owner, -delta, (a, b) -> a + b == 0 ? null : a + b));
    }

    private void append(LiveChannel ch, String frame) {
        ch.history.addLast(frame);
        ch.historyChars += frame.length();
        historyChars += frame.length();
        undo.record(() -> {
            ch.history.removeLast();
            ch.historyChars -= frame.length();
            historyChars -= frame.length();
        });
    }

    private void dropOldest(LiveChannel ch) {
        String frame = ch.history.removeFirst();
        ch.historyChars -= frame.length();
        historyChars -= frame.length();
        undo.record(() -> {
            ch.history.addFirst(frame);
            ch.historyChars += frame.length();
            historyChars += frame.length();
        });
    }

    /**
     * When the written channel alone cannot bring the histories within {@link #MAX_HISTORY_CHARS}
     * (it is down to its newest chat), drops the oldest chats of the other channel holding the most
     * characters (the smallest id of equals) until they fit or it is empty, then of the next.
     */
    private void keepWithinChars(String written) {
        while (historyChars > maxHistoryChars) {
            LiveChannel victim = null;
            for (LiveChannel ch : channels.values()) {
                long c = ch.historyChars;
                if (!ch.id.equals(written) && c > 0 && (victim == null || c > victim.historyChars
                        || (c == victim.historyChars && ch.id.compareTo(victim.id) < 0))) {
                    victim = ch;
                }
            }
            if (victim == null) {
                return; // the newest chat alone is over the bound: it stays, as in the public history
            }
            while (!victim.history.isEmpty() && historyChars > maxHistoryChars) {
                dropOldest(victim);
            }
        }
    }

    /** The channel {@code id} (trimmed), if it exists: a copy, safe to hand to another thread. */
    public Optional<Channel> channel(String id) {
        LiveChannel ch = id == null ? null : channels.get(PythonWhitespace.strip(id));
        return Optional.ofNullable(ch == null ? null : ch.image());
    }

    /**
     * The current members of {@code id} (trimmed), empty when it does not exist: a read-only view
     * of the live set, for a decision on the writer thread only (no copy per channel chat).
     */
    public SortedSet<String> members(String id) {
        LiveChannel ch = id == null ? null : channels.get(PythonWhitespace.strip(id));
        return ch == null ? Collections.emptySortedSet() : Collections.unmodifiableSortedSet(ch.members);
    }

    /** True when {@code agent} is a current member of {@code id} (trimmed). */
    public boolean isMember(String id, String agent) {
        LiveChannel ch = id == null ? null : channels.get(PythonWhitespace.strip(id));
        return ch != null && ch.members.contains(agent);
    }

    /** The sorted ids of the channels {@code agent} is a member of. */
    public List<String> channelsOf(String agent) {
        SortedSet<String> out = new TreeSet<>();
        channels.values().forEach(ch -> {
            if (ch.members.contains(agent)) {
                out.add(ch.id);
            }
        });
        return List.copyOf(out);
    }

    /** The number of channels. */
    public int size() {
        return channels.size();
    }

    /** Every channel, in creation order, as immutable copies (the image of a snapshot). */
    public List<Channel> image() {
        List<Channel> out = new ArrayList<>(channels.size());
        channels.values().forEach(ch -> out.add(ch.image()));
        return out;
    }

    /** Loads an image into this empty registry; histories are cut to this registry's bound. */
    public void restore(List<Channel> image) {
        if (!channels.isEmpty()) {
            throw new IllegalStateException("restore needs an empty channel registry");
        }
        for (Channel ch : image) {
            if (channels.size() >= MAX_CHANNELS) {
                break;
            }
            LiveChannel live = new LiveChannel(ch.id(), ch.owner(), ch.label());
            live.members.addAll(ch.members());
            live.invites.addAll(ch.invites());
            List<String> h = ch.history();
            for (String frame : h.subList(Math.max(0, h.size() - maxHistory), h.size())) {
                live.history.addLast(frame);
                live.historyChars += frame.length();
            }
            channels.put(ch.id(), live);
            owned.merge(ch.owner(), 1, Integer::sum);
            historyChars += live.historyChars;
        }
    }
}
