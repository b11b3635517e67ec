package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import dev.synapsehub.core.PythonWhitespace;
import dev.synapsehub.core.board.BoardSnapshot;
import dev.synapsehub.core.board.BoardTask;
import dev.synapsehub.core.board.ProgressNote;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.command.LedgerProgressCommand;
import dev.synapsehub.core.command.LedgerTaskCommand;
import dev.synapsehub.core.command.LedgerTaskUpdateCommand;
import dev.synapsehub.core.command.ResourceOfferCommand;
import dev.synapsehub.core.reply.BoardTaskReply;
import dev.synapsehub.core.reply.ProgressNoteReply;
import dev.synapsehub.core.reply.Refusal;
import dev.synapsehub.core.reply.Reply;
import dev.synapsehub.core.reply.ResourceOfferReply;
import dev.synapsehub.core.resource.ResourceOffer;
import dev.synapsehub.net.extension.HubExtensions;
import dev.synapsehub.net.wire.FieldCoercion;
import dev.synapsehub.net.wire.HubFrames;
import dev.synapsehub.net.wire.WireJson;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * The shared board (contract §5.11–5.14), resource offers (§5.10) and capability cards
 * (§5.15–5.16). Board and resource mutations go through the actor and honour {@code idem_key}
 * (§4.6); live cards are edge memory (dropped on disconnect, 300 s liveness), persistent ones
 * are journaled.
 */
public final class BoardVerbs {
    private static final Pattern FINGERPRINT = Pattern.compile("[0-9a-f]{64}");
    private static final int MAX_PARENT_HUB_ID_BYTES = 512;

    private final VerbSupport support;
    private final CapabilityCards cards;
    private final CoordinationActor actor;
    private final Outbox outbox;
    private final HubFrames frames;
    private final WireJson json;
    private final HubExtensions extensions;
    /** Every board and resource verb's publisher: a grant broadcast, a refusal answered privately. */
    private final DecisionPublisher publisher = DecisionPublisher.typed(Reply.class,
            (d, reply) -> broadcastGrant(d),
            (d, refusal) -> denied(d.request(), refusal, d.at()));

    /** The board verbs; {@code extensions} scope and label the board read (a mesh reads it linearizably). */
    BoardVerbs(VerbSupport support, CapabilityCards cards, CoordinationActor actor, Outbox outbox, HubFrames frames,
            WireJson json, HubExtensions extensions) {
        this.support = support;
        this.cards = cards;
        this.actor = actor;
        this.outbox = outbox;
        this.frames = frames;
        this.json = json;
        this.extensions = extensions;
    }

    /** True for the verbs handled here. */
    public static boolean handles(String type) {
        switch (type) {
            case "ledger_task":
            case "ledger_task_update":
            case "ledger_progress":
            case "board_request":
            case "resource":
            case "resource_offer":
            case "offer_resource":
            case "advertise":
            case "card_remove":
            case "manifest_request":
                return true;
            default:
                return false;
        }
    }

    /** Handles one request (on the connection's event loop). */
    public void handle(Request r) {
        switch (r.type()) {
            case "ledger_task":
                ledgerTask(r);
                break;
            case "ledger_task_update":
                ledgerTaskUpdate(r);
                break;
            case "ledger_progress":
                ledgerProgress(r);
                break;
            case "board_request":
                boardRequest(r);
                break;
            case "resource":
            case "resource_offer":
            case "offer_resource":
                resource(r);
                break;
            case "advertise":
                cards.advertise(r, support);
                break;
            case "card_remove":
                cards.remove(r, support);
                break;
            case "manifest_request":
                cards.manifest(r, support);
                break;
            default:
                throw new IllegalArgumentException(r.type());
        }
    }

    // ------------------------------------------------------------------------------ board

    private void ledgerTask(Request r) {
        for (String field : List.of("task_id", "title", "description", "suggested_owner", "project")) {
            if (support.rejectNonText(r, field)) {
                return;
            }
        }
        List<String> deps = strings(r, "depends_on");
        if (deps == null) {
            return;
        }
        Long[] expected = new Long[1];
        String[] parent = new String[1];
        if (!boardCas(r, expected) || !causalParent(r, parent)) {
            return;
        }
        LedgerTaskCommand command = new LedgerTaskCommand(r.sender(), text(r, "task_id"), text(r, "title"),
                FieldCoercion.text(r.get("description")), deps, FieldCoercion.text(r.get("suggested_owner")),
                FieldCoercion.text(r.get("project")), expected[0], parent[0]);
        support.submit(r, command, true, renderer(r), publisher);
    }

