package dev.synapsehub.core.channel;

import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.ChannelCommand;
import dev.synapsehub.core.event.ChannelEvent;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.reply.ChannelReply;
import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
    /** A channel id is 1–200 characters after trimming (A1.1). */
    public static final int MAX_ID_LENGTH = 200;

    /**
     * Characters of chat frames all channels' histories keep at most together (about 64 MiB of
     * Latin-1 text, as the public history): the count bound alone let one agent's 4,096 channels
     * of 10,000 chats of up to a megabyte each hold far more than any heap. Deterministic, so a
     * replay keeps the same chats.
     */
    public static final long MAX_HISTORY_CHARS = 64L * 1024 * 1024;

    private final int maxHistory;
    private final long maxHistoryChars;
    private final LinkedHashMap<String, Channel> channels = new LinkedHashMap<>(); // creation order
    private final UndoLog undo;
    /** Characters of every channel's history together. */
    private long historyChars;
    /** Characters of each channel's history (kept beside it: summing a history on every chat would cost its size). */
    private final Map<String, Long> chars = new java.util.HashMap<>();

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
        Channel ch = channels.get(id);
        switch (c.op()) {
            case CREATE:
                if (id.isEmpty() || id.length() > MAX_ID_LENGTH) {
                    return refused(id, "invalid channel id");
                }
                if (ch != null) {
                    return refused(id, "channel '" + id + "' already exists");
                }
                if (channels.size() >= MAX_CHANNELS) {
                    return refused(id, "channel registry is full");
                }
                return done(id, "created channel '" + id + "'", List.of(agent),
                        new ChannelEvent(t, c.op(), id, agent, null, c.label()));
            case INVITE: {
                if (ch == null || !ch.owner().equals(agent)) {
                    return refused(id, "cannot invite to '" + id + "': no such channel or you are not its owner");
                }
                String invitee = c.invitee();
                if (invitee == null || invitee.isEmpty()) {
                    return refused(id, "invalid invitee");
                }
                if (ch.members().contains(invitee)) {
                    return refused(id, "'" + invitee + "' is already a member of '" + id + "'");
                }
                if (ch.invites().contains(invitee)) {
                    return refused(id, "'" + invitee + "' is already invited to '" + id + "'");
                }
                return done(id, "invited '" + invitee + "' to '" + id + "'",
                        ch.members().contains(agent) ? ch.members() : List.of(),
                        new ChannelEvent(t, c.op(), id, agent, invitee, null));
            }
            case JOIN: {
                if (ch != null && ch.members().contains(agent)) {
                    return refused(id, "already a member of '" + id + "'");
                }
                if (ch == null || !(ch.owner().equals(agent) || ch.invites().contains(agent))) {
                    return refused(id, "cannot join '" + id + "': no such channel or you were not invited");
                }
                TreeSet<String> after = new TreeSet<>(ch.members());
                after.add(agent);
                return done(id, "joined '" + id + "'", after, new ChannelEvent(t, c.op(), id, agent, null, null));
            }
            case LEAVE:
                if (ch == null) {
                    return refused(id, "channel '" + id + "' does not exist");
                }
                if (!ch.members().contains(agent)) {
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

    /** The one path by which channels change, live and on replay. */
    public void apply(CoordinationEvent event) {
        if (event instanceof ChannelEvent e) {
            applyChannel(e);
        } else if (event instanceof ChatEvent chat && chat.channel() != null) {
            String id = chat.channel().strip();
            Channel ch = channels.get(id);
            if (ch != null) {
                List<String> h = new ArrayList<>(ch.history());
                h.add(chat.frameJson());
                long kept = charsOf(id) + chat.frameJson().length();
                long others = historyChars - charsOf(id);
                int from = 0;
                // the count bound, then the character bound (the written channel's oldest first, its newest stays)
                while (h.size() - from > maxHistory || (others + kept > maxHistoryChars && h.size() - from > 1)) {
                    kept -= h.get(from).length();
                    from++;
                }
                put(id, ch.withHistory(h.subList(from, h.size())), kept);
                keepWithinChars(id);
            }
        }
    }

    private void applyChannel(ChannelEvent e) {
        Channel ch = channels.get(e.channel());
        switch (e.op()) {
            case CREATE:
                if (ch == null) {
                    put(e.channel(), new Channel(e.channel(), e.agent(), e.label(), new TreeSet<>(List.of(e.agent())),
                            new TreeSet<>(), List.of()));
                }
                break;
            case INVITE:
                if (ch != null && e.invitee() != null) {
                    TreeSet<String> inv = new TreeSet<>(ch.invites());
                    inv.add(e.invitee());
                    put(e.channel(), ch.withInvites(inv));
                }
                break;
            case JOIN:
                if (ch != null) {
                    TreeSet<String> inv = new TreeSet<>(ch.invites());
                    inv.remove(e.agent()); // an invite is one-shot
                    TreeSet<String> mem = new TreeSet<>(ch.members());
                    mem.add(e.agent());
                    put(e.channel(), ch.withInvites(inv).withMembers(mem));
                }
                break;
            case LEAVE:
                if (ch != null) {
                    TreeSet<String> mem = new TreeSet<>(ch.members());
                    mem.remove(e.agent());
                    // the last member out deletes the channel, and its id is free again (A1.1)
                    put(e.channel(), mem.isEmpty() ? null : ch.withMembers(mem));
                }
                break;
            default:
                throw new IllegalArgumentException("unknown channel op " + e.op());
        }
    }

    /**
     * When the written channel alone cannot bring the histories within {@link #MAX_HISTORY_CHARS}
     * (it is down to its newest chat), drops the oldest chats of the other channel holding the most
     * characters (the smallest id of equals) until they fit or it is empty, then of the next.
     */
    private void keepWithinChars(String written) {
        while (historyChars > maxHistoryChars) {
            String victim = null;
            long most = 0;
            for (Map.Entry<String, Long> e : chars.entrySet()) {
                long c = e.getValue();
                if (!e.getKey().equals(written) && c > 0
                        && (c > most || (c == most && e.getKey().compareTo(victim) < 0))) {
                    victim = e.getKey();
                    most = c;
                }
            }
            if (victim == null) {
                return; // the newest chat alone is over the bound: it stays, as in the public history
            }
            Channel from = channels.get(victim);
            List<String> h = from.history();
            long kept = most;
            int cut = 0;
            while (cut < h.size() && historyChars - (most - kept) > maxHistoryChars) {
                kept -= h.get(cut).length();
                cut++;
            }
            put(victim, from.withHistory(h.subList(cut, h.size())), kept);
        }
    }

    private long charsOf(String id) {
        return chars.getOrDefault(id, 0L);
    }

    /** As {@link #put(String, Channel, long)} for a change that leaves the history as it is. */
    private void put(String id, Channel value) {
        put(id, value, value == null ? 0 : charsOf(id));
    }

    /** Sets (null: removes) channel {@code id}, whose history holds {@code valueChars} characters; undone with the batch. */
    private void put(String id, Channel value, long valueChars) {
        // a removal is undone in place (creation order), so it is recorded before the rest
        Channel before = value == null ? undo.removeInPlace(channels, id) : channels.put(id, value);
        Long beforeChars = value == null ? chars.remove(id) : chars.put(id, valueChars);
        long delta = (value == null ? 0 : valueChars) - (beforeChars == null ? 0 : beforeChars);
        historyChars += delta;
        undo.record(() -> {
            if (value != null) {
                if (before == null) {
                    channels.remove(id);
                } else {
                    channels.put(id, before); // an existing key keeps its place
                }
            }
            if (beforeChars == null) {
                chars.remove(id);
            } else {
                chars.put(id, beforeChars);
            }
            historyChars -= delta;
        });
    }

    /** The channel {@code id} (trimmed), if it exists. */
    public Optional<Channel> channel(String id) {
        return Optional.ofNullable(id == null ? null : channels.get(id.strip()));
    }

    /** True when {@code agent} is a current member of {@code id} (trimmed). */
    public boolean isMember(String id, String agent) {
        Channel ch = id == null ? null : channels.get(id.strip());
        return ch != null && ch.members().contains(agent);
    }

    /** The sorted ids of the channels {@code agent} is a member of. */
    public List<String> channelsOf(String agent) {
        SortedSet<String> out = new TreeSet<>();
        channels.values().forEach(ch -> {
            if (ch.members().contains(agent)) {
                out.add(ch.id());
            }
        });
        return List.copyOf(out);
    }

    /** The number of channels. */
    public int size() {
        return channels.size();
    }

    /** Every channel, in creation order. */
    public List<Channel> image() {
        return List.copyOf(channels.values());
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
            List<String> h = ch.history();
            Channel kept = h.size() > maxHistory ? ch.withHistory(h.subList(h.size() - maxHistory, h.size())) : ch;
            channels.put(ch.id(), kept);
            long n = 0;
            for (String frame : kept.history()) {
                n += frame.length();
            }
            chars.put(ch.id(), n);
            historyChars += n;
        }
    }
}
