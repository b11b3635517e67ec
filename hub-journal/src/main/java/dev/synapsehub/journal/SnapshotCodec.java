package dev.synapsehub.journal;

import dev.synapsehub.core.board.BoardStatus;
import dev.synapsehub.core.card.PersistentCard;
import dev.synapsehub.core.board.BoardTask;
import dev.synapsehub.core.board.NoteKind;
import dev.synapsehub.core.board.ProgressNote;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.GitContext;
import dev.synapsehub.core.channel.Channel;
import dev.synapsehub.core.identity.IdentityPin;
import dev.synapsehub.core.messaging.ChatRecord;
import dev.synapsehub.core.messaging.DeadLetter;
import dev.synapsehub.core.messaging.DirectedChat;
import dev.synapsehub.core.messaging.OwedReceipt;
import dev.synapsehub.core.messaging.PendingReceipt;
import dev.synapsehub.core.resource.ResourceOffer;
import dev.synapsehub.core.state.IdempotencyLedger;
import dev.synapsehub.core.state.StateImage;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.zip.CRC32C;

/**
 * The body of a stored state snapshot ({@link #FORMAT}), binary with the primitives of
 * {@link SnapshotBytes}: the magic {@code SYNHSNAP}, the format, the snapshot header (created
 * at, carried corrupt-row count and first seq, the seq covered), the section table (count, then
 * each section's id and byte length), then the image section by section (claims, idempotency
 * ledger, board, resources, messaging, private channels, owed receipts, persistent cards,
 * identity pins, finding counts), and the magic again. Bodies of formats 1 to 7 have no table:
 * their sections follow the header directly, each format adding its own at the end.
 * Enumerations are stored by their wire spelling, not their ordinal.
 *
 * <p>Decoding is strict: a body that ends early, runs past its end, holds an unknown status, a
 * non-finite clock, a section table that does not match its sections (a wrong id, a length past
 * the body, a section that ends before or after its length) or anything an image record refuses
 * is a {@link CorruptSnapshotException};
 * start-up then falls back to an older snapshot or a full replay. The checksum (CRC-32C of the
 * whole body, {@link #crc32c}) is kept beside the body by {@link SnapshotStore}.
 */
public final class SnapshotCodec {
    /**
     * The body format this code writes; 2 adds the private channels section after messaging, 3
     * the receipt notification outbox (§8.5) after the channels, 4 the persistent capability
     * cards (§5.15) after the outbox, 5 the identity pins (contract A2) after the cards, 6 the
     * admitted-finding counts (participant memory) after the pins, 7 each live claim's path
     * identity after its git context, 8 a table of the sections' ids and lengths after the header,
     * so that they decode independently (the claims on a thread of their own).
     */
    public static final int FORMAT = 8;
    /** The newest format without a section table: its sections follow each other directly. */
    public static final int LAST_SEQUENTIAL_FORMAT = 7;
    /** The first format with a section table. */
    static final int SECTION_TABLE_FORMAT = 8;
    /**
     * The oldest body format this code still reads (format 1 predates channels, formats 1 and 2
     * the receipt outbox, formats 1 to 3 persistent cards, 1 to 4 identity pins, 1 to 5 finding
     * counts, 1 to 6 path identities: they hold none).
     */
    public static final int OLDEST_FORMAT = 1;

    /**
     * How many count-prefixed sections a body of {@code format} carries after the channels: 3
     * adds the owed receipts, 4 the cards, 5 the pins, 6 the finding counts (7 adds a field inside
     * each live claim, not a section). An empty state writes one zero byte for each.
     */
    static int sectionsAfterChannels(int format) {
        return Math.max(0, Math.min(format, 6) - 2);
    }
    private static final byte[] MAGIC = "SYNHSNAP".getBytes(StandardCharsets.US_ASCII);

    private SnapshotCodec() {
    }

    /** CRC-32C of a body. */
    public static long crc32c(byte[] body) {
        CRC32C crc = new CRC32C();
        crc.update(body);
        return crc.getValue();
    }

    // ------------------------------------------------------------------------------ encode

    /** The body of {@code snapshot}, in the current format. */
    public static byte[] encode(StateSnapshot snapshot) {
        return encode(snapshot, FORMAT);
    }

