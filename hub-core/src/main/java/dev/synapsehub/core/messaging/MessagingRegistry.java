package dev.synapsehub.core.messaging;

import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.claim.Decision;
import dev.synapsehub.core.command.AckCommand;
import dev.synapsehub.core.command.AgentActivityCommand;
import dev.synapsehub.core.command.ChatCommand;
import dev.synapsehub.core.command.MailboxCursorCommand;
import dev.synapsehub.core.command.MessagingCommand;
import dev.synapsehub.core.command.ReceiptsDeliveredCommand;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.DeadLetterClearedEvent;
import dev.synapsehub.core.event.DeadLetterEscalationEvent;
import dev.synapsehub.core.event.DeliveryReceiptDeferredEvent;
import dev.synapsehub.core.event.DeliveryReceiptExpiredEvent;
import dev.synapsehub.core.event.DeliveryReceiptImmediateEvent;
import dev.synapsehub.core.event.DeliveryReceiptRequestedEvent;
import dev.synapsehub.core.event.MailboxWatermarkEvent;
import dev.synapsehub.core.event.ReceiptsDeliveredEvent;
import dev.synapsehub.core.reply.ActivityReply;
import dev.synapsehub.core.reply.ChatReply;
import dev.synapsehub.core.reply.MailboxReply;
import dev.synapsehub.core.state.StateImage;
import dev.synapsehub.core.undo.UndoLog;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Chat and directed delivery state (seed 000 §7, wire contract §8): the bounded history, the
 * msg_id counter, the dead-letter ledger, receiver watermarks with the pending projection, and
 * pending deferred receipts, and the receipt notification outbox. {@link #decide} changes
 * nothing; {@link #apply} is the only mutation, live and on replay. Both are told the journal position by the state, because
 * mailbox facts are in journal seqs. Not thread-safe: one writer owns it.
 */
public final class MessagingRegistry {
    /** The expired receipt's reason. */
    public static final String EVICTED = "pending_window_evicted";

    private final MessagingLimits limits;
    private final UndoLog undo;
    private final ChatHistory history;
    private final DeadLetterLedger deadLetters;
    private final Mailbox mailbox;
    private final StampedLru<Long, PendingReceipt> pendingReceipts;
    private final StampedLru<Long, DirectedChat> directed;
    private final ReceiptOutbox outbox;
    private long msgCounter;

    /** A registry with the given bounds, recording its changes in {@code undo}. */
    public MessagingRegistry(MessagingLimits limits, UndoLog undo) {
        this.limits = limits;
        this.undo = undo;
        this.history = new ChatHistory(limits.maxHistory(), undo);
        this.deadLetters = new DeadLetterLedger(limits, undo);
        this.mailbox = new Mailbox(limits, undo);
        this.pendingReceipts = new StampedLru<>(limits.pendingReceipts(), undo);
        this.directed = new StampedLru<>(limits.maxHistory(), undo);
        this.outbox = new ReceiptOutbox(limits.pendingReceipts(), undo);
    }

    /** A registry with the given bounds and an undo log of its own. */
    public MessagingRegistry(MessagingLimits limits) {
        this(limits, new UndoLog());
    }

    /** A registry with the contract defaults. */
    public MessagingRegistry() {
        this(MessagingLimits.DEFAULTS);
    }

    /** The bounds in force. */
    public MessagingLimits limits() {
        return limits;
    }

    // ---------------------------------------------------------------------------------------
    // Decide

    /**
     * Decides a messaging command at hub time {@code t}, with {@code position} the journal seq
     * of the last applied event (the next event will be {@code position + 1}).
     */
    public Decision decide(MessagingCommand command, double t, long position) {
        if (command instanceof ChatCommand c) {
            return decideChat(c, t, position);
        } else if (command instanceof AckCommand a) {
            return decideAck(a, t, position);
        } else if (command instanceof MailboxCursorCommand m) {
            return decideCursor(m, t, position);
        } else if (command instanceof AgentActivityCommand a) {
            boolean clear = deadLetters.current(a.agent(), t) != null;
            return new Decision(new ActivityReply(a.agent(), clear),
                    clear ? List.of(new DeadLetterClearedEvent(t, a.agent())) : List.of());
        } else if (command instanceof ReceiptsDeliveredCommand d) {
            List<String> owed = new ArrayList<>();
            for (String id : d.notificationIds()) {
                if (outbox.owes(d.agent(), id) && !owed.contains(id)) {
                    owed.add(id);
                }
            }
            return new Decision(new ActivityReply(d.agent(), !owed.isEmpty()),
                    owed.isEmpty() ? List.of() : List.of(new ReceiptsDeliveredEvent(t, d.agent(), owed)));
        }
        throw new IllegalArgumentException("unknown messaging command " + command.getClass().getName());
    }

    private Decision decideChat(ChatCommand c, double t, long position) {
        String sender = c.agent();
        String target = c.target();
        String channel = PythonWhitespace.isBlank(c.channel()) ? null : c.channel();
        boolean isDirected = AddressMatcher.isDirected(target);
        long msgId = msgCounter + 1;
        long seq = position + 1;
        ChatStamp stamp = new ChatStamp(msgId, t, ClientFields.clientTimestamp(c.clientTimestamp()),
                ClientFields.clientMsgId(c.clientMsgId()));
        RecipientSet recipients = RecipientSet.resolve(target, sender, c.online());
        boolean delivered = isDirected ? !recipients.live().isEmpty() : !recipients.matched().isEmpty();
        String reason = delivered ? "" : recipients.matched().isEmpty() ? "no_online_recipient" : "no_live_recipient";
        boolean deadLettered = isDirected && recipients.live().isEmpty();
        ReceiptVerdict verdict = new ReceiptVerdict(delivered, isDirected ? recipients.live() : recipients.matched(),
                recipients.matched(), isDirected ? recipients.stale() : List.of(), reason, deadLettered,
                recipients.wakeCapabilities());
        List<String> addressees = isDirected && channel == null ? addressees(target, sender, recipients) : List.of();
        String frame = c.renderer().render(stamp);

        List<CoordinationEvent> events = new ArrayList<>();
        events.add(new ChatEvent(t, msgId, sender, target, channel, deadLettered, addressees, frame));
        List<DeliveryReceiptExpiredEvent> expired = new ArrayList<>();
        if (c.receiptRequested() && isDirected) {
            events.add(new DeliveryReceiptRequestedEvent(t, sender, target, msgId, seq, stamp.clientMsgId()));
            if (!delivered && pendingReceipts.size() >= limits.pendingReceipts()) {
                PendingReceipt evicted = pendingReceipts.get(pendingReceipts.eldest());
                DeliveryReceiptExpiredEvent e = new DeliveryReceiptExpiredEvent(t, evicted.sender(), evicted.target(),
                        evicted.msgId(), evicted.msgSeq(), EVICTED, evicted.clientMsgId());
                events.add(e);
                expired.add(e);
            }
            events.add(new DeliveryReceiptImmediateEvent(t, sender, target, msgId, seq, verdict, stamp.clientMsgId()));
        }
        DeadLetterEscalationEvent escalation = null;
        if (deadLettered && limits.escalationThreshold() > 0) {
            String key = PythonWhitespace.strip(target);
            DeadLetter entry = deadLetters.current(key, t);
            long count = (entry == null ? 0 : entry.count()) + 1;
            if (count % limits.escalationThreshold() == 0) {
                escalation = new DeadLetterEscalationEvent(t, key, count, sender, limits.escalationThreshold());
                events.add(escalation);
            }
        }
        if (deadLetters.current(sender, t) != null && !(deadLettered && PythonWhitespace.strip(target).equals(sender))) {
            events.add(new DeadLetterClearedEvent(t, sender));
        }
        return new Decision(new ChatReply(stamp, sender, target, frame, isDirected, c.receiptRequested(), verdict,
                escalation, expired), events);
    }

    /**
     * A member's chat in a private channel (contract A1.4, A1.5): stamped like any chat; its
     * recipients are the other members bound now (by exact name); never dead-lettered, never
     * pending in a mailbox, no receipt events (its receipt is immediate and not journaled).
     */
    public Decision decideChannelChat(ChatCommand c, double t, long position, java.util.Collection<String> members) {
        String sender = c.agent();
        String id = PythonWhitespace.strip(c.channel());
        long msgId = msgCounter + 1;
        ChatStamp stamp = new ChatStamp(msgId, t, ClientFields.clientTimestamp(c.clientTimestamp()),
                ClientFields.clientMsgId(c.clientMsgId()));
        TreeSet<String> online = new TreeSet<>();
        java.util.Map<String, String> declared = new java.util.HashMap<>();
        for (OnlineAgent a : c.online()) {
            declared.put(a.name(), a.wakeCapability());
            if (!a.name().equals(sender) && members.contains(a.name())) {
                online.add(a.name());
            }
        }
        // A7: a member's own declaration unless unknown, else its pane waiter's, else its -rx's
        java.util.Map<String, String> wake = new java.util.TreeMap<>();
        for (String m : online) {
            String w = declared.getOrDefault(m, "unknown");
            for (String sidecar : List.of(m + "-pane-rx", m + "-rx")) {
                if ("unknown".equals(w)) {
                    w = declared.getOrDefault(sidecar, "unknown");
                }
            }
            wake.put(m, w);
        }
        List<String> recipients = List.copyOf(online);
        boolean delivered = !recipients.isEmpty();
        ReceiptVerdict verdict = new ReceiptVerdict(delivered, recipients, recipients, List.of(),
                delivered ? "" : "no_online_recipient", false, wake);
        String frame = c.renderer().render(stamp);
        List<CoordinationEvent> events = List.of(new ChatEvent(t, msgId, sender, c.target(), id, false, List.of(), frame));
        TreeSet<String> others = new TreeSet<>(members);
        others.remove(sender);
        return new Decision(new ChatReply(stamp, sender, c.target(), frame, false, c.receiptRequested(), verdict,
                null, List.of(), List.copyOf(others)), events);
    }

    /** Literal target parts and matched logical recipients, without the sender, sorted. */
    private static List<String> addressees(String target, String sender, RecipientSet recipients) {
        TreeSet<String> out = new TreeSet<>(recipients.matched());
        for (String part : AddressMatcher.parts(target)) {
            if (AddressMatcher.isLiteral(part)) {
                out.add(part);
            }
        }
        out.remove(sender);
        return List.copyOf(out);
    }

    private Decision decideAck(AckCommand a, double t, long position) {
        String identity = a.effectiveIdentity();
        long seq = a.seq();
        long before = mailbox.watermark(identity);
        if (seq <= 0 || seq > position) {
            return new Decision(new MailboxReply(identity, before, false, null), List.of());
        }
        DirectedChat chat = directed.get(seq);
        if (chat == null && a.storedChat() != null && a.storedChat().seq() == seq) {
            chat = a.storedChat();
        }
        List<CoordinationEvent> events = new ArrayList<>();
        boolean advanced = false;
        if (chat != null && chat.channel() == null && addressedTo(chat.target(), chat.sender(), identity, a.roles())
                && seq > before) {
            events.add(new MailboxWatermarkEvent(t, identity, seq, MailboxWatermarkEvent.Source.ACK));
            advanced = true;
        }
        DeliveryReceiptDeferredEvent deferred = null;
        PendingReceipt receipt = pendingReceipts.get(seq);
        if (receipt != null && addressedTo(receipt.target(), receipt.sender(), identity, a.roles())) {
            deferred = new DeliveryReceiptDeferredEvent(t, receipt.sender(), receipt.target(), receipt.msgId(),
                    receipt.msgSeq(), List.of(identity), identity, receipt.clientMsgId());
            events.add(deferred);
        }
        return new Decision(new MailboxReply(identity, advanced ? seq : before, advanced, deferred), events);
    }

    /** A directed target addressing {@code identity}, which did not send it. */
    private static boolean addressedTo(String target, String sender, String identity, List<String> roles) {
        return AddressMatcher.isDirected(target) && !identity.equals(sender)
                && AddressMatcher.addresses(target, identity, roles);
    }

    private Decision decideCursor(MailboxCursorCommand m, double t, long position) {
        String identity = m.effectiveIdentity();
        long before = mailbox.watermark(identity);
        long through = Math.min(m.sinceSeq(), position);
        if (through <= before) {
            return new Decision(new MailboxReply(identity, before, false, null), List.of());
        }
        return new Decision(new MailboxReply(identity, through, true, null),
                List.of(new MailboxWatermarkEvent(t, identity, through, MailboxWatermarkEvent.Source.CURSOR)));
    }

    // ---------------------------------------------------------------------------------------
    // Apply

    /**
     * Applies one event committed (or about to be) under journal seq {@code seq}: the only way
     * messaging state changes. Events of other families are ignored.
     */
    public void apply(CoordinationEvent event, long seq) {
        if (event instanceof ChatEvent e) {
            applyChat(e, seq);
        } else if (event instanceof DeliveryReceiptImmediateEvent e) {
            if (!e.verdict().delivered()) {
                pendingReceipts.put(e.messageSeq(),
                        new PendingReceipt(e.sender(), e.target(), e.messageId(), e.messageSeq(), e.clientMsgId()));
            }
        } else if (event instanceof DeliveryReceiptDeferredEvent e) {
            pendingReceipts.remove(e.messageSeq());
            outbox.owe(OwedReceipt.of(e));
        } else if (event instanceof DeliveryReceiptExpiredEvent e) {
            pendingReceipts.remove(e.messageSeq());
            outbox.owe(OwedReceipt.of(e));
        } else if (event instanceof ReceiptsDeliveredEvent e) {
            for (String id : e.notificationIds()) {
                outbox.settle(e.sender(), id);
            }
        } else if (event instanceof MailboxWatermarkEvent e) {
            mailbox.advance(e.identity(), Math.min(e.throughSeq(), seq));
        } else if (event instanceof DeadLetterClearedEvent e) {
            deadLetters.clear(e.name());
        }
        // delivery_receipt_requested and dead_letter_escalation are bookkeeping and audit only.
    }

    private void applyChat(ChatEvent e, long seq) {
        if (e.msgId() > msgCounter) {
            long previous = msgCounter;
            msgCounter = e.msgId();
            undo.record(() -> msgCounter = previous);
        }
        if (e.channel() == null) {
            history.append(new ChatRecord(e.msgId(), seq, e.sender(), e.target(), null, e.ts(), e.frameJson()));
        }
        deadLetters.forgetStale(e.ts());
        if (e.deadLettered() && e.target() != null) {
            deadLetters.record(PythonWhitespace.strip(e.target()), e.sender(), e.ts());
        }
        if (e.channel() == null && AddressMatcher.isDirected(e.target())) {
            directed.put(seq, new DirectedChat(seq, e.msgId(), e.sender(), e.target(), null, null));
            for (String identity : e.addressees()) {
                mailbox.addPending(identity, seq);
            }
        }
    }

    /** Everything this registry holds, as data, every bounded collection in eviction order. */
    public StateImage.Messaging image() {
        return new StateImage.Messaging(msgCounter, history.all(), deadLetters.image(), mailbox.watermarkImage(),
                mailbox.pendingImage(), new ArrayList<>(pendingReceipts.view().values()),
                new ArrayList<>(directed.view().values()), outbox.all());
    }

    /** Loads an image into this empty registry; every bound in force is re-applied (INV-RR-2). */
    public void restore(StateImage.Messaging image) {
        if (msgCounter != 0 || history.size() > 0 || pendingReceipts.size() > 0 || directed.size() > 0
                || outbox.size() > 0) {
            throw new IllegalStateException("restore needs an empty registry");
        }
        msgCounter = image.msgCounter();
        for (ChatRecord record : image.history()) {
            history.append(record);
        }
        deadLetters.restore(image.deadLetters());
        mailbox.restore(image.watermarks(), image.pending());
        for (PendingReceipt receipt : image.pendingReceipts()) {
            pendingReceipts.put(receipt.msgSeq(), receipt);
        }
        for (DirectedChat chat : image.directed()) {
            directed.put(chat.seq(), chat);
        }
        for (OwedReceipt receipt : image.owedReceipts()) {
            outbox.owe(receipt);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Reads

    /** The highest msg_id issued or replayed; the next chat gets one more. */
    public long msgCounter() {
        return msgCounter;
    }

    /** {@code history_request}: the last {@code max(1, limit)} retained chats, all when null. */
    public List<ChatRecord> history(Integer limit) {
        return history.last(limit, r -> true);
    }

    /** {@code history_request} with a visibility filter (private directed mode), applied before the limit. */
    public List<ChatRecord> history(Integer limit, Predicate<ChatRecord> visible) {
        return history.last(limit, visible);
    }

    /** {@code resume_request}: retained chats with {@code msg_id > since}, in order. */
    public List<ChatRecord> resume(long since) {
        return history.since(since, r -> true);
    }

    /** {@code resume_request} with a visibility filter (private directed mode). */
    public List<ChatRecord> resume(long since, Predicate<ChatRecord> visible) {
        return history.since(since, visible);
    }

    /** Number of retained chats. */
    public int historySize() {
        return history.size();
    }

    /** {@code state_snapshot.dead_letters} at hub time {@code t}: count desc, then target. */
    public List<DeadLetter> deadLetters(double t) {
        return deadLetters.snapshot(t);
    }

    /** The dead letters at hub time {@code t} counted, as {@link #deadLetters} lists them. */
    public DeadLetterTally deadLetterTally(double t) {
        return deadLetters.tally(t);
    }

    /** The identity's receiver watermark (0 if none). */
    public long watermark(String identity) {
        return mailbox.watermark(identity);
    }

    /** Every remembered watermark, sorted by identity. */
    public Map<String, Long> watermarks() {
        return mailbox.watermarks();
    }

    /**
     * Identities dropped from the mailbox while directed chats were still pending for them (so
     * those chats no longer hold journal retention), since this state was built, replay included.
     */
    public long mailboxDroppedWithPending() {
        return mailbox.droppedWithPending();
    }

    /**
     * The seqs of the directed chats pending for {@code identity} above {@code after}, ascending
     * (what {@link #mailboxPending} counts): a mailbox replay reads these rows beyond its scan window.
     */
    public List<Long> mailboxPendingAfter(String identity, long after) {
        return mailbox.pendingAfter(identity, after);
    }

    /** {@code who_snapshot.mailbox_pending}: identity to pending directed messages, sorted. */
    public Map<String, Integer> mailboxPending() {
        return mailbox.pendingCounts();
    }

    /** Pending deferred receipts, oldest first. */
    public List<PendingReceipt> pendingReceipts() {
        return List.copyOf(pendingReceipts.view().values());
    }

    /** Receipts owed in the notification outbox (§8.5), oldest first. */
    public List<OwedReceipt> owedReceipts() {
        return outbox.all();
    }

    /** The remembered directed chat at {@code seq}, if still retained. */
    public Optional<DirectedChat> directedChat(long seq) {
        return Optional.ofNullable(directed.get(seq));
    }
}
