package dev.synapsehub.journal.migration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.event.ChatEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.DeliveryReceiptImmediateEvent;
import dev.synapsehub.core.event.IdempotencyRecordedEvent;
import dev.synapsehub.core.event.IdentityPinEvent;
import dev.synapsehub.core.event.LedgerProgressEvent;
import dev.synapsehub.core.event.MailboxWatermarkEvent;
import dev.synapsehub.core.event.ResourceOfferedEvent;
import dev.synapsehub.core.journal.JournalException;
import dev.synapsehub.core.journal.JournaledEvent;
import dev.synapsehub.core.messaging.AddressMatcher;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.journal.EventCodec;
import dev.synapsehub.journal.JournalRefusedException;
import dev.synapsehub.journal.JournalSchema;
import dev.synapsehub.journal.ReplayStats;
import dev.synapsehub.journal.SqliteJournal;
import dev.synapsehub.journal.WriterLock;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * {@code synapse-hub import}: reads a database written by another v2 hub (wire contract
 * §12.1–§12.4) and writes it as this hub's journal, replaying to the same state by the rules
 * of §12.5.
 *
 * <ul>
 *   <li>Every event of a kind this hub keeps is carried under its own {@code seq}, so the
 *       numbers agents hold ({@code chat.seq}, {@code since_seq}, {@code ack.seq}) keep their
 *       meaning and replay rebuilds live claims with their epochs, versions and checkpoints
 *       (the epoch counter continues above the largest epoch in the log), the board,
 *       resources, chat history and msg_id counter, mailbox watermarks, pending deferred
 *       receipts and idempotency records. Rows of the {@code operations} table without a
 *       matching {@code idempotency} event are appended after the last seq.</li>
 *   <li>What the source's log lacks is reconstructed and reported: a reference chat row has
 *       no addressee list, so its mailbox addressees are the literal names of its target
 *       (roles and patterns cannot be recovered); a directed chat counts as a dead letter when
 *       its receipt verdict said so and its target showed no activity afterwards (the
 *       reference clears a dead letter when the target acts, without journaling it).</li>
 *   <li>Kinds this hub does not keep are skipped with the reason; tables and sidecar files
 *       it does not use are named.</li>
 * </ul>
 *
 * The source is read from a private copy and never opened for writing. The journal is built
 * in a temporary file beside the target, replayed to check it, and only then moved into place
 * (after moving an existing target aside, if the caller asked for that). A refusal writes
 * nothing.
 */
public final class ReferenceImport {
    /**
     * What to import where.
     *
     * @param replaceExisting a target that already holds history is moved aside to
     *     {@code <target>.replaced-<time>} instead of refusing the import
     * @param skipCorrupt rows that cannot be decoded are skipped (and reported) instead of
     *     refusing the import
     * @param identityPins the source hub's pin file (A2.5), whose pins are appended as
     *     {@code identity_pin} events and whose reclaim audit rows are then carried; null for none
     */
    public record Options(Path source, Path target, boolean dryRun, boolean replaceExisting, boolean skipCorrupt,
            Path identityPins) {
        public Options {
            if (source == null || target == null) {
                throw new IllegalArgumentException("both the source and the target are required");
            }
        }

        /** Without a pin file. */
        public Options(Path source, Path target, boolean dryRun, boolean replaceExisting, boolean skipCorrupt) {
            this(source, target, dryRun, replaceExisting, skipCorrupt, null);
        }
    }

    /** Kinds of §12.3 this hub does not keep, with the reason given in the report. */
    private static final Map<String, String> NOT_KEPT = Map.ofEntries(
            Map.entry("operator_relay", "audit record of operator relay, not implemented by this hub"),
            Map.entry("identity_pin_reclaim", "audit record of a reclaim of the reference's pin file, which is not "
                    + "imported without --identity-pins"),
            Map.entry("dead_letter_forwarding", "audit record of multi-hub forwarding; changes no state"),
            Map.entry("multihub_partition", "multi-hub audit record; changes no state"),
            Map.entry("multihub_heal", "multi-hub audit record; changes no state"),
            Map.entry("multihub_equivocation", "multi-hub audit record; changes no state"),
            Map.entry("multihub_equivocation_recovery", "multi-hub audit record; changes no state"),
            Map.entry("sandbox_run", "audit record of a feature this hub does not implement"));
    private static final int WRITE_BATCH = 1_000;
    private static final int CORRUPT_LISTED = 5;