    /**
     * The body of {@code snapshot} in {@code format}: {@link #FORMAT} (a section table), or
     * {@link #LAST_SEQUENTIAL_FORMAT} (the same sections back to back, without the table; kept so
     * that tests can build the bodies older hubs wrote). Both hold the same bytes per section.
     */
    static byte[] encode(StateSnapshot snapshot, int format) {
        if (format != FORMAT && format != LAST_SEQUENTIAL_FORMAT) {
            throw new IllegalArgumentException("this code writes formats " + LAST_SEQUENTIAL_FORMAT + " and " + FORMAT);
        }
        StateImage image = snapshot.image();
        SnapshotBytes.Out s = new SnapshotBytes.Out();
        int[] ends = new int[Section.values().length];
        for (Section section : Section.values()) {
            section.write(s, image);
            ends[section.ordinal()] = s.size();
        }
        SnapshotBytes.Out o = new SnapshotBytes.Out();
        o.bytes(MAGIC);
        o.varint(format);
        o.f64(snapshot.createdAt());
        o.varint(snapshot.corruptRows());
        o.varint(snapshot.firstCorruptSeq());
        o.varint(image.lastSeq());
        if (format >= SECTION_TABLE_FORMAT) {
            o.varint(ends.length);
            for (Section section : Section.values()) {
                int from = section.ordinal() == 0 ? 0 : ends[section.ordinal() - 1];
                o.varint(section.id);
                o.varint(ends[section.ordinal()] - from);
            }
        }
        o.bytes(s, 0, s.size());
        o.bytes(MAGIC);
        return o.toByteArray();
    }

    private static void writeLedger(SnapshotBytes.Out o, List<IdempotencyLedger.Entry> ledger) {
        o.varint(ledger.size());
        for (IdempotencyLedger.Entry e : ledger) {
            o.str(e.key());
            o.str(e.requestDigest());
            o.str(e.response());
        }
    }

    private static void writeResources(SnapshotBytes.Out o, StateImage.Resources resources) {
        o.f64(resources.now());
        o.varint(resources.offers().size());
        for (ResourceOffer r : resources.offers()) {
            o.str(r.agent());
            o.str(r.kind());
            o.str(r.name());
            o.varint(r.capacity());
            o.str(r.meta());
            o.f64(r.offeredAt());
        }
    }

    private static void writeChannels(SnapshotBytes.Out o, List<Channel> channels) {
        o.varint(channels.size());
        for (Channel ch : channels) {
            o.str(ch.id());
            o.str(ch.owner());
            o.str(ch.label());
            strings(o, List.copyOf(ch.members()));
            strings(o, List.copyOf(ch.invites()));
            strings(o, ch.history());
        }
    }

    private static void writeOwed(SnapshotBytes.Out o, List<OwedReceipt> owed) {
        o.varint(owed.size());
        for (OwedReceipt r : owed) {
            o.f64(r.ts());
            o.str(r.sender());
            o.str(r.target());
            o.varint(r.messageId());
            o.varint(r.messageSeq());
            o.bool(r.expired());
            strings(o, r.recipients());
            o.str(r.reason());
            o.str(r.clientMsgId());
        }
    }

    private static void writeCards(SnapshotBytes.Out o, List<PersistentCard> cards) {
        o.varint(cards.size());
        for (PersistentCard c : cards) {
            o.str(c.agent());
            o.str(c.cardJson());
            o.f64(c.advertisedAt());
        }
    }

    private static void writePins(SnapshotBytes.Out o, List<IdentityPin> pins) {
        o.varint(pins.size());
        for (IdentityPin pin : pins) {
            o.str(pin.name());
            o.str(pin.keyId());
            o.str(pin.publicKey());
            o.f64(pin.pinnedAt());
        }
    }

    private static void writeFindings(SnapshotBytes.Out o, java.util.Map<String, Integer> counts) {
        o.varint(counts.size());
        for (java.util.Map.Entry<String, Integer> e : counts.entrySet()) {
            o.str(e.getKey());
            o.varint(e.getValue());
        }
    }