    private void ledgerTaskUpdate(Request r) {
        for (String field : List.of("task_id", "status", "suggested_owner", "project")) {
            if (support.rejectNonText(r, field)) {
                return;
            }
        }
        Long[] expected = new Long[1];
        String[] parent = new String[1];
        if (!boardCas(r, expected) || !causalParent(r, parent)) {
            return;
        }
        LedgerTaskUpdateCommand command = new LedgerTaskUpdateCommand(r.sender(), text(r, "task_id"),
                FieldCoercion.text(r.get("status")), FieldCoercion.text(r.get("suggested_owner")),
                FieldCoercion.text(r.get("project")), expected[0], parent[0]);
        support.submit(r, command, true, renderer(r), publisher);
    }

    /**
     * Renders the frame a granted board or resource request is broadcast and stored with (the
     * stored first response of a keyed request, contract §4.6), from the verb's own success reply.
     */
    VerbSupport.GrantRenderer renderer(Request r) {
        switch (r.type()) {
            case "ledger_task":
                return VerbSupport.GrantRenderer.typed(BoardTaskReply.class,
                        (posted, at) -> taskFrame("ledger_task_posted", posted.task(), at));
            case "ledger_task_update":
                return VerbSupport.GrantRenderer.typed(BoardTaskReply.class,
                        (updated, at) -> taskFrame("ledger_task_updated", updated.task(), at));
            case "ledger_progress":
                return VerbSupport.GrantRenderer.typed(ProgressNoteReply.class,
                        (posted, at) -> progressFrame(posted.note()));
            case "resource":
            case "resource_offer":
            case "offer_resource":
                return VerbSupport.GrantRenderer.typed(ResourceOfferReply.class,
                        (offered, at) -> offered(offered.offer(), at));
            default:
                throw new IllegalArgumentException(r.type());
        }
    }

    /** Another mesh node's decision: a grant, as every connection but the requester's sees it. */
    void publishCommitted(CommittedDecision d) {
        if (d.reply().granted()) {
            broadcastGrant(d);
        }
    }

    /** Broadcasts a grant to every connection but the requester's (its session is null for another node's). */
    private void broadcastGrant(CommittedDecision d) {
        Request r = d.request();
        outbox.broadcast(d.storedResponse() != null ? d.storedResponse()
                : frames.write(renderer(r).render(d.reply(), d.at())), r.session());
    }

    private void ledgerProgress(Request r) {
        for (String field : List.of("task_id", "kind", "text")) {
            if (support.rejectNonText(r, field)) {
                return;
            }
        }
        String text = FieldCoercion.text(r.get("text"));
        if (text == null) {
            text = FieldCoercion.text(r.get("payload"));
        }
        LedgerProgressCommand command = new LedgerProgressCommand(r.sender(), text(r, "task_id"),
                FieldCoercion.text(r.get("kind")), text == null ? "" : text);
        support.submit(r, command, true, renderer(r), publisher);
    }

    private void boardRequest(Request r) {
        support.afterRead(r, "answering board_request", extensions.read(r,
                () -> actor.read(s -> new BoardRead(s.board().snapshot(), s.board().limits().taskCap()))),
                read -> {
                    ObjectNode f = boardSnapshot(r.sender(), read.snapshot(), read.taskCap(), support.now());
                    extensions.labelRead(f, r);
                    outbox.send(r.session(), f);
                });
    }

    /** The board as read on the writer, with the {@code --board-task-cap} in force (0: none). */
    private record BoardRead(BoardSnapshot snapshot, int taskCap) {
    }

    ObjectNode boardSnapshot(String requester, BoardSnapshot snapshot, double at) {
        return boardSnapshot(requester, snapshot, 0, at);
    }

