package dev.synapsehub.core.state;

import dev.synapsehub.core.card.PersistentCard;
import dev.synapsehub.core.channel.Channel;
import dev.synapsehub.core.board.BoardTask;
import dev.synapsehub.core.board.ProgressNote;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.identity.IdentityPin;
import dev.synapsehub.core.messaging.ChatRecord;
import dev.synapsehub.core.messaging.DeadLetter;
import dev.synapsehub.core.messaging.DirectedChat;
import dev.synapsehub.core.messaging.OwedReceipt;
import dev.synapsehub.core.messaging.PendingReceipt;
import dev.synapsehub.core.resource.ResourceOffer;

import java.util.List;

/**
 * Everything {@link CoordinationState} is authoritative for, as plain immutable data: what a
 * state snapshot stores, so that restoring it and replaying the journal after {@link #lastSeq}
 * rebuilds exactly the state a full replay rebuilds. Every ordered collection is listed in the
 * order that decides what is evicted or reported first, because that order is state too.
 *
 * @param lastSeq the journal seq of the last event the state applied
 * @param channels private channels with their retained chats, in creation order
 * @param cards persistent capability cards, least recently registered first
 * @param pins identity pins, in the order pinned
 * @param findingCounts admitted findings per name (participant memory, A12 PM5), in first-admission order
 * @param governance unresolved namespace partitions and quarantined peers (carried by mesh snapshots of
 *        format 4; a single hub's snapshot codec leaves it out, as a single hub does not govern claims by it)
 */
public record StateImage(long lastSeq, Claims claims, List<IdempotencyLedger.Entry> idempotency, Board board,
                         Resources resources, Messaging messaging, List<Channel> channels,
                         List<PersistentCard> cards, List<IdentityPin> pins, java.util.Map<String, Integer> findingCounts,
                         dev.synapsehub.core.governance.NamespaceGovernance.Image governance) {

    /** An image without governance (single-hub snapshots, mesh snapshots of format 3 and older). */
    public StateImage(long lastSeq, Claims claims, List<IdempotencyLedger.Entry> idempotency, Board board,
                      Resources resources, Messaging messaging, List<Channel> channels,
                      List<PersistentCard> cards, List<IdentityPin> pins, java.util.Map<String, Integer> findingCounts) {
        this(lastSeq, claims, idempotency, board, resources, messaging, channels, cards, pins, findingCounts, null);
    }

    /** This image with {@code governance} in place of its own. */
    public StateImage withGovernance(dev.synapsehub.core.governance.NamespaceGovernance.Image governance) {
        return new StateImage(lastSeq, claims, idempotency, board, resources, messaging, channels, cards, pins,
                findingCounts, governance);
    }

    public StateImage {
        governance = governance == null ? dev.synapsehub.core.governance.NamespaceGovernance.Image.EMPTY : governance;
        idempotency = List.copyOf(idempotency);
        channels = channels == null ? List.of() : List.copyOf(channels);
        cards = cards == null ? List.of() : List.copyOf(cards);
        pins = pins == null ? List.of() : List.copyOf(pins);
        findingCounts = findingCounts == null ? java.util.Map.of()
                : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(findingCounts));
    }

    /** An image without persistent cards, identity pins or finding counts (snapshots of format 3 and older). */
    public StateImage(long lastSeq, Claims claims, List<IdempotencyLedger.Entry> idempotency, Board board,
                      Resources resources, Messaging messaging, List<Channel> channels) {
        this(lastSeq, claims, idempotency, board, resources, messaging, channels, List.of(), List.of(),
                java.util.Map.of());
    }

    /** An image without private channels. */
    public StateImage(long lastSeq, Claims claims, List<IdempotencyLedger.Entry> idempotency, Board board,
                      Resources resources, Messaging messaging) {
        this(lastSeq, claims, idempotency, board, resources, messaging, List.of(), List.of(), List.of(), java.util.Map.of());
    }

    /**
     * The claim registry.
     *
     * @param now the registry's clock (expiry has run up to it)
     * @param epochCounter the highest epoch issued
     * @param orderCounter the last insertion order handed out
     * @param live live claims with their insertion order, ascending by order
     * @param retained retained checkpoints of lapsed leases, oldest first (the next dropped)
     */
    public record Claims(double now, long epochCounter, long orderCounter, List<Held> live, List<Retained> retained) {
        public Claims {
            live = List.copyOf(live);
            retained = List.copyOf(retained);
        }
    }

    /** A live claim and its insertion order (the order scope conflicts are reported in). */
    public record Held(Claim claim, long order) {
    }

    /** A checkpoint retained for the next claimant of a task whose lease lapsed. */
    public record Retained(String taskId, String checkpoint) {
    }

    /**
     * The task board.
     *
     * @param tasks every task, by id
     * @param notes retained progress notes, oldest first
     */
    public record Board(List<BoardTask> tasks, List<ProgressNote> notes) {
        public Board {
            tasks = List.copyOf(tasks);
            notes = List.copyOf(notes);
        }
    }

    /**
     * Resource offers.
     *
     * @param now the registry's clock (expiry has run up to it)
     */
    public record Resources(double now, List<ResourceOffer> offers) {
        public Resources {
            offers = List.copyOf(offers);
        }
    }

    /**
     * Chat and directed delivery. The LRU-bounded collections are least recently written first.
     *
     * @param msgCounter the highest msg_id issued
     * @param history retained chats, oldest first
     * @param deadLetters dead-letter entries, least recently updated first
     * @param watermarks receiver watermarks, least recently advanced first
     * @param pending the pending projection per identity (ascending seqs), least recently touched first
     * @param pendingReceipts negative directed receipts awaiting an ack, oldest first
     * @param directed remembered directed chats, oldest first
     * @param owedReceipts the receipt notification outbox, oldest first
     */
    public record Messaging(long msgCounter, List<ChatRecord> history, List<DeadLetter> deadLetters,
                            List<Watermark> watermarks, List<Pending> pending, List<PendingReceipt> pendingReceipts,
                            List<DirectedChat> directed, List<OwedReceipt> owedReceipts) {
        /** An image without owed receipts (snapshots of format 2 and older hold none). */
        public Messaging(long msgCounter, List<ChatRecord> history, List<DeadLetter> deadLetters,
                         List<Watermark> watermarks, List<Pending> pending, List<PendingReceipt> pendingReceipts,
                         List<DirectedChat> directed) {
            this(msgCounter, history, deadLetters, watermarks, pending, pendingReceipts, directed, List.of());
        }

        public Messaging {
            owedReceipts = owedReceipts == null ? List.of() : List.copyOf(owedReceipts);
            history = List.copyOf(history);
            deadLetters = List.copyOf(deadLetters);
            watermarks = List.copyOf(watermarks);
            pending = List.copyOf(pending);
            pendingReceipts = List.copyOf(pendingReceipts);
            directed = List.copyOf(directed);
        }
    }

    /** An identity's receiver watermark. */
    public record Watermark(String identity, long throughSeq) {
    }

    /** The directed chat seqs pending for an identity, ascending. */
    public record Pending(String identity, List<Long> seqs) {
        public Pending {
            seqs = List.copyOf(seqs);
        }
    }
}