    private static void writeClaims(SnapshotBytes.Out o, StateImage.Claims c) {
        o.f64(c.now());
        o.varint(c.epochCounter());
        o.varint(c.orderCounter());
        o.varint(c.live().size());
        for (StateImage.Held h : c.live()) {
            Claim k = h.claim();
            o.varint(h.order());
            o.str(k.taskId());
            o.str(k.owner());
            o.str(k.principal());
            o.str(k.note());
            o.f64(k.claimedAt());
            o.f64(k.leaseExpiresAt());
            o.str(k.status().wire());
            o.str(k.dataRef());
            o.str(k.worktree());
            strings(o, k.paths());
            o.varint(k.epoch());
            o.varint(k.version());
            o.str(k.checkpoint());
            GitContext git = k.git();
            o.bool(git != null);
            if (git != null) {
                o.str(git.branch());
                o.str(git.base());
                o.str(git.autoReleaseOn());
            }
            writeIdentity(o, k.pathIdentity());
        }
        o.varint(c.retained().size());
        for (StateImage.Retained r : c.retained()) {
            o.str(r.taskId());
            o.str(r.checkpoint());
        }
    }

    private static void writeBoard(SnapshotBytes.Out o, StateImage.Board b) {
        o.varint(b.tasks().size());
        for (BoardTask t : b.tasks()) {
            o.str(t.taskId());
            o.str(t.title());
            o.str(t.description());
            strings(o, t.dependsOn());
            o.str(t.status().wire());
            o.str(t.suggestedOwner());
            o.str(t.project());
            o.varint(t.version());
            o.str(t.createdBy());
            o.f64(t.createdAt());
            o.f64(t.updatedAt());
        }
        o.varint(b.notes().size());
        for (ProgressNote n : b.notes()) {
            o.str(n.taskId());
            o.str(n.author());
            o.str(n.kind().wire());
            o.str(n.text());
            o.f64(n.postedAt());
        }
    }

    private static void writeMessaging(SnapshotBytes.Out o, StateImage.Messaging m) {
        o.varint(m.msgCounter());
        o.varint(m.history().size());
        for (ChatRecord r : m.history()) {
            o.varint(r.msgId());
            o.varint(r.seq());
            o.str(r.sender());
            o.str(r.target());
            o.str(r.channel());
            o.f64(r.ts());
            o.str(r.frameJson());
        }
        o.varint(m.deadLetters().size());
        for (DeadLetter d : m.deadLetters()) {
            o.str(d.target());
            o.varint(d.count());
            o.f64(d.lastTs());
            o.str(d.lastSender());
        }
        o.varint(m.watermarks().size());
        for (StateImage.Watermark w : m.watermarks()) {
            o.str(w.identity());
            o.varint(w.throughSeq());
        }
        o.varint(m.pending().size());
        for (StateImage.Pending p : m.pending()) {
            o.str(p.identity());
            o.varint(p.seqs().size());
            for (long seq : p.seqs()) {
                o.varint(seq);
            }
        }
        o.varint(m.pendingReceipts().size());
        for (PendingReceipt r : m.pendingReceipts()) {
            o.str(r.sender());
            o.str(r.target());
            o.varint(r.msgId());
            o.varint(r.msgSeq());
            o.str(r.clientMsgId());
        }
        o.varint(m.directed().size());
        for (DirectedChat d : m.directed()) {
            o.varint(d.seq());
            o.varint(d.msgId());
            o.str(d.sender());
            o.str(d.target());
            o.str(d.channel());
            o.str(d.clientMsgId());
        }
    }

    private static void strings(SnapshotBytes.Out o, List<String> values) {
        o.varint(values.size());
        for (String v : values) {
            o.str(v);
        }
    }

    // ------------------------------------------------------------------------------ decode

    /**
     * Decodes a body written by {@link #encode} or by an older hub; a body with a section table
     * has its claims decoded on a second thread while this one decodes the rest.
     */
    public static StateSnapshot decode(byte[] body) throws CorruptSnapshotException {
        return decode(body, SnapshotCodec::onOwnThread);
    }

    /** As {@link #decode(byte[])}, with the claims section of a sectioned body run by {@code claimsRunner}. */
    static StateSnapshot decode(byte[] body, Executor claimsRunner) throws CorruptSnapshotException {
        return decode(body, claimsRunner, null);
    }

    /**
     * As {@link #decode(byte[])}, handing the claims to {@code claimsSink} as they are decoded
     * (on the claims' own thread for a sectioned body, else on this one); the image returned
     * then holds {@link #HANDED_OFF} for its claims. Null: the image holds them.
     */
    static StateSnapshot decode(byte[] body, ClaimsSink claimsSink) throws CorruptSnapshotException {
        return decode(body, SnapshotCodec::onOwnThread, claimsSink);
    }