    /** {@code board_snapshot} (§6.5); with a task cap, trimmed and with {@code total_tasks}, {@code truncated}, {@code task_cap}. */
    ObjectNode boardSnapshot(String requester, BoardSnapshot snapshot, int taskCap, double at) {
        ObjectNode f = frames.envelope(requester, "board_snapshot", "Board snapshot", at);
        ObjectNode board = f.putObject("board");
        ArrayNode tasks = board.putArray("tasks");
        List<BoardTask> listed = snapshot.capped(taskCap);
        for (BoardTask t : listed) {
            writeTask(tasks.addObject(), t);
        }
        HubFrames.putStrings(board, "ready", snapshot.ready());
        ArrayNode progress = board.putArray("progress");
        for (ProgressNote n : snapshot.progress()) {
            writeNote(progress.addObject(), n);
        }
        if (taskCap > 0) {
            board.put("total_tasks", snapshot.tasks().size());
            board.put("truncated", listed.size() < snapshot.tasks().size());
            board.put("task_cap", taskCap);
        }
        return f;
    }

    ObjectNode taskFrame(String type, BoardTask task, double at) {
        ObjectNode f = frames.envelope("all", type, "Board task " + task.taskId() + " (v" + task.version() + ")", at);
        writeTask(f.putObject("task"), task);
        return f;
    }

    /** Broadcast {@code ledger_progress_posted} for a stored note. */
    ObjectNode progressFrame(ProgressNote note) {
        return noteFrame("Progress from " + note.author(), note);
    }

    /** The assessment note a release with evidence posts (payload per contract §A11 R3). */
    ObjectNode assessmentFrame(String owner, ProgressNote note) {
        return noteFrame("Release receipt from " + owner, note);
    }

    private ObjectNode noteFrame(String payload, ProgressNote note) {
        ObjectNode f = frames.envelope("all", "ledger_progress_posted", payload, note.postedAt());
        writeNote(f.putObject("note"), note);
        return f;
    }

    static void writeTask(ObjectNode o, BoardTask t) {
        o.put("task_id", t.taskId());
        o.put("title", t.title());
        o.put("description", t.description());
        HubFrames.putStrings(o, "depends_on", t.dependsOn());
        o.put("status", t.status().wire());
        o.put("suggested_owner", t.suggestedOwner());
        o.put("project", t.project());
        o.put("version", t.version());
        o.put("created_by", t.createdBy());
        HubFrames.putFloat(o, "created_at", t.createdAt());
        HubFrames.putFloat(o, "updated_at", t.updatedAt());
    }

    static void writeNote(ObjectNode o, ProgressNote n) {
        o.put("task_id", n.taskId());
        o.put("author", n.author());
        o.put("kind", n.kind().wire());
        o.put("text", n.text());
        HubFrames.putFloat(o, "posted_at", n.postedAt());
    }

    // --------------------------------------------------------------------------- resources

    private void resource(Request r) {
        String kind = aliased(r, "kind", "resource_kind");
        String name = kind == null ? null : aliased(r, "name", "resource_name");
        if (kind == null || name == null) {
            return;
        }
        JsonNode meta = r.get("meta");
        if (meta != null && !meta.isNull() && !meta.isObject()) {
            support.malformed(r, "meta", "Field 'meta' must be an object.");
            return;
        }
        JsonNode cap = r.get("capacity");
        Integer capacity = null;
        if (cap != null && !cap.isNull()) {
            OptionalLong v = FieldCoercion.tolerantLong(cap);
            capacity = v.isPresent() ? (int) Math.max(1, Math.min(Integer.MAX_VALUE, v.getAsLong())) : null;
        }
        ResourceOfferCommand command = new ResourceOfferCommand(r.sender(), kind, name, capacity,
                meta == null || meta.isNull() ? "{}" : frames.write(meta.deepCopy()));
        support.submit(r, command, true, renderer(r), publisher);
    }

    private ObjectNode offered(ResourceOffer o, double at) {
        ObjectNode f = frames.envelope("all", "resource_offered", "Resource offered by " + o.agent(), at);
        f.put("agent", o.agent());
        f.put("kind", o.kind());
        f.put("name", o.name());
        f.put("key", o.key());
        return f;
    }