    private final EventCodec codec = new EventCodec();
    private final ObjectMapper json = new ObjectMapper();
    /** The source hub's pins, appended after its log; empty without a pin file. */
    private List<IdentityPinEvent> pins = List.of();
    /** Whether a pin file was given (its reclaim audit rows are then carried). */
    private boolean pinsGiven;

    private ReferenceImport() {
    }

    /**
     * Runs the import at hub time {@code now} (leases and offers are expired against it, as a
     * hub starting on the result would).
     *
     * @throws ImportRefusedException when the source or the target is refused; nothing was written
     * @throws JournalException when writing or checking the new journal failed; the target is untouched
     */
    public static ImportReport run(Options options, double now) throws ImportRefusedException, JournalException {
        return new ReferenceImport().execute(options, now);
    }

    private ImportReport execute(Options o, double now) throws ImportRefusedException, JournalException {
        Path source = o.source().toAbsolutePath().normalize();
        Path target = o.target().toAbsolutePath().normalize();
        if (source.equals(target)) {
            throw new ImportRefusedException(ImportRefusedException.Side.TARGET,
                    "the source and the target are the same file; nothing was written");
        }
        checkTargetPath(target);
        // The writer lock is what marks a journal as served by a hub: held from the first look at
        // the target until the new file is in place, so no hub writes the file being moved aside
        // and none can start on it half-way. A dry run writes nothing, so it only looks.
        if (o.dryRun()) {
            refuseIfServed(target);
            return execute(o, now, source, target);
        }
        WriterLock lock = lockTarget(target);
        try {
            return execute(o, now, source, target);
        } finally {
            lock.release();
        }
    }

    private ImportReport execute(Options o, double now, Path source, Path target)
            throws ImportRefusedException, JournalException {
        TargetState existing = inspectTarget(target);
        if (o.identityPins() != null) {
            pins = ReferencePins.read(o.identityPins());
            pinsGiven = true;
        }
        if (existing.events() > 0 && !o.replaceExisting()) {
            throw new ImportRefusedException(ImportRefusedException.Side.TARGET, target + " already holds a journal with "
                    + existing.events() + " events (last seq " + existing.lastSeq() + "); importing into it would mix two "
                    + "histories. Pass --replace-existing to move it aside (to " + target.getFileName()
                    + ".replaced-<time>) and import in its place. Nothing was written.");
        }
        Path work;
        try {
            work = Files.createTempDirectory(target.getParent(), ".synapse-import-");
        } catch (IOException e) {
            throw new ImportRefusedException(ImportRefusedException.Side.TARGET, "cannot create a working directory beside "
                    + target + ": " + e.getMessage(), e);
        }
        try (SourceDatabase src = SourceDatabase.open(source, work)) {
            ImportReport report = new ImportReport(source, target, o.dryRun());
            Facts facts = survey(src);
            if (!facts.corrupt.isEmpty() && !o.skipCorrupt()) {
                throw new ImportRefusedException(ImportRefusedException.Side.SOURCE, source + ": " + facts.corrupt.size()
                        + " event row(s) cannot be decoded: " + String.join("; ", facts.corrupt.subList(0,
                        Math.min(CORRUPT_LISTED, facts.corrupt.size()))) + (facts.corrupt.size() > CORRUPT_LISTED
                        ? "; …" : "") + ". Nothing was written. Pass --skip-corrupt to import without them.");
            }
            report.describeSource(String.format(java.util.Locale.ROOT, "v2 hub database, %,d events (seq %d..%d), "
                    + "tables %s", facts.rows, facts.rows == 0 ? 0 : facts.minSeq, facts.maxSeq, src.tables()));
            List<SourceDatabase.Operation> extraOperations = extraOperations(src, facts);
            describeLeftBehind(src, report);
            CoordinationState state = new CoordinationState();
            if (o.dryRun()) {
                report.describeTarget(existing.describe() + (existing.events() > 0 ? "; would be moved aside" : ""));
                convert(src, facts, extraOperations, report, (seq, e) -> state.apply(new JournaledEvent(seq, e)));
                state.claims().advanceTo(now);
                state.resources().advanceTo(now);
            } else {
                Path built = work.resolve("journal.db");
                long written = write(src, facts, extraOperations, report, built);
                verify(built, state, written, now);
                String aside = existing.exists() ? moveAside(target) : null;
                install(built, target);
                report.describeTarget(existing.describe() + (aside == null ? "" : "; moved aside to " + aside)
                        + "; now a synapse-hub journal (schema version " + JournalSchema.CURRENT_VERSION + ")");
            }
            report.reconstructed(facts.directedChats + " directed chat(s): mailbox addressees taken from the literal "
                    + "names in their target (role and pattern matches are not in the source log)");
            report.reconstructed(facts.deadLettered + " dead letter(s) from receipt verdicts whose target did not act "
                    + "afterwards; directed chats without a receipt carry no verdict in the source");
            report.after(state, now);
            return report;
        } finally {
            deleteTree(work);
        }
    }