    private static StateSnapshot decode(byte[] body, Executor claimsRunner, ClaimsSink claimsSink)
            throws CorruptSnapshotException {
        SnapshotBytes.In in = new SnapshotBytes.In(body);
        try {
            if (!Arrays.equals(in.bytes(MAGIC.length), MAGIC)) {
                throw new CorruptSnapshotException("not a snapshot body (bad magic)");
            }
            long format = in.varint();
            if (format < OLDEST_FORMAT || format > FORMAT) {
                throw new CorruptSnapshotException("snapshot format " + format + " is not " + OLDEST_FORMAT + " to "
                        + FORMAT);
            }
            double createdAt = in.finite("created_at");
            long corrupt = in.varint();
            long firstCorrupt = in.varint();
            long lastSeq = in.varint();
            Parts parts = new Parts();
            parts.claimsSink = claimsSink;
            if (format >= SECTION_TABLE_FORMAT) {
                readSectioned(body, in, format, claimsRunner, parts);
            } else {
                readSequential(in, format, parts);
            }
            StateImage.Messaging m = parts.messaging;
            StateImage.Messaging messaging = new StateImage.Messaging(m.msgCounter(), m.history(), m.deadLetters(),
                    m.watermarks(), m.pending(), m.pendingReceipts(), m.directed(), parts.owed);
            return new StateSnapshot(createdAt, corrupt, firstCorrupt, new StateImage(lastSeq, parts.claims,
                    parts.ledger, parts.board, parts.resources, messaging, parts.channels, parts.cards, parts.pins,
                    parts.findingCounts));
        } catch (RuntimeException e) {
            // an image record refused a value (a null where none is allowed, a bad list)
            throw new CorruptSnapshotException("undecodable snapshot body: " + e, e);
        }
    }

    /** Formats 1 to 7: the sections back to back, each format adding its own at the end. */
    private static void readSequential(SnapshotBytes.In in, long format, Parts parts) throws CorruptSnapshotException {
        for (Section section : Section.values()) {
            if (format >= section.since) {
                section.read(in, format, parts);
            }
        }
        if (!Arrays.equals(in.bytes(MAGIC.length), MAGIC) || !in.atEnd()) {
            throw new CorruptSnapshotException("the body does not end where its sections do");
        }
    }

    /**
     * Format 8 and up: a table of every section's id and length, then the sections. Each is
     * decoded from its own slice and must end exactly where the table says; the claims (most of
     * a large body) are decoded by {@code claimsRunner} while this thread decodes the rest.
     */
    private static void readSectioned(byte[] body, SnapshotBytes.In in, long format, Executor claimsRunner,
                                      Parts parts) throws CorruptSnapshotException {
        Section[] sections = Section.values();
        int n = in.count("sections");
        if (n != sections.length) {
            throw new CorruptSnapshotException("the section table lists " + n + " sections, format " + format
                    + " has " + sections.length);
        }
        int[] from = new int[n];
        int[] to = new int[n];
        long offset = 0;
        for (int i = 0; i < n; i++) {
            long id = in.varint();
            long length = in.varint();
            if (id != sections[i].id) {
                throw new CorruptSnapshotException("section " + (i + 1) + " of the table has id " + id + ", not "
                        + sections[i].id + " (" + sections[i].label + ")");
            }
            if (length < 1 || length > body.length) {
                throw new CorruptSnapshotException(sections[i].label + " section length " + length
                        + " is outside the body");
            }
            from[i] = (int) offset;
            offset += length;
            to[i] = (int) Math.min(offset, body.length);
        }
        int start = in.position();
        if (offset != (long) body.length - start - MAGIC.length) {
            throw new CorruptSnapshotException("the section table covers " + offset + " bytes, the body holds "
                    + ((long) body.length - start - MAGIC.length));
        }
        SnapshotBytes.In tail = new SnapshotBytes.In(body, start + (int) offset, body.length);
        if (!Arrays.equals(tail.bytes(MAGIC.length), MAGIC)) {
            throw new CorruptSnapshotException("the body does not end where its sections do");
        }
        int claims = Section.CLAIMS.ordinal();
        CompletableFuture<Void> claimsDone = new CompletableFuture<>();
        claimsRunner.execute(() -> {
            try {
                readSection(sections[claims], body, start + from[claims], start + to[claims], format, parts);
                claimsDone.complete(null);
            } catch (Throwable t) {
                claimsDone.completeExceptionally(t);
            }
        });
        CorruptSnapshotException rest = null;
        try {
            for (int i = 0; i < n; i++) {
                if (i != claims) {
                    readSection(sections[i], body, start + from[i], start + to[i], format, parts);
                }
            }
        } catch (CorruptSnapshotException e) {
            rest = e;
        }
        try {
            claimsDone.join(); // also orders the claims thread's writes to parts before our reads
        } catch (CompletionException e) {
            // both finished: report the first damaged section in body order, whichever thread was quicker
            Throwable cause = e.getCause();
            if (cause instanceof CorruptSnapshotException c) {
                throw c;
            } else if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException("decoding the claims failed: " + cause, cause);
        }
        if (rest != null) {
            throw rest;
        }
    }