    /** The {@code state_snapshot.resources} entry. */
    void writeOffer(ObjectNode o, ResourceOffer offer) {
        o.put("agent", offer.agent());
        o.put("kind", offer.kind());
        o.put("name", offer.name());
        o.put("capacity", offer.capacity());
        o.putRawValue("meta", new RawValue(offer.meta()));
    }

    // ------------------------------------------------------------------------------ helpers

    private void denied(Request req, Reply.Denied d, double at) {
        ObjectNode e = frames.error(req.sender(), d.message(), at);
        e.put("error_code", d.refusal() == Refusal.QUOTA_EXCEEDED ? "quota_exceeded"
                : d.refusal().name().toLowerCase(Locale.ROOT));
        outbox.send(req.session(), e);
    }

    /** A required string under {@code name} or its alias, trimmed; null after a typed error. */
    private String aliased(Request r, String name, String alias) {
        JsonNode v = r.get(name);
        String field = name;
        if (v == null || v.isNull()) {
            v = r.get(alias);
            field = alias;
        }
        if (FieldCoercion.notText(v)) {
            support.malformed(r, field, "Field '" + field + "' must be a string.");
            return null;
        }
        String s = FieldCoercion.text(v);
        if (PythonWhitespace.isBlank(s)) {
            ObjectNode e = frames.error(r.sender(), "resource offer requires kind+name", support.now());
            e.put("error_code", name + "_required");
            outbox.send(r.session(), e);
            return null;
        }
        return PythonWhitespace.strip(s);
    }

    private static String text(Request r, String field) {
        String s = FieldCoercion.text(r.get(field));
        return s == null ? "" : PythonWhitespace.strip(s);
    }

    /** A string array (absent/null: empty); null after a typed error. */
    private List<String> strings(Request r, String field) {
        JsonNode v = r.get(field);
        List<String> out = new ArrayList<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isArray()) {
            support.malformed(r, field, "Field '" + field + "' must be an array of strings.");
            return null;
        }
        for (JsonNode e : v) {
            if (!e.isTextual()) {
                support.malformed(r, field, "Field '" + field + "' must be an array of strings.");
                return null;
            }
            out.add(e.textValue());
        }
        return out;
    }

    /** Board CAS (§4.5): a JSON integer or absent; false after the typed error. */
    private boolean boardCas(Request r, Long[] out) {
        JsonNode v = r.get("expected_version");
        if (v == null || v.isNull()) {
            return true;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            ObjectNode e = frames.error(r.sender(), "expected_version must be an integer.", support.now());
            e.put("error_code", "invalid_guard");
            e.put("field", "expected_version");
            outbox.send(r.session(), e);
            return false;
        }
        out[0] = v.longValue();
        return true;
    }

    /** {@code causal_parent} (§5.11): absent/"" or exactly the three valid members; false after the error. */
    private boolean causalParent(Request r, String[] out) {
        JsonNode v = r.get("causal_parent");
        if (v == null || v.isNull() || (v.isTextual() && v.textValue().isEmpty())) {
            return true;
        }
        boolean ok = v.isObject() && v.size() == 3;
        if (ok) {
            JsonNode hubId = v.get("hub_id");
            JsonNode seq = v.get("seq");
            JsonNode fp = v.get("event_fingerprint");
            ok = hubId != null && hubId.isTextual() && !hubId.textValue().isBlank()
                    && hubId.textValue().getBytes(StandardCharsets.UTF_8).length <= MAX_PARENT_HUB_ID_BYTES
                    && seq != null && seq.isIntegralNumber() && seq.canConvertToLong() && seq.longValue() >= 1
                    && fp != null && fp.isTextual() && FINGERPRINT.matcher(fp.textValue()).matches();
        }
        if (!ok) {
            support.malformed(r, "causal_parent",
                    "causal_parent must be {hub_id, seq, event_fingerprint} with a valid value for each.");
            return false;
        }
        ObjectNode parent = json.object();
        parent.put("hub_id", v.get("hub_id").textValue());
        parent.put("seq", v.get("seq").longValue());
        parent.put("event_fingerprint", v.get("event_fingerprint").textValue());
        out[0] = frames.write(parent);
        return true;
    }
}