    // ------------------------------------------------------------------------------ target

    /** What the target path holds now. */
    private record TargetState(boolean exists, long events, long lastSeq, String what) {
        String describe() {
            return what;
        }
    }

    /** Refuses a target path no journal can be written at, before anything (the lock file included) is created. */
    private static void checkTargetPath(Path target) throws ImportRefusedException {
        if (Files.isDirectory(target)) {
            throw targetRefused(target + " is a directory; pass a file path with --db");
        }
        if (!Files.exists(target) && (target.getParent() == null || !Files.isDirectory(target.getParent()))) {
            throw targetRefused(target + ": its directory does not exist");
        }
    }

    /** Takes the target's writer lock (as a hub would), or refuses when a running hub holds it. */
    private static WriterLock lockTarget(Path target) throws ImportRefusedException {
        refuseSecondNames(target);
        try {
            return WriterLock.acquire(target);
        } catch (JournalRefusedException held) {
            throw servedByHub(target);
        } catch (JournalException e) {
            throw targetRefused(e.getMessage() + ". Nothing was written.");
        }
    }

    private static void refuseIfServed(Path target) throws ImportRefusedException {
        refuseSecondNames(target);
        try {
            if (WriterLock.probe(target) == WriterLock.Holder.HUB) {
                throw servedByHub(target);
            }
        } catch (JournalException e) {
            throw targetRefused(e.getMessage() + ". Nothing was written.");
        }
    }

    /** A target with a second name is refused for that, not taken for one a hub holds. */
    private static void refuseSecondNames(Path target) throws ImportRefusedException {
        try {
            WriterLock.refuseSecondNames(target);
        } catch (JournalException e) {
            throw targetRefused(e.getMessage());
        }
    }

    private static ImportRefusedException servedByHub(Path target) {
        return targetRefused(target + " is in use: a running hub holds its writer lock ("
                + WriterLock.lockFile(target).getFileName() + "). Stop that hub first, then import. Nothing was written.");
    }