    private static void readSection(Section section, byte[] body, int from, int to, long format, Parts parts)
            throws CorruptSnapshotException {
        SnapshotBytes.In in = new SnapshotBytes.In(body, from, to);
        try {
            section.read(in, format, parts);
        } catch (CorruptSnapshotException e) {
            throw new CorruptSnapshotException(section.label + " section: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new CorruptSnapshotException(section.label + " section: undecodable: " + e, e);
        }
        if (!in.atEnd()) {
            throw new CorruptSnapshotException(section.label + " section ends at byte " + in.position()
                    + ", its table entry at byte " + to);
        }
    }

    /** Runs {@code task} on a thread of its own (decoding is start-up work, once per start). */
    private static void onOwnThread(Runnable task) {
        Thread t = new Thread(task, "snapshot-decode-claims");
        t.setDaemon(true);
        t.start();
    }

    /** The decoded sections, filled one field per section (possibly from two threads, joined before use). */
    private static final class Parts {
        /** Where the claims go as they are decoded; null: into {@link #claims}. */
        ClaimsSink claimsSink;
        StateImage.Claims claims;
        List<IdempotencyLedger.Entry> ledger;
        StateImage.Board board;
        StateImage.Resources resources;
        StateImage.Messaging messaging;
        List<Channel> channels = new ArrayList<>();
        List<OwedReceipt> owed = List.of();
        List<PersistentCard> cards = new ArrayList<>();
        List<IdentityPin> pins = new ArrayList<>();
        java.util.Map<String, Integer> findingCounts = new java.util.LinkedHashMap<>();
    }

    /**
     * The sections of a body, in body order, with the table id a sectioned body gives each and
     * the format that added it (older bodies hold none of a later section: they predate it).
     */
    private enum Section {
        CLAIMS(1, "claims", 1),
        IDEMPOTENCY(2, "idempotency", 1),
        BOARD(3, "board", 1),
        RESOURCES(4, "resources", 1),
        MESSAGING(5, "messaging", 1),
        CHANNELS(6, "channels", 2),
        OWED_RECEIPTS(7, "owed receipts", 3),
        CARDS(8, "persistent cards", 4),
        PINS(9, "identity pins", 5),
        FINDINGS(10, "finding counts", 6);

        final int id;
        final String label;
        final int since;

        Section(int id, String label, int since) {
            this.id = id;
            this.label = label;
            this.since = since;
        }

        void write(SnapshotBytes.Out o, StateImage image) {
            switch (this) {
                case CLAIMS -> writeClaims(o, image.claims());
                case IDEMPOTENCY -> writeLedger(o, image.idempotency());
                case BOARD -> writeBoard(o, image.board());
                case RESOURCES -> writeResources(o, image.resources());
                case MESSAGING -> writeMessaging(o, image.messaging());
                case CHANNELS -> writeChannels(o, image.channels());
                case OWED_RECEIPTS -> writeOwed(o, image.messaging().owedReceipts());
                case CARDS -> writeCards(o, image.cards());
                case PINS -> writePins(o, image.pins());
                case FINDINGS -> writeFindings(o, image.findingCounts());
                default -> throw new AssertionError(this);
            }
        }

        void read(SnapshotBytes.In in, long format, Parts parts) throws CorruptSnapshotException {
            switch (this) {
                case CLAIMS -> {
                    if (parts.claimsSink == null) {
                        CollectedClaims collected = new CollectedClaims();
                        readClaims(in, format, collected);
                        parts.claims = collected.image();
                    } else {
                        readClaims(in, format, parts.claimsSink);
                        parts.claims = HANDED_OFF;
                    }
                }
                case IDEMPOTENCY -> parts.ledger = readLedger(in);
                case BOARD -> parts.board = readBoard(in);
                case RESOURCES -> parts.resources = readResources(in);
                case MESSAGING -> parts.messaging = readMessaging(in);
                case CHANNELS -> parts.channels = readChannels(in);
                case OWED_RECEIPTS -> parts.owed = readOwed(in);
                case CARDS -> parts.cards = readCards(in);
                case PINS -> parts.pins = readPins(in);
                case FINDINGS -> parts.findingCounts = readFindings(in);
                default -> throw new AssertionError(this);
            }
        }
    }

    private static List<IdempotencyLedger.Entry> readLedger(SnapshotBytes.In in) throws CorruptSnapshotException {
        int keys = in.count("idempotency");
        List<IdempotencyLedger.Entry> ledger = new ArrayList<>(keys);
        for (int i = 0; i < keys; i++) {
            ledger.add(new IdempotencyLedger.Entry(in.text("key"), in.text("request_digest"), in.text("response")));
        }
        return ledger;
    }

    private static StateImage.Resources readResources(SnapshotBytes.In in) throws CorruptSnapshotException {
        double resourcesNow = in.f64();
        int offers = in.count("offers");
        List<ResourceOffer> offerList = new ArrayList<>(offers);
        for (int i = 0; i < offers; i++) {
            offerList.add(new ResourceOffer(in.text("agent"), in.text("kind"), in.text("name"),
                    (int) Math.min(Integer.MAX_VALUE, in.varint()), in.text("meta"), in.finite("offered_at")));
        }
        return new StateImage.Resources(resourcesNow, offerList);
    }

    private static List<Channel> readChannels(SnapshotBytes.In in) throws CorruptSnapshotException {
        int n = in.count("channels");
        List<Channel> channels = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            channels.add(new Channel(in.text("channel id"), in.text("channel owner"), in.str(),
                    new java.util.TreeSet<>(strings(in)), new java.util.TreeSet<>(strings(in)), strings(in)));
        }
        return channels;
    }