    private static TargetState inspectTarget(Path target) throws ImportRefusedException {
        if (!Files.exists(target)) {
            return new TargetState(false, 0, 0, target + ": new file");
        }
        try {
            if (Files.size(target) == 0) {
                return new TargetState(true, 0, 0, target + ": empty file");
            }
            if (!SqliteFiles.hasSqliteHeader(target)) {
                throw targetRefused(target + " exists and is not a journal (not SQLite); pass another --db. Nothing was "
                        + "written.");
            }
        } catch (IOException e) {
            throw targetRefused(target + ": cannot read it: " + e.getMessage());
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + target);
             Statement s = c.createStatement()) {
            int appId = SqliteFiles.applicationId(c);
            Set<String> tables = SqliteFiles.tables(c);
            if (appId == 0 && tables.isEmpty()) {
                return new TargetState(true, 0, 0, target + ": empty SQLite file");
            }
            if (appId != JournalSchema.APPLICATION_ID) {
                throw targetRefused(target + " exists and is not a synapse-hub journal (tables " + tables + "); pass "
                        + "another --db. Nothing was written.");
            }
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM events")) {
                rs.next();
                long n = rs.getLong(1);
                return new TargetState(true, n, rs.getLong(2), target + ": journal with " + n + " events");
            }
        } catch (SQLException e) {
            throw targetRefused(target + ": cannot read it (" + e.getMessage() + "); is a hub running on it? Nothing "
                    + "was written.");
        }
    }

    private static ImportRefusedException targetRefused(String message) {
        return new ImportRefusedException(ImportRefusedException.Side.TARGET, message);
    }

    private static String moveAside(Path target) throws JournalException {
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        Path aside = target.resolveSibling(target.getFileName() + ".replaced-" + stamp);
        try {
            Files.move(target, aside, StandardCopyOption.ATOMIC_MOVE);
            for (String suffix : List.of("-wal", "-shm")) {
                Path side = target.resolveSibling(target.getFileName() + suffix);
                if (Files.exists(side)) {
                    Files.move(side, aside.resolveSibling(aside.getFileName() + suffix), StandardCopyOption.ATOMIC_MOVE);
                }
            }
        } catch (IOException e) {
            throw new JournalException(target + ": cannot move it aside to " + aside + ": " + e.getMessage(), e);
        }
        return aside.toString();
    }

    private static void install(Path built, Path target) throws JournalException {
        Path wal = built.resolveSibling(built.getFileName() + "-wal");
        try {
            if (Files.exists(wal) && Files.size(wal) > 0) {
                // closing the journal checkpoints its WAL; a WAL left behind would be lost with the work directory
                throw new JournalException(built + ": the imported journal's WAL was not checkpointed; the target was "
                        + "not touched");
            }
            Files.move(built, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new JournalException("cannot move the imported journal into place at " + target + ": " + e.getMessage(),
                    e);
        }
    }

    // ------------------------------------------------------------------------------ pass 1

    /** What the first pass learns about the whole log, for decisions the second pass makes row by row. */
    private static final class Facts {
        final Map<Long, Boolean> deadLetterVerdict = new HashMap<>();
        final Map<String, Double> lastActivity = new HashMap<>();
        final Map<String, String> idempotencyDigest = new HashMap<>();
        final List<String> corrupt = new ArrayList<>();
        final Set<Long> corruptSeqs = new HashSet<>();
        long rows;
        long minSeq = Long.MAX_VALUE;
        long maxSeq;
        long directedChats;
        long deadLettered;

        void acted(String agent, double ts) {
            if (!PythonWhitespace.isBlank(agent)) {
                lastActivity.merge(PythonWhitespace.strip(agent), ts, Math::max); // keyed as targets are looked up
            }
        }
    }

    private Facts survey(SourceDatabase src) throws ImportRefusedException {
        Facts f = new Facts();
        src.forEachEvent(row -> {
            f.rows++;
            f.minSeq = Math.min(f.minSeq, row.seq());
            f.maxSeq = Math.max(f.maxSeq, row.seq());
            Optional<CoordinationEvent> decoded;
            try {
                decoded = decode(row);
            } catch (EventCodec.CorruptPayloadException e) {
                f.corrupt.add("seq " + row.seq() + " (" + row.kind() + "): " + e.getMessage());
                f.corruptSeqs.add(row.seq());
                return;
            }
            decoded.ifPresent(e -> learn(f, e));
        });
        return f;
    }

    /** Activity that clears a dead letter in the reference hub, receipt verdicts, idempotency keys. */
    private static void learn(Facts f, CoordinationEvent e) {
        if (e instanceof ChatEvent c) {
            f.acted(c.sender(), c.ts());
        } else if (e instanceof ClaimSnapshotEvent s && s.change() != ClaimSnapshotEvent.Kind.HANDOFF) {
            f.acted(s.claim().owner(), s.ts()); // a handoff's owner is its recipient, who did nothing
        } else if (e instanceof LedgerProgressEvent p) {
            f.acted(p.note().author(), p.ts());
        } else if (e instanceof ResourceOfferedEvent r) {
            f.acted(r.offer().agent(), r.ts());
        } else if (e instanceof MailboxWatermarkEvent w) {
            f.acted(w.identity(), w.ts()); // a registration or an ack
        } else if (e instanceof DeliveryReceiptImmediateEvent d) {
            f.deadLetterVerdict.put(d.messageSeq(), d.verdict().deadLettered());
        } else if (e instanceof IdempotencyRecordedEvent i) {
            f.idempotencyDigest.put(i.key(), i.requestDigest());
        }
    }

    /** Empty for a kind this hub does not keep. */
    private Optional<CoordinationEvent> decode(SourceDatabase.Row row) throws EventCodec.CorruptPayloadException {
        if (row.kind() == null || row.ts() == null) {
            throw new EventCodec.CorruptPayloadException("the row has no " + (row.kind() == null ? "kind" : "ts"));
        }
        // the reclaim audit rows are about the pin file: carried when it is imported with them
        boolean reclaimOfImportedPins = pinsGiven && "identity_pin_reclaim".equals(row.kind());
        if (!codec.knows(row.kind()) || (NOT_KEPT.containsKey(row.kind()) && !reclaimOfImportedPins)) {
            // the multi-hub audit kinds are journaled by our own federation, but another hub's
            // partitions and quarantines were about its peers, not ours: they are not carried
            return Optional.empty();
        }
        if (row.payload() == null) {
            throw new EventCodec.CorruptPayloadException("null payload");
        }
        return codec.decode(row.kind(), row.ts(), withoutNoneMembers(row.kind(), row.payload()));
    }

    /** Optional text members of a claim object that the source hub stores as null (Python None) when unset. */
    private static final Set<String> NONE_MEANS_UNSET = Set.of("note", "data_ref", "checkpoint", "quota_principal");

    /**
     * The source hub writes an unset optional text of a claim as {@code null}; our journal
     * writes it absent and reads a present null as a corrupt row. Translated here, so only the
     * import is lenient, and only about those members.
     */
    private static String withoutNoneMembers(String kind, String payload) {
        if (!CLAIM_KINDS.contains(kind) || !payload.contains("null")) {
            return payload;
        }
        try {
            JsonNode node = NONE_READER.readTree(payload);
            if (!(node instanceof com.fasterxml.jackson.databind.node.ObjectNode object)) {
                return payload;
            }
            boolean changed = false;
            for (String member : NONE_MEANS_UNSET) {
                if (object.has(member) && object.get(member).isNull()) {
                    object.remove(member);
                    changed = true;
                }
            }
            return changed ? NONE_READER.writeValueAsString(object) : payload;
        } catch (java.io.IOException notJson) {
            return payload; // the decoder reports it
        }
    }

    private static final Set<String> CLAIM_KINDS = Set.of("claim", "task_update", "checkpoint", "handoff");
    private static final ObjectMapper NONE_READER = new ObjectMapper();

    /** {@code operations} rows whose key has no {@code idempotency} event with the same digest. */
    private static List<SourceDatabase.Operation> extraOperations(SourceDatabase src, Facts f)
            throws ImportRefusedException {
        List<SourceDatabase.Operation> out = new ArrayList<>();
        for (SourceDatabase.Operation op : src.operations()) {
            if (op.key() == null || op.response() == null) {
                continue;
            }
            String digest = op.requestDigest() == null ? "" : op.requestDigest();
            if (!digest.equals(f.idempotencyDigest.get(op.key()))) {
                out.add(op);
            }
        }
        return out;
    }

    private static void describeLeftBehind(SourceDatabase src, ImportReport report) throws ImportRefusedException {
        long outbox = src.count("delivery_receipt_outbox", "delivered_at IS NULL");
        if (outbox > 0) {
            report.notCarried("delivery_receipt_outbox: " + outbox + " receipt notification(s) still owed to their "
                    + "senders; this hub keeps no durable receipt outbox, so they are not re-sent (the pending deferred "
                    + "receipts themselves are carried)");
        }
        long receipts = src.count("delivery_receipts", null);
        if (receipts > 0) {
            report.notCarried("delivery_receipts: " + receipts + " aggregate row(s); this hub derives them from the "
                    + "receipt events, which are carried");
        }
        long intents = src.count("operation_outbox", null);
        if (intents > 0) {
            report.notCarried("operation_outbox: " + intents + " evidence intent(s); not used by this hub");
        }
        long aef = src.count("aef_outbox", null);
        if (aef > 0) {
            report.notCarried("aef_outbox: " + aef + " signed-receipt row(s); not used by this hub");
        }
        for (String table : src.tables()) {
            if (!List.of("events", "operations", "operation_outbox", "delivery_receipts", "delivery_receipt_outbox",
                    "aef_outbox").contains(table)) {
                report.notCarried("table " + table + ": not part of the v2 layout this import knows; ignored");
            }
        }
        for (Path sidecar : src.sidecars()) {
            report.notCarried(sidecar.getFileName() + ": " + (sidecar.toString().endsWith(".message-auth.db")
                    ? "HMAC nonce ledger; this hub keeps replay nonces in memory, so a signed frame's nonce window "
                    + "starts afresh" : "anti-rollback checkpoint chain of the source hub; not used by this hub"));
        }
    }

    // ------------------------------------------------------------------------------ pass 2

    /** Receives each event to write with its seq, in seq order. */
    @FunctionalInterface
    private interface EventSink {
        void accept(long seq, CoordinationEvent event) throws ImportRefusedException;
    }

    private void convert(SourceDatabase src, Facts f, List<SourceDatabase.Operation> extra, ImportReport report,
            EventSink sink) throws ImportRefusedException {
        long[] pathIdentities = {0};
        src.forEachEvent(row -> {
            if (f.corruptSeqs.contains(row.seq())) {
                report.skipped(String.valueOf(row.kind()), "cannot be decoded (--skip-corrupt)");
                return;
            }
            Optional<CoordinationEvent> decoded;
            try {
                decoded = decode(row);
            } catch (EventCodec.CorruptPayloadException e) {
                throw new IllegalStateException("row " + row.seq() + " decoded in the first pass but not the second", e);
            }
            if (decoded.isEmpty()) {
                report.skipped(row.kind(), NOT_KEPT.getOrDefault(row.kind(),
                        "unknown kind, skipped as the source hub's own replay skips it"));
                return;
            }
            CoordinationEvent e = decoded.get();
            if (e instanceof ClaimSnapshotEvent s) {
                if (s.claim().pathIdentity() == null && hasPathIdentity(row.payload())) {
                    pathIdentities[0]++;
                }
                e = new ClaimSnapshotEvent(s.ts(), s.change(), normalised(s.claim()));
            } else if (e instanceof ChatEvent c) {
                e = withMailboxFacts(c, row.seq(), f);
            }
            report.carried(row.kind());
            sink.accept(row.seq(), e);
        });
        long seq = f.maxSeq;
        for (SourceDatabase.Operation op : extra) {
            double ts = op.committedAt() == null ? 0.0 : op.committedAt();
            sink.accept(++seq, new IdempotencyRecordedEvent(ts, op.key(),
                    op.requestDigest() == null ? "" : op.requestDigest(), op.response()));
            report.countAppendedIdempotency();
        }
        for (IdentityPinEvent pin : pins) {
            sink.accept(++seq, pin);
            report.countAppendedPin();
        }
        if (pathIdentities[0] > 0) {
            report.reconstructed(pathIdentities[0] + " claim snapshot(s) carried without their path_identity (not in "
                    + "the §7.7 shape this hub reads; their scopes are compared by path)");
        }
    }

    private boolean hasPathIdentity(String payload) {
        try {
            JsonNode n = json.readTree(payload);
            return n.hasNonNull("path_identity");
        } catch (IOException e) {
            return false;
        }
    }

    /** Absent texts as the empty string: reference rows may hold null where this hub holds "". */
    private static Claim normalised(Claim c) {
        return new Claim(c.taskId(), c.owner(), c.principal() == null ? c.owner() : c.principal(), orEmpty(c.note()),
                c.claimedAt(), c.leaseExpiresAt(), c.status(), orEmpty(c.dataRef()), orEmpty(c.worktree()), c.paths(),
                c.epoch(), c.version(), orEmpty(c.checkpoint()), c.git(), c.pathIdentity());
    }

    private static String orEmpty(String s) {
        return s == null ? "" : s;
    }

    /** A reference chat row gets the addressees and dead-letter flag this hub journals with each chat. */
    private static ChatEvent withMailboxFacts(ChatEvent c, long seq, Facts f) {
        boolean directed = c.channel() == null && AddressMatcher.isDirected(c.target());
        List<String> addressees = List.of();
        boolean dead = false;
        if (directed) {
            f.directedChats++;
            TreeSet<String> names = new TreeSet<>();
            for (String part : AddressMatcher.parts(c.target())) {
                if (AddressMatcher.isLiteral(part)) {
                    names.add(part);
                }
            }
            names.remove(c.sender());
            addressees = List.copyOf(names);
            String target = PythonWhitespace.strip(c.target()); // as the reference trims; Java's misses U+00A0
            dead = Boolean.TRUE.equals(f.deadLetterVerdict.get(seq))
                    && f.lastActivity.getOrDefault(target, Double.NEGATIVE_INFINITY) <= c.ts();
            if (dead) {
                f.deadLettered++;
            }
        }
        return new ChatEvent(c.ts(), c.msgId(), c.sender(), c.target(), c.channel(), dead, addressees, c.frameJson());
    }

    // ------------------------------------------------------------------------------ write

    /** Builds the journal at {@code built}: our schema, then every event under its seq, in one transaction. */
    private long write(SourceDatabase src, Facts f, List<SourceDatabase.Operation> extra, ImportReport report,
            Path built) throws ImportRefusedException, JournalException {
        SqliteJournal.open(built).close(); // creates the schema exactly as the hub does
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + built)) {
            try (Statement s = c.createStatement()) {
                s.execute("PRAGMA synchronous=FULL");
                s.execute("BEGIN IMMEDIATE");
            }
            long[] written = {0};
            try (PreparedStatement insert = c.prepareStatement(
                    "INSERT INTO events(seq, ts, kind, durability, payload) VALUES (?, ?, ?, ?, ?)")) {
                convert(src, f, extra, report, (seq, e) -> {
                    try {
                        insert.setLong(1, seq);
                        insert.setDouble(2, e.ts());
                        insert.setString(3, e.kind());
                        insert.setString(4, e.durability().name());
                        insert.setString(5, codec.encode(e));
                        insert.addBatch();
                        if (++written[0] % WRITE_BATCH == 0) {
                            insert.executeBatch();
                        }
                    } catch (SQLException ex) {
                        throw new IllegalStateException(ex);
                    }
                });
                insert.executeBatch();
            } catch (IllegalStateException e) {
                rollback(c);
                throw new JournalException(built + ": writing the imported events failed: " + e.getMessage(), e);
            }
            try (Statement s = c.createStatement()) {
                s.execute("COMMIT");
            }
            return written[0];
        } catch (SQLException e) {
            throw new JournalException(built + ": writing the imported journal failed: " + e.getMessage(), e);
        }
    }

    private static void rollback(Connection c) {
        try (Statement s = c.createStatement()) {
            s.execute("ROLLBACK");
        } catch (SQLException ignored) {
            // the write already failed; the file is discarded
        }
    }

    /** Replays the built journal as a starting hub would; it must read back every row written, cleanly. */
    private static void verify(Path built, CoordinationState state, long written, double now) throws JournalException {
        try (SqliteJournal journal = SqliteJournal.open(built)) {
            long replayed = state.replay(journal, now, n -> { });
            ReplayStats stats = journal.lastReplay();
            if (!stats.clean() || replayed != written || stats.rows() != written) {
                throw new JournalException(built + ": the imported journal does not replay as written (" + written
                        + " rows written, " + stats + "); the target was not touched");
            }
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException ignored) {
            // a leftover temporary directory is harmless; it is named .synapse-import-*
        }
    }
}