    private static List<OwedReceipt> readOwed(SnapshotBytes.In in) throws CorruptSnapshotException {
        int n = in.count("owed receipts");
        List<OwedReceipt> owed = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            owed.add(new OwedReceipt(in.finite("owed ts"), in.text("owed sender"), in.str(), in.varint(),
                    in.varint(), in.bool(), strings(in), in.text("owed reason"), in.str()));
        }
        return owed;
    }

    private static List<PersistentCard> readCards(SnapshotBytes.In in) throws CorruptSnapshotException {
        int n = in.count("persistent cards");
        List<PersistentCard> cards = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            cards.add(new PersistentCard(in.text("card agent"), in.text("card"), in.finite("advertised_at")));
        }
        return cards;
    }

    private static List<IdentityPin> readPins(SnapshotBytes.In in) throws CorruptSnapshotException {
        int n = in.count("identity pins");
        List<IdentityPin> pins = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            pins.add(new IdentityPin(in.text("pin name"), in.text("pin key id"), in.text("pin public key"),
                    in.finite("pinned_at")));
        }
        return pins;
    }

    private static java.util.Map<String, Integer> readFindings(SnapshotBytes.In in) throws CorruptSnapshotException {
        java.util.Map<String, Integer> findingCounts = new java.util.LinkedHashMap<>();
        int n = in.count("finding counts");
        for (int i = 0; i < n; i++) {
            String actor = in.text("finding actor");
            long admitted = in.varint();
            if (admitted < 1 || admitted > Integer.MAX_VALUE || findingCounts.put(actor, (int) admitted) != null) {
                throw new CorruptSnapshotException("finding count " + admitted + " for '" + actor + "'");
            }
        }
        return findingCounts;
    }

    private static void writeIdentity(SnapshotBytes.Out o, dev.synapsehub.core.scope.PathIdentity id) {
        o.bool(id != null);
        if (id != null) {
            o.str(id.worktreePath());
            o.str(id.worktreeObjectId());
            o.str(id.filesystemNamespace());
            o.bool(id.caseSensitive());
            o.varint(id.rows().size());
            for (dev.synapsehub.core.scope.PathIdentity.Row r : id.rows()) {
                o.str(r.gitPath());
                o.str(r.filesystemPath());
                o.str(r.objectId());
                o.str(r.objectScope());
            }
        }
    }

    private static dev.synapsehub.core.scope.PathIdentity readIdentity(SnapshotBytes.In in)
            throws CorruptSnapshotException {
        if (!in.bool()) {
            return null;
        }
        String worktree = in.text("worktree_path");
        String wtId = in.text("worktree_object_id");
        String ns = in.text("filesystem_namespace");
        boolean caseSensitive = in.bool();
        int n = in.count("path identity rows");
        List<dev.synapsehub.core.scope.PathIdentity.Row> rows = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            rows.add(new dev.synapsehub.core.scope.PathIdentity.Row(in.text("git_path"), in.text("filesystem_path"),
                    in.text("object_id"), in.text("object_scope")));
        }
        return new dev.synapsehub.core.scope.PathIdentity(worktree, wtId, ns, caseSensitive, rows);
    }

    private static void readClaims(SnapshotBytes.In in, long format, ClaimsSink sink) throws CorruptSnapshotException {
        double now = in.f64();
        long epochCounter = in.varint();
        long orderCounter = in.varint();
        int n = in.count("claims");
        sink.start(now, epochCounter, orderCounter, n);
        for (int i = 0; i < n; i++) {
            long order = in.varint();
            String taskId = in.text("task_id");
            String owner = in.shared("owner");
            String principal = in.shared("principal");
            String note = in.text("note");
            double claimedAt = in.finite("claimed_at");
            double leaseExpiresAt = in.finite("lease_expires_at");
            String status = in.shared("status");
            ClaimStatus parsed = ClaimStatus.fromWire(status)
                    .orElseThrow(() -> new CorruptSnapshotException("unknown claim status " + status));
            String dataRef = in.text("data_ref");
            String worktree = in.shared("worktree");
            List<String> paths = sharedStrings(in);
            long epoch = in.varint();
            long version = in.varint();
            String checkpoint = in.text("checkpoint");
            GitContext git = in.bool() ? new GitContext(in.text("branch"), in.text("base"), in.text("auto_release_on"))
                    : null;
            dev.synapsehub.core.scope.PathIdentity identity = format >= 7 ? readIdentity(in) : null;
            sink.held(new Claim(taskId, owner, principal, note, claimedAt, leaseExpiresAt, parsed,
                    dataRef, worktree, paths, epoch, version, checkpoint, git, identity), order);
        }
        int r = in.count("retained checkpoints");
        List<StateImage.Retained> retained = new ArrayList<>(r);
        for (int i = 0; i < r; i++) {
            retained.add(new StateImage.Retained(in.text("task_id"), in.text("checkpoint")));
        }
        sink.end(retained);
    }

    /**
     * Receives a body's claims section while it is decoded, on the decoding thread, instead of
     * the decoded image holding the claims: a start-up loads them into the registry meanwhile.
     * After a failed decode the sink may have seen part of the section.
     */
    interface ClaimsSink {
        /** The section's clock and counters, and how many live claims follow. */
        void start(double now, long epochCounter, long orderCounter, int live);

        /** One live claim with its insertion order, in image order. */
        void held(Claim claim, long order);

        /** The retained checkpoints: the section is complete. */
        void end(List<StateImage.Retained> retained);
    }

    /** The image's claims part when they went to a {@link ClaimsSink} (empty: they are not here). */
    static final StateImage.Claims HANDED_OFF = new StateImage.Claims(0, 0, 0, List.of(), List.of());

    /** Collects the claims section into an image part (every decode without a sink). */
    private static final class CollectedClaims implements ClaimsSink {
        private double now;
        private long epochCounter;
        private long orderCounter;
        private List<StateImage.Held> live;
        private List<StateImage.Retained> retained;

        @Override
        public void start(double now, long epochCounter, long orderCounter, int n) {
            this.now = now;
            this.epochCounter = epochCounter;
            this.orderCounter = orderCounter;
            this.live = new ArrayList<>(n);
        }

        @Override
        public void held(Claim claim, long order) {
            live.add(new StateImage.Held(claim, order));
        }

        @Override
        public void end(List<StateImage.Retained> retained) {
            this.retained = retained;
        }

        StateImage.Claims image() {
            return new StateImage.Claims(now, epochCounter, orderCounter, live, retained);
        }
    }

    private static StateImage.Board readBoard(SnapshotBytes.In in) throws CorruptSnapshotException {
        int n = in.count("board tasks");
        List<BoardTask> tasks = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String taskId = in.text("task_id");
            String title = in.text("title");
            String description = in.text("description");
            List<String> deps = strings(in);
            String status = in.text("status");
            BoardStatus parsed = BoardStatus.fromWire(status)
                    .orElseThrow(() -> new CorruptSnapshotException("unknown board status " + status));
            tasks.add(new BoardTask(taskId, title, description, deps, parsed, in.text("suggested_owner"),
                    in.text("project"), in.varint(), in.text("created_by"), in.finite("created_at"),
                    in.finite("updated_at")));
        }
        int m = in.count("notes");
        List<ProgressNote> notes = new ArrayList<>(m);
        for (int i = 0; i < m; i++) {
            String taskId = in.text("task_id");
            String author = in.text("author");
            String kind = in.text("kind");
            NoteKind parsed = NoteKind.fromWire(kind)
                    .orElseThrow(() -> new CorruptSnapshotException("unknown note kind " + kind));
            notes.add(new ProgressNote(taskId, author, parsed, in.text("text"), in.finite("posted_at")));
        }
        return new StateImage.Board(tasks, notes);
    }

    private static StateImage.Messaging readMessaging(SnapshotBytes.In in) throws CorruptSnapshotException {
        long msgCounter = in.varint();
        int h = in.count("history");
        List<ChatRecord> history = new ArrayList<>(h);
        for (int i = 0; i < h; i++) {
            history.add(new ChatRecord(in.varint(), in.varint(), in.text("sender"), in.str(), in.str(),
                    in.finite("ts"), in.text("frame")));
        }
        int d = in.count("dead letters");
        List<DeadLetter> dead = new ArrayList<>(d);
        for (int i = 0; i < d; i++) {
            dead.add(new DeadLetter(in.text("target"), in.varint(), in.finite("last_ts"), in.text("last_sender")));
        }
        int w = in.count("watermarks");
        List<StateImage.Watermark> marks = new ArrayList<>(w);
        for (int i = 0; i < w; i++) {
            marks.add(new StateImage.Watermark(in.text("identity"), in.varint()));
        }
        int p = in.count("pending identities");
        List<StateImage.Pending> pending = new ArrayList<>(p);
        for (int i = 0; i < p; i++) {
            String identity = in.text("identity");
            int seqs = in.count("pending seqs");
            List<Long> list = new ArrayList<>(seqs);
            for (int k = 0; k < seqs; k++) {
                list.add(in.varint());
            }
            pending.add(new StateImage.Pending(identity, list));
        }
        int r = in.count("pending receipts");
        List<PendingReceipt> receipts = new ArrayList<>(r);
        for (int i = 0; i < r; i++) {
            receipts.add(new PendingReceipt(in.text("sender"), in.str(), in.varint(), in.varint(), in.str()));
        }
        int c = in.count("directed chats");
        List<DirectedChat> directed = new ArrayList<>(c);
        for (int i = 0; i < c; i++) {
            directed.add(new DirectedChat(in.varint(), in.varint(), in.text("sender"), in.str(), in.str(), in.str()));
        }
        return new StateImage.Messaging(msgCounter, history, dead, marks, pending, receipts, directed);
    }

    /**
     * Like {@link #strings}, each item shared with equal ones read before (a claim's paths), as an
     * unmodifiable list: {@code Claim} keeps it as it is instead of copying it.
     */
    private static List<String> sharedStrings(SnapshotBytes.In in) throws CorruptSnapshotException {
        int n = in.count("strings");
        switch (n) {
            case 0:
                return List.of();
            case 1:
                return List.of(in.shared("list item"));
            case 2:
                String first = in.shared("list item");
                return List.of(first, in.shared("list item"));
            default:
                String[] out = new String[n];
                for (int i = 0; i < n; i++) {
                    out[i] = in.shared("list item");
                }
                return List.of(out);
        }
    }

    private static List<String> strings(SnapshotBytes.In in) throws CorruptSnapshotException {
        int n = in.count("strings");
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(in.text("list item"));
        }
        return out;
    }
}
